package extract

import (
	"cmp"
	"context"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/lexicon"
	"github.com/engram-memory/engram/internal/reading"
)

// Local is the default extractor: deterministic heuristics, no network,
// no state. The same Input always gives the same Draft. It is safe for
// concurrent use.
//
//   - Signals: the scan of signals.go over the user's text (and, for
//     decisions the user agreed to, the assistant's).
//   - Summary: the user's request (its first sentence or two), the outcome
//     (the first sentence or two of the assistant's final reply) and the
//     tools used, joined with " — ", at most maxSummary runes, in the
//     exchange's own words.
//   - Context: Content, head and tail kept when over MaxContext bytes.
//   - Entities: see entities.go.
//   - Type: correction > preference (preference, avoid, switch) > decision
//     > procedure (≥ 2 tool calls ending without an error, or a how-to
//     answered with steps) > fact > question (the user asks, no tool
//     work) > event.
//   - Importance: 0.15, plus the strongest signal (preference, avoid,
//     switch or correction 0.35, decision 0.30, fact 0.20), 0.05 per
//     further signal (at most 0.15) and 0.05 for a global one, plus
//     outcomes (files written 0.10 and a little more for several, an
//     error fixed 0.10, any tool work 0.05), plus up to 0.15 for length
//     (saturating: half of it at 3,000 bytes); halved for an
//     acknowledgement; in [0,1], rounded to 3 decimals.
//   - Scope: global when the exchange states at least one global
//     preference, avoidance or switch, no fewer global than project-scoped
//     preference-like signals, and at most twice as many project file
//     paths as global signals; project otherwise.
//   - Skip: the user's text is only an acknowledgement ("yes", "ok",
//     "thanks", "go on", "continue", "lgtm" …) and there are no signals and
//     no tool calls; or there is no text from either side and no file was
//     written (an empty tool round-trip, or nothing at all); or the user
//     said nothing, no tool ran and the reply is one short line (the
//     client's "No response requested." after a local command).
type Local struct {
	model *reading.Model         // the learned reading of sentences; nil: rules alone (see reading.go)
	vec   func(string) []float32 // a sentence's vector, for a model that reads one
	off   []bool                 // patterns left out, by index (WithoutRule)
	add   bool                   // the model's reading alone makes statements (WithAdd)
}

// Rules lists the rule scan's patterns, in the order they are tried: the
// kind of signal each makes and its pattern (see patternDefs).
func Rules() []string {
	out := make([]string, len(patternDefs))
	for i, d := range patternDefs {
		out[i] = d.kind + ": " + d.pat
	}
	return out
}

// WithoutRule returns a copy of the extractor that does not try the
// pattern Rules()[i]: what a rule earns is measured by leaving it out.
func (l *Local) WithoutRule(i int) *Local {
	c := *l
	c.off = make([]bool, len(patternDefs))
	copy(c.off, l.off)
	if i >= 0 && i < len(c.off) {
		c.off[i] = true
	}
	return &c
}

// NewLocal returns the local extractor, with the committed lexical
// reading.
func NewLocal() *Local { return &Local{model: reading.Lexical(), add: true} }

// Name implements Extractor.
func (*Local) Name() string { return "local" }

// maxSummary bounds Draft.Summary, in runes.
const maxSummary = 300

// Extract implements Extractor. It fails only when ctx is done.
func (l *Local) Extract(ctx context.Context, in Input) (Draft, error) {
	if err := ctx.Err(); err != nil {
		return Draft{}, err
	}
	blocks := in.Blocks
	if len(blocks) == 0 {
		blocks = parseContent(in.Content)
	}
	content := in.Content
	if content == "" {
		content = renderBlocks(blocks)
	}
	x := survey(blocks)

	sc := scanner{model: l.model, vec: l.vec, off: l.off, adds: l.add}
	for _, t := range x.own {
		sc.scanUser(t)
	}
	if agreement(x.own) {
		for _, t := range x.assistant {
			sc.scanAssistant(t)
		}
	}

	ents := newEntitySet(in.ProjectPath)
	for _, b := range blocks {
		if ents.full() {
			break
		}
		switch {
		case b.Kind == "tool_use":
			if b.Tool != "" {
				ents.tool(b.Tool, b.Text)
			} else {
				ents.plain(b.Text)
			}
		case b.Kind == "tool_result":
			ents.plain(b.Text)
		default:
			ents.text(b.Text)
		}
	}

	d := Draft{
		Summary:  summary(x),
		Context:  headTail(content, MaxContext),
		Entities: ents.result(),
		Signals:  sc.sigs,
	}
	// A tentative correction counts for nothing until consolidation finds
	// what it retires: the exchange is typed and weighed without it.
	sure := episode.Sure(sc.sigs)
	d.Type = episodeType(x, sure)
	d.Kind, d.Speculative, d.DueAt = episode.Classify(d.Type, sure, x.user, in.TurnAt, x.toolCalls > 0)
	trivial := ack(x.user)
	d.Importance = importance(x, sure, len(content), trivial)
	d.Scope = scope(sure, ents.projectPaths)
	d.Skip = trivial && len(sure) == 0 && x.toolCalls == 0 ||
		len(x.user) == 0 && len(x.assistant) == 0 && x.writes == 0 ||
		len(x.user) == 0 && x.toolCalls == 0 && len(strings.Join(x.assistant, " ")) <= maxBareReply
	return d, nil
}

// maxBareReply bounds a reply that, with no text from the user and no tool
// call, is no exchange worth a memory: the client's own filler after a
// local command ("No response requested."), a one-line acknowledgement.
const maxBareReply = 80

// StatedSignals returns the signals the user states in so many words in
// an exchange: the local scan of the user's text, what Local's drafts mark
// Stated.
func StatedSignals(in Input) []episode.Signal {
	blocks := in.Blocks
	if len(blocks) == 0 {
		blocks = parseContent(in.Content)
	}
	sc := scanner{model: reading.Lexical(), adds: true}
	for _, t := range survey(blocks).own {
		sc.scanUser(t)
	}
	var out []episode.Signal
	for _, s := range sc.sigs {
		if s.Stated {
			out = append(out, s)
		}
	}
	return out
}

// exchange is what survey found in the blocks.
type exchange struct {
	user []string // the user's text blocks, trimmed, non-empty
	// own are the user blocks the user wrote: not those the client wrote
	// in the user's name (a message from another session, a task's
	// notification: Block.Origin). Only these are read for statements.
	own       []string
	assistant []string // the assistant's
	tools     []string // tool names, first-seen order
	toolCalls int
	writes    int  // Write, Edit, MultiEdit, NotebookEdit calls
	errors    int  // tool errors
	fixed     bool // a tool error followed by a successful tool result
	lastErr   bool // the last tool result is an error
}

// final returns the assistant's final text reply.
func (x *exchange) final() string {
	if len(x.assistant) == 0 {
		return ""
	}
	return x.assistant[len(x.assistant)-1]
}

func survey(blocks []Block) exchange {
	var x exchange
	for _, b := range blocks {
		switch b.Kind {
		case "tool_use":
			x.toolCalls++
			name := b.Tool
			if name == "" {
				name = "tool"
			}
			found := false
			for _, t := range x.tools {
				if t == name {
					found = true
					break
				}
			}
			if !found {
				x.tools = append(x.tools, name)
			}
			switch b.Tool {
			case "Write", "Edit", "MultiEdit", "NotebookEdit":
				x.writes++
			}
		case "tool_result":
			if b.IsError {
				x.errors++
			} else if x.errors > 0 {
				x.fixed = true
			}
			x.lastErr = b.IsError
		default:
			t := strings.TrimSpace(b.Text)
			if t == "" {
				continue
			}
			if b.Role == "user" {
				x.user = append(x.user, t)
				if b.Origin == "" && !wrapped(t) {
					x.own = append(x.own, t)
				}
			} else {
				x.assistant = append(x.assistant, t)
			}
		}
	}
	return x
}

// ackWords make up acknowledgements ("ok thanks", "yes go ahead", "lgtm").
var ackWords = setOf("yes", "y", "yep", "yeah", "yup", "ya", "ok", "okay", "k", "kk", "sure", "thanks",
	"thank", "you", "thx", "ty", "tysm", "go", "on", "ahead", "continue", "lgtm", "looks", "good", "sounds",
	"great", "nice", "cool", "perfect", "done", "proceed", "please", "do", "it", "next", "keep", "going",
	"carry", "right", "alright", "fine", "awesome", "excellent", "agreed", "correct", "exactly", "np",
	"cheers", "that", "works", "sgtm", "yes,", "much", "so", "very", "wonderful", "amazing", "ack",
	"got", "gotcha", "understood", "noted", "cool,", "all", "set", "ship", "let's", "lets", "go,", "👍",
	"🙏", "✅", "👌", "🎉", "resume", "again", "more")

// ack reports user text that is only an acknowledgement.
func ack(user []string) bool {
	if len(user) == 0 {
		return false
	}
	n := 0
	for _, t := range user {
		if len(t) > 200 {
			return false
		}
		for _, f := range strings.Fields(strings.ToLower(t)) {
			f = strings.Trim(f, ".,;:!?()\"'`*~-\u2026")
			if f == "" {
				continue
			}
			if !ackWords[f] {
				return false
			}
			n++
		}
	}
	return n > 0 && n <= 8
}

// agreement reports a user prompt opening with assent ("yes", "sounds
// good", "go ahead"): the assistant's "I'll use X" then states a decision
// the user made.
func agreement(user []string) bool {
	if len(user) == 0 {
		return false
	}
	t := strings.ToLower(clipBytes(user[0], 64))
	words := strings.Fields(t)
	if len(words) == 0 {
		return false
	}
	switch strings.Trim(words[0], ".,;:!?") {
	case "yes", "yeah", "yep", "yup", "ok", "okay", "sure", "agreed", "lgtm", "perfect", "great", "exactly",
		"correct", "approved", "y", "absolutely", "definitely", "sgtm":
		return true
	}
	for _, p := range []string{"sounds good", "go ahead", "do it", "let's do it", "lets do it", "that works",
		"works for me", "makes sense", "go for it", "please do", "ship it", "let's go with", "i agree"} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// episodeType applies the precedence documented on Local.
func episodeType(x exchange, sigs []episode.Signal) string {
	var corr, pref, dec, fact bool
	for _, s := range sigs {
		switch s.Kind {
		case episode.SignalCorrection:
			corr = true
		case episode.SignalPreference, episode.SignalAvoid, episode.SignalSwitch:
			pref = true
		case episode.SignalDecision:
			dec = true
		case episode.SignalFact:
			fact = true
		}
	}
	switch {
	case corr:
		return episode.TypeCorrection
	case pref:
		return episode.TypePreference
	case dec:
		return episode.TypeDecision
	case x.toolCalls >= 2 && !x.lastErr, howTo(x.user) && listLines(x.final()) >= 2:
		return episode.TypeProcedure
	case fact:
		return episode.TypeFact
	case x.toolCalls == 0 && asks(x.user):
		return episode.TypeQuestion
	}
	return episode.TypeEvent
}

// howTo reports a user asking for a procedure.
func howTo(user []string) bool {
	for _, t := range user {
		l := strings.ToLower(clipBytes(t, 2<<10))
		for _, p := range []string{"how to ", "how do i", "how can i", "how should i", "steps", "step by step",
			"walk me through", "procedure", "instructions"} {
			if strings.Contains(l, p) {
				return true
			}
		}
	}
	return false
}

// listLines counts the numbered or bulleted lines of s.
func listLines(s string) int {
	n := 0
	for line := range strings.Lines(s) {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		if f[0] == "-" || f[0] == "*" || numberedItem(f[0]) {
			n++
		}
	}
	return n
}

// asks reports a user prompt that is a question.
func asks(user []string) bool {
	if len(user) == 0 {
		return false
	}
	t := user[0]
	if strings.HasSuffix(strings.TrimRight(t, " \n\t)\"'"), "?") {
		return true
	}
	t = clipBytes(t, 1<<10)
	m := prepare(t)
	ss := sentences(m)
	if len(ss) == 0 {
		return false
	}
	toks := tokenize(m, t, ss[0][0], ss[0][1])
	if len(toks) == 0 {
		return false
	}
	if isQuestion(m, ss[0][0], ss[0][1], toks) {
		return true
	}
	switch toks[0].w {
	case "what", "how", "where", "which", "who", "when":
		return true
	}
	return false
}

// Importance weights. Signals raise it most (a stated preference or
// correction is what memory is for), then outcomes (files written, an
// error fixed, tool work), then length, saturating; an acknowledgement
// halves it.
const (
	impBase       = 0.15
	impPreference = 0.35 // preference, avoid, switch, correction
	impDecision   = 0.30
	impFact       = 0.20
	impExtraSig   = 0.05 // per further signal, up to impExtraMax
	impExtraMax   = 0.15
	impGlobal     = 0.05
	impWrite      = 0.10 // first file written; +0.02 per further one, up to 0.06
	impFixed      = 0.10
	impTools      = 0.05
	impLength     = 0.15 // × n/(n+impLengthHalf)
	impLengthHalf = 3000
)

// importance scores an exchange in [0,1], rounded to 3 decimals.
func importance(x exchange, sigs []episode.Signal, contentLen int, trivial bool) float64 {
	v := impBase
	best, global := 0.0, false
	for _, s := range sigs {
		w := 0.0
		switch s.Kind {
		case episode.SignalPreference, episode.SignalAvoid, episode.SignalSwitch, episode.SignalCorrection:
			w = impPreference
		case episode.SignalDecision:
			w = impDecision
		case episode.SignalFact:
			w = impFact
		}
		best = max(best, w)
		global = global || s.Global
	}
	v += best
	if len(sigs) > 1 {
		v += min(impExtraMax, impExtraSig*float64(len(sigs)-1))
	}
	if global {
		v += impGlobal
	}
	if x.writes > 0 {
		v += impWrite + min(0.06, 0.02*float64(x.writes-1))
	}
	if x.fixed {
		v += impFixed
	}
	if x.toolCalls > 0 {
		v += impTools
	}
	n := float64(contentLen)
	v += impLength * n / (n + impLengthHalf)
	if trivial {
		v /= 2
	}
	v = min(max(v, 0), 1)
	return math.Round(v*1000) / 1000
}

// scope applies the rule documented on Local.
func scope(sigs []episode.Signal, projectPaths int) string {
	global, project := 0, 0
	for _, s := range sigs {
		if lexicon.NoContent(s.Subject) != "" {
			// "use option 2", "fix #91": a one-off answer to the
			// assistant, no habit of the user's to make the exchange
			// global.
			continue
		}
		switch s.Kind {
		case episode.SignalPreference, episode.SignalAvoid, episode.SignalSwitch:
			if s.Global {
				global++
			} else {
				project++
			}
		case episode.SignalDecision:
			if !s.Global {
				project++
			}
		}
	}
	if global > 0 && global >= project && projectPaths <= 2*global {
		return episode.ScopeGlobal
	}
	return episode.ScopeProject
}

// summary builds the extractive summary: request — outcome — tools.
func summary(x exchange) string {
	tools := ""
	if len(x.tools) > 0 {
		tools = clipRunes("used "+strings.Join(x.tools, ", "), 60)
	}
	req, out := "", ""
	if len(x.user) > 0 {
		req = proseOf(clipBytes(x.user[0], 4<<10))
	}
	if f := x.final(); f != "" {
		out = proseOf(clipBytes(f, 4<<10))
	}
	if req == "" && out == "" {
		return tools
	}
	avail := maxSummary - utf8.RuneCountInString(tools)
	if tools != "" {
		avail -= 3
	}
	if req != "" && out != "" {
		avail -= 3
	}
	reqS, outS := leadSentences(req), leadSentences(out)
	ur, or := utf8.RuneCountInString(reqS), utf8.RuneCountInString(outS)
	if ur+or > avail {
		// Each side gets half; what one does not need goes to the other.
		half := avail / 2
		switch {
		case ur <= half:
			outS = clipAtWord(outS, avail-ur)
		case or <= half:
			reqS = clipAtWord(reqS, avail-or)
		default:
			reqS = clipAtWord(reqS, half)
			outS = clipAtWord(outS, avail-utf8.RuneCountInString(reqS))
		}
	}
	var parts []string
	for _, p := range []string{reqS, outS, tools} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return clipRunes(strings.Join(parts, " — "), maxSummary)
}

// proseOf returns text as one line of prose: code blocks and markdown
// markers dropped, white space collapsed.
func proseOf(text string) string {
	var b strings.Builder
	inFence := false
	for line := range strings.Lines(text) {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			inFence = !inFence
			continue
		}
		if inFence || t == "" {
			continue
		}
		t = strings.TrimLeft(t, "#>")
		t = strings.TrimSpace(t)
		if strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* ") {
			t = t[2:]
		}
		if b.Len() > 0 {
			// A line without closing punctuation ends a sentence anyway.
			if prev := b.String(); !strings.ContainsRune(".!?:;", rune(prev[len(prev)-1])) {
				b.WriteString(".")
			}
			b.WriteByte(' ')
		}
		b.WriteString(t)
	}
	s := b.String()
	if strings.ContainsAny(s, "`*") {
		s = markdownMarks.Replace(s)
	}
	return collapseSpace(s)
}

var markdownMarks = strings.NewReplacer("**", "", "__", "", "`", "")

// leadSentences returns the first sentence of s, and the next ones while
// the result is shorter than 40 runes.
func leadSentences(s string) string {
	end := 0
	for end < len(s) {
		i := sentenceEnd(s, end)
		end = i
		if utf8.RuneCountInString(s[:end]) >= 40 {
			break
		}
	}
	return strings.TrimSpace(s[:end])
}

// sentenceEnd returns the end of the sentence starting at i in s.
func sentenceEnd(s string, i int) int {
	for j := i; j < len(s); j++ {
		c := s[j]
		if (c == '.' || c == '!' || c == '?') && (j+1 == len(s) || s[j+1] == ' ') {
			if c == '.' {
				ws := j
				for ws > i && s[ws-1] != ' ' {
					ws--
				}
				if abbrevs[strings.ToLower(s[ws:j])] {
					continue
				}
			}
			return j + 1
		}
	}
	return len(s)
}

// clipAtWord cuts s to at most n runes at a word boundary, ending it with
// "…" when cut.
func clipAtWord(s string, n int) string {
	if n <= 1 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	c := clipRunes(s, n) // ends with "…"
	body := strings.TrimSuffix(c, "…")
	if i := strings.LastIndexByte(body, ' '); i > len(body)/2 {
		body = body[:i]
	}
	return strings.TrimRight(body, " ,;:-—") + "…"
}

// headTail bounds s to n bytes, keeping its head (two thirds) and tail
// around a marker, on rune boundaries.
func headTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	marker := "\n[… " + strconv.Itoa(len(s)) + " bytes omitted …]\n" // an upper bound of its length
	room := n - len(marker)
	if room <= 0 {
		return clipBytes(s, n)
	}
	head := clipBytes(s, room*2/3)
	tail := len(s) - (room - len(head))
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return head + "\n[… " + strconv.Itoa(tail-len(head)) + " bytes omitted …]\n" + s[tail:]
}

// parseContent recovers blocks from rendered Content, for inputs without
// Blocks: paragraphs opening with "User:", "Assistant:", "Assistant used
// X:", "Tool result (X):" or "Tool error (X):" start a block; other
// paragraphs continue the previous one.
func parseContent(content string) []Block {
	var blocks []Block
	for _, para := range strings.Split(content, "\n\n") {
		b, ok := labelled(para)
		if !ok {
			if len(blocks) == 0 {
				blocks = append(blocks, Block{Role: "user", Kind: "text", Text: para})
			} else {
				blocks[len(blocks)-1].Text += "\n\n" + para
			}
			continue
		}
		blocks = append(blocks, b)
	}
	return blocks
}

// labelled parses a paragraph's label.
func labelled(p string) (Block, bool) {
	head, rest, _ := strings.Cut(p, ":")
	if i := strings.IndexByte(head, '\n'); i >= 0 {
		return Block{}, false
	}
	rest = strings.TrimPrefix(rest, " ")
	switch {
	case head == "User" || p == "User":
		return Block{Role: "user", Kind: "text", Text: rest}, true
	case head == "Assistant" || p == "Assistant":
		return Block{Role: "assistant", Kind: "text", Text: rest}, true
	case strings.HasPrefix(head, "Assistant used "):
		return Block{Role: "assistant", Kind: "tool_use", Tool: strings.TrimPrefix(head, "Assistant used "), Text: rest}, true
	case strings.HasPrefix(head, "Tool result") || strings.HasPrefix(head, "Tool error"):
		tool := ""
		if i, j := strings.IndexByte(head, '('), strings.LastIndexByte(head, ')'); i >= 0 && j > i {
			tool = head[i+1 : j]
		}
		return Block{Role: "user", Kind: "tool_result", Tool: tool, Text: rest,
			IsError: strings.HasPrefix(head, "Tool error")}, true
	}
	return Block{}, false
}

// renderBlocks renders blocks as transcript.Render does, for inputs
// without Content.
func renderBlocks(blocks []Block) string {
	var b strings.Builder
	var tools map[string]string // tool_use id → tool name
	for _, bl := range blocks {
		if bl.Kind == "tool_use" && bl.ToolUseID != "" {
			if tools == nil {
				tools = map[string]string{}
			}
			tools[bl.ToolUseID] = bl.Tool
		}
		label := ""
		switch bl.Kind {
		case "tool_use":
			label = "Assistant used " + bl.Tool
		case "tool_result":
			label = "Tool result"
			if bl.IsError {
				label = "Tool error"
			}
			if name := cmp.Or(bl.Tool, tools[bl.ToolUseID]); name != "" {
				label += " (" + name + ")"
			}
		default:
			label = "Assistant"
			if bl.Role == "user" {
				label = "User"
			}
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(label)
		if bl.Text != "" {
			b.WriteString(": ")
			b.WriteString(bl.Text)
		}
	}
	return b.String()
}

// clipWords cuts s to at most n bytes at a word boundary.
func clipWords(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if i := strings.LastIndexByte(s[:n+1], ' '); i > 0 {
		return s[:i]
	}
	return clipBytes(s, n)
}

// clipBytes cuts s to at most n bytes on a rune boundary.
func clipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// clipRunes cuts s to at most n runes, ending it with "…" when cut.
func clipRunes(s string, n int) string {
	if len(s) <= n || utf8.RuneCountInString(s) <= n {
		return s
	}
	i, k := 0, 0
	for i < len(s) && k < n-1 {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		k++
	}
	return strings.TrimRight(s[:i], " ") + "…"
}

// collapseSpace replaces runs of white space with one space and trims.
func collapseSpace(s string) string {
	clean := true
	prevSpace := true
	for i := 0; i < len(s); i++ {
		sp := isSpace(s[i])
		if sp && (prevSpace || s[i] != ' ') {
			clean = false
			break
		}
		prevSpace = sp
	}
	if clean && !prevSpace {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// setOf makes a lookup set of words.
func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// wrapped reports whether a user text opens with an element of markup, a
// line <name …> among its first two lines closed by </name>, or is mostly
// such elements: the wrapper the client or a program puts around what it
// writes in the user's name (another session's message, a task's
// notification, a command's output), whatever explanation follows it, a
// transcript pasted into a prompt, or pasted markup. Either way, material:
// not the user's own statement.
func wrapped(t string) bool {
	if mostlyMarkup(t) {
		return true
	}
	start := 0
	for line := 0; line < 2 && start < len(t); line++ {
		end := strings.IndexByte(t[start:], '\n')
		if end < 0 {
			end = len(t)
		} else {
			end += start
		}
		if name := openTag(t[start:end]); name != "" && strings.Contains(t[end:], "</"+name+">") ||
			name != "" && strings.Contains(t[start:end], "</"+name+">") {
			return true
		}
		start = end + 1
	}
	return false
}

// openTag returns the name of the element a line opens with ("" for none).
func openTag(line string) string {
	if len(line) < 3 || line[0] != '<' {
		return ""
	}
	j := 1
	for j < len(line) && (line[j] >= 'a' && line[j] <= 'z' || line[j] == '-' || line[j] == '_' || line[j] >= '0' && line[j] <= '9') {
		j++
	}
	if j == 1 || j >= len(line) || line[j] != '>' && line[j] != ' ' {
		return ""
	}
	return line[1:j]
}

// mostlyMarkup reports whether an element opened at the start of a line
// runs, to its last </name>, over at least half of t.
func mostlyMarkup(t string) bool {
	for off := 0; off < len(t); {
		i := strings.IndexByte(t[off:], '<')
		if i < 0 {
			return false
		}
		i += off
		off = i + 1
		if i > 0 && t[i-1] != '\n' {
			continue
		}
		end := strings.IndexByte(t[i:], '\n')
		if end < 0 {
			end = len(t) - i
		}
		name := openTag(t[i : i+end])
		if name == "" {
			continue
		}
		closing := "</" + name + ">"
		if k := strings.LastIndex(t, closing); k > i && 2*(k+len(closing)-i) >= len(t) {
			return true
		}
	}
	return false
}
