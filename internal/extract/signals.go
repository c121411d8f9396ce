package extract

import (
	"bytes"
	"cmp"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/reading"
)

// The signal scan finds preferences, avoidances, switches, corrections,
// decisions and facts in what the user wrote. It works on words, not on
// regular expressions: a text is split into sentences, a sentence into
// clauses (at commas, semicolons, colons, dashes and at "and", "but", "or",
// "so", "because" …), and word patterns are matched inside each clause.
//
// What is scanned: the user's text blocks. Code fences, block quotes and
// the inside of inline code are masked first, so code is never read as a
// statement (an inline code span still counts as one opaque word, so that
// "never use `testify`" works). Questions are skipped ("should we always
// use X?"), except polite requests ("can you always use X?"); so are
// conditional clauses ("if you prefer X"). The assistant's text is only
// scanned for decisions ("I'll use X"), and only when the user's prompt in
// the same turn agreed ("yes", "sounds good", "go ahead"): the assistant's
// "I prefer" is never the user's.
//
// A positive pattern is ignored when a negation ("not", "don't", "never" …),
// a hedge ("could", "maybe", "if" …) or reported speech ("you said") comes
// within the three words before it in the same clause, so "I don't like X"
// can only ever give avoid(X), and "we could always use X" gives nothing.
//
// Subjects are normalised (see normSubject) so that the same preference in
// different words gets the same Subject.
//
// Global: a signal is global when its sentence says so ("in general", "in
// all my projects", "everywhere"); project-scoped when it names this
// codebase ("in this repo", "here", "this service", "our codebase", "the
// repo", generated code); otherwise by who speaks: the user's own habits
// and taste — first person singular ("I prefer", "I never", "my go-to",
// inherited by later clauses of the same sentence) and imperatives ("never
// add emoji to commit messages") — are global; the first person plural
// ("we use pnpm", "we're a pnpm shop") speaks for the team and the
// codebase: project. Switches, corrections and facts are project-scoped
// unless the user speaks of themself ("I switched to Helix", "I'm on
// macOS"); a switch and the preference it states share one scope.
//
// Stated: every signal found in the user's own text, decisions aside, is
// Stated; such a signal becomes a belief at once (package consolidate).
//
// The labelled corpus in testdata/speech measures all this (package
// corpus, `go run ./bench/corpus`).

// maxSignals bounds the signals of one exchange.
const maxSignals = 24

// maxSignalText bounds Signal.Text, in runes.
const maxSignalText = 200

// Scan bounds: statements are short, and a pasted log or file is no
// statement. Only the first maxScanUser bytes of a user text block (and
// maxScanAssistant of an assistant one) are scanned, and a clause longer
// than maxClause words is skipped.
const (
	maxScanUser      = 16 << 10
	maxScanAssistant = 8 << 10
	maxClause        = 64
)

// token is one word of a sentence.
type token struct {
	w          string // lower-cased (ASCII), apostrophes straightened, edge punctuation trimmed; "`" for inline code
	start, end int    // byte offsets of the trimmed word in the original text
	rawStart   int    // offset of the untrimmed word (fact values keep their brackets)
	rawEnd     int
	sep        bool // a clause separator (, ; : or a dash) follows the word
}

// emitKind says what a matched pattern produces.
type emitKind int

const (
	emitPref        emitKind = iota // preference X (purpose "for Y" → Object)
	emitPrefOver                    // preference X, avoid Y ("X over Y", "X rather than Y")
	emitAvoid                       // avoid X
	emitNoX                         // avoid X for "no X": needs "please" in the clause or "no more"
	emitDont                        // "don't VERB X": depends on the verb
	emitNever                       // "never X": like emitDont, and not before a past tense
	emitSwitch                      // switch X→Y, preference Y
	emitSwitchTo                    // switch →Y (X unknown), preference Y
	emitSwitchAway                  // switch away from X ("stop using X")
	emitSwitchIns                   // switch X→Y for "use Y instead of X": Y is the first slot
	emitInstead                     // preference X, avoid Y ("use X instead of Y": a choice, not a change)
	emitInsteadRev                  // preference Y, avoid X ("instead of X, use Y")
	emitInsteadBare                 // preference X, avoid Y for a bare "X instead of Y", "X, not Y"
	emitDecision                    // decision X (polarity from "not")
	emitDecisionNo                  // decision against X ("let's not X")
	emitFact                        // fact X = Y
	emitFactAs                      // fact NAME = Y, NAME fixed by the pattern ("deploys to Y")
	emitUser                        // fact about the user: "I'm X", "I have X"
	emitFollow                      // fact about the user: "I follow a vegan diet"
	emitOnly                        // preference X for "X only" closing a clause
	emitPlease                      // preference X for a bare "X please"
	emitBe                          // preference X for "be X" ("be concise")
	emitUse                         // preference X for a plain "use X": not a specific thing ("use the helper")
	emitKeepAdj                     // preference "ADJ N" for "keep N ADJ"
	emitFactPath                    // fact X = Y when Y is a path or URL
)

// pelem is one element of a pattern.
type pelem struct {
	alts  [][]string      // literal alternatives, each a word sequence; nil for a slot
	first map[string]bool // the first words of alts, to fail fast
	slot  byte            // 'X' or 'Y' (one or more words) or 'A' (zero or more adverbs)
	opt   bool            // an optional literal
}

// pattern is one compiled word pattern.
type pattern struct {
	kind  string // episode.Signal* kind of the main signal
	emit  emitKind
	prev  map[string]bool // allowed word before the match ("" = clause start); nil = any
	elems []pelem
	// assistant: the pattern is also used on the assistant's text (the
	// decisions that need no context: "let's use X", "I'll use X").
	assistant bool
}

// Previous-word sets. "imp" admits imperatives and statements in the first
// or second person ("please always", "you should never", "I avoid"); it
// keeps out descriptions ("it always fails", "tests never pass").
var (
	prevImp = setOf("", "please", "pls", "plz", "kindly", "i", "we", "you", "should", "must", "shall", "will",
		"i'll", "we'll", "you'll", "let's", "lets", "and", "so", "then", "just", "also", "always", "to",
		"but", "ok", "okay", "yes", "yeah", "now", "really", "definitely", "generally", "usually",
		"typically", "normally", "personally", "actually", "ideally", "still", "i'd", "we'd", "you'd",
		"strictly", "absolutely", "only", "simply", "ever")
	prevPron  = setOf("", "i", "we", "you", "really", "just")
	prevFirst = setOf("i", "we")
	// prevSure: "make sure to X" is a standing rule, but "I'll make sure to
	// have a safe trip" a plan.
	prevSure = func() map[string]bool {
		m := maps.Clone(prevImp)
		for _, w := range []string{"i'll", "we'll", "you'll", "will", "shall"} {
			delete(m, w)
		}
		return m
	}()
	prevBe      = setOf("", "please", "always", "just", "also", "and", "so", "pls", "plz")
	prevStart   = setOf("")
	prevDecided = setOf("", "we", "i", "we've", "i've", "have", "has", "just", "finally", "already", "all",
		"team", "both", "they", "together", "and")
	prevSwitched = setOf("", "i", "we", "i've", "we've", "have", "has", "just", "recently", "finally", "all",
		"already", "eventually", "and", "team")
	prevSwitch    = setOf("let's", "lets", "we'll", "i'll", "we", "i", "should", "must", "to", "please", "")
	prevSwitching = setOf("we're", "i'm", "are", "am", "currently", "slowly", "now")
	prevGoing     = setOf("", "we're", "i'm", "are", "am", "we", "i", "just", "so", "then")
)

// patternDefs lists the patterns, most specific first: when several
// patterns match at the same word only the first one counts.
var patternDefs = []struct {
	kind string
	emit emitKind
	prev map[string]bool
	pat  string
}{
	// Preferences.
	{episode.SignalPreference, emitInstead, nil, "use|uses|using|prefer|prefers|choose|pick|try X instead_of|rather_than Y"},
	{episode.SignalPreference, emitInsteadRev, prevStart, "instead_of|rather_than X use|go_with|prefer|choose|pick|try Y"},
	{episode.SignalPreference, emitInsteadBare, prevStart, "X instead_of|rather_than|not Y"},
	{episode.SignalAvoid, emitAvoid, nil, "i A prefer not [to] X"},
	{episode.SignalAvoid, emitAvoid, nil, "i A prefer|like|try|tend|want to avoid|stay_away_from|steer_clear_of X"},
	{episode.SignalAvoid, emitAvoid, nil, "i A have|have_got [a|an] [strong|deep|real|intense|severe|serious|deep-seated|general|great|big|huge|natural|personal|absolute|strict|extreme|ethical|moral] aversion|dislike|distaste|objection to|for|of|towards X"},
	{episode.SignalPreference, emitPref, nil, "i A have|have_got [a|an] [strong|clear|definite|real|great|big|huge|personal|general|natural|absolute|strict] preference|liking|fondness for X"},
	{episode.SignalAvoid, emitAvoid, nil, "i'm|i_am A not interested in X"},
	{episode.SignalAvoid, emitAvoid, nil, "i'd|i_would A prefer not [to] X"},
	{episode.SignalAvoid, emitAvoid, nil, "i'm|i_am not [a] [big|huge] fan of X"},
	{episode.SignalPreference, emitPrefOver, nil, "i A prefer X over|rather_than|instead_of|than|not|to Y"},
	{episode.SignalPreference, emitPrefOver, nil, "i A love X over|rather_than|instead_of|than|not Y"},
	{episode.SignalPreference, emitPref, nil, "i A prefer|love X"},
	{episode.SignalAvoid, emitAvoid, nil, "i'd|i_would A rather not X"},
	{episode.SignalPreference, emitPrefOver, nil, "i'd|i_would A rather|prefer X than|over|instead_of|rather_than Y"},
	{episode.SignalPreference, emitPref, nil, "i'd|i_would A rather|prefer X"},
	{episode.SignalPreference, emitKeepAdj, nil, "i A like|want|prefer|keep my X"},
	{episode.SignalPreference, emitPrefOver, nil, "i A like|love|enjoy X better_than|more_than Y"},
	{episode.SignalPreference, emitPref, nil, "i A like|enjoy X"},
	{episode.SignalPreference, emitUse, nil, "i A want|need X"},
	{episode.SignalPreference, emitPref, nil, "i A go_with|reach_for|tend_to_use|tend_to_go_with|stick_with|stick_to X"},
	{episode.SignalPreference, emitPref, nil, "i A learn|work|study|focus|do best|better through|with|by|in|using X"},
	{episode.SignalPreference, emitPref, nil, "i'm|i_am A [a] [big|huge] fan of X"},
	{episode.SignalPreference, emitPref, nil, "i'm|i_am A [more|super|so|totally|pretty] into X"},
	{episode.SignalPreference, emitPref, nil, "my preference is [to|for] X"},
	{episode.SignalPreference, emitPref, prevStart, "X is|are what i A prefer|like|want|use"},
	{episode.SignalPreference, emitPref, nil, "we're|we_are a|an X shop|house|team"},
	{episode.SignalPreference, emitPref, prevStart, "this|our|the project|repo|repository|codebase|service|team|app|monorepo A uses|follows|prefers|sticks_to|sticks_with X"},
	{episode.SignalPreference, emitPref, prevStart, "our|the convention|standard|rule|policy [here] is [to] X"},
	{episode.SignalPreference, emitPref, nil, "my|our go-to|go_to|favorite|favourite|default [tool|choice|option] is X"},
	{episode.SignalPreference, emitPref, prevStart, "X is|are my|our go-to|go_to|favorite|favourite|preference|default"},
	{episode.SignalPreference, emitPrefOver, prevImp, "use X not|over Y"},
	{episode.SignalPreference, emitPref, prevImp, "use X for Y"},
	{episode.SignalPreference, emitPref, prevImp, "only use X"},
	{episode.SignalPreference, emitPref, nil, "we A use X"},
	{episode.SignalPreference, emitUse, prevImp, "use X"},
	{episode.SignalAvoid, emitAvoid, prevImp, "keep X out_of Y"},
	{episode.SignalPreference, emitKeepAdj, prevImp, "keep X"},
	{episode.SignalPreference, emitBe, prevBe, "be X"},
	{episode.SignalPreference, emitOnly, prevStart, "X only"},
	{episode.SignalPreference, emitPlease, prevStart, "X please"},
	{episode.SignalPreference, emitPref, prevImp, "stick with|to X"},
	{episode.SignalPreference, emitPref, prevSure, "make sure to X"},
	{episode.SignalPreference, emitPref, prevSure, "make sure [that] you|we X"},
	{episode.SignalPreference, emitPref, prevImp, "keep using X"},
	{episode.SignalPreference, emitPrefOver, prevImp, "prefer X over|rather_than|instead_of|not|to Y"},
	{episode.SignalPreference, emitPref, prevImp, "prefer X"},
	{episode.SignalPreference, emitPref, prevImp, "default to X"},
	{episode.SignalPreference, emitPref, prevImp, "always X"},
	{episode.SignalPreference, emitPref, prevFirst, "only|exclusively X"},

	// Avoidance.
	{episode.SignalAvoid, emitNever, prevImp, "never X"},
	{episode.SignalAvoid, emitDont, prevImp, "don't|dont|do_not X"},
	{episode.SignalAvoid, emitDont, prevPron, "shouldn't|should_not|mustn't|must_not X"},
	{episode.SignalAvoid, emitAvoid, prevImp, "avoid X"},
	{episode.SignalAvoid, emitAvoid, prevImp, "omit|leave_out X"},
	{episode.SignalAvoid, emitAvoid, prevSwitching, "not using|use X"},
	{episode.SignalAvoid, emitAvoid, nil, "i A hate|dislike|detest|loathe|despise X"},
	{episode.SignalAvoid, emitAvoid, prevImp, "refuse to X"},
	{episode.SignalAvoid, emitAvoid, nil, "i'm|i_am A not comfortable with|around X"},
	{episode.SignalAvoid, emitAvoid, nil, "i'm|i_am A uncomfortable with|around X"},
	{episode.SignalAvoid, emitAvoid, nil, "i can't|cannot|can_not stand X"},
	{episode.SignalAvoid, emitNoX, prevStart, "no more X"},
	{episode.SignalAvoid, emitNoX, prevStart, "no X"},

	// Switches.
	{episode.SignalSwitch, emitSwitch, nil, "switch|switched|switching|move|moved|moving|migrate|migrated|migrating|change|changed|changing|convert|converted|converting|port|ported|porting|went|go from|off|away_from X to Y"},
	{episode.SignalSwitch, emitSwitchTo, prevSwitched, "switched|migrated|moved|transitioned|changed_over to Y"},
	{episode.SignalSwitch, emitSwitchTo, prevSwitch, "switch|migrate|move|transition to Y"},
	{episode.SignalSwitch, emitSwitchTo, prevSwitching, "switching|migrating|moving|transitioning to Y"},
	{episode.SignalSwitch, emitSwitchAway, prevImp, "stop|quit using X"},
	{episode.SignalSwitch, emitSwitchAway, prevSwitched, "stopped|quit using X"},
	{episode.SignalSwitch, emitSwitchAway, nil, "no_longer use|using X"},
	{episode.SignalSwitch, emitSwitchAway, nil, "no_longer X"},
	{episode.SignalSwitch, emitSwitch, prevSwitched, "dropped|ditched|abandoned X for|in_favor_of|in_favour_of Y"},
	{episode.SignalSwitch, emitSwitchAway, prevSwitched, "dropped|ditched|abandoned|got_rid_of X"},
	{episode.SignalSwitch, emitSwitchAway, prevStart, "not X anymore|any_more"},
	{episode.SignalSwitch, emitSwitchAway, prevImp, "stop X"},
	{episode.SignalSwitch, emitSwitch, prevImp, "replace|replaced|replacing X with|by Y"},
	{episode.SignalPreference, emitPref, prevImp, "use X instead"},

	// Decisions.
	{episode.SignalDecision, emitDecisionNo, nil, "let's|lets|let_us not X"},
	{episode.SignalDecision, emitDecision, nil, "let's|lets|let_us go_with|use|pick|choose|adopt|settle_on|keep|stick_with X"},
	{episode.SignalDecision, emitDecision, nil, "we'll|we_will|i'll|i_will|we're_going_to|we_are_going_to|i'm_going_to|i_am_going_to A use|go_with|adopt|pick|choose X"},
	{episode.SignalDecision, emitDecision, prevDecided, "decided|agreed [to|on|that] X"},
	{episode.SignalDecision, emitDecision, prevDecided, "settled on X"},
	{episode.SignalDecision, emitDecision, prevDecided, "went with X"},
	{episode.SignalDecision, emitDecision, prevImp, "go with X"},
	{episode.SignalDecision, emitDecision, prevGoing, "going with X"},
	{episode.SignalDecision, emitDecision, prevStart, "the|our plan|decision is [to] X"},

	// Facts.
	{episode.SignalFact, emitUser, prevStart, "i'm|i_am|i_have|i've_got X"},
	{episode.SignalFact, emitFollow, prevStart, "i A follow|observe|keep|maintain|adhere_to X"},
	{episode.SignalFact, emitFactAs, prevStart, "X deploys|deploy|deployed|ships|is_deployed|are_deployed|gets_deployed|get_deployed|goes|go to|on|into Y"},
	{episode.SignalFact, emitFactAs, prevStart, "X deploys|deploy|deployed|ships|is_deployed|are_deployed|goes|go|run|runs|happen|happens with|via|through|using Y"},
	{episode.SignalFact, emitFactAs, prevStart, "X is_hosted|are_hosted|host|hosts on|at|by Y"},
	{episode.SignalFact, emitFactAs, nil, "we|i A host|deploy|ship the|our|it X on|to|at Y"},
	{episode.SignalFact, emitFact, prevStart, "X runs|run on|in Y"},
	{episode.SignalFact, emitFactPath, prevStart, "X go|goes|get_written|are_written|is_written|get_logged|are_logged|is_logged to Y"},
	{episode.SignalFact, emitFactAs, prevStart, "X build|builds|is_built|are_built with|using Y"},
	{episode.SignalFact, emitFactAs, prevStart, "X release|releases|ship on|every Y"},
	{episode.SignalFact, emitFactAs, prevStart, "X is_licensed|are_licensed under Y"},
	{episode.SignalFact, emitFact, prevStart, "the|our|my X is_written_in|are_written_in|lives_in|live_in|lives_under|live_under Y"},
	{episode.SignalFact, emitFact, prevStart, "the|our|my X is_hosted_on|is_deployed_to|is_deployed_on|is_located_at|is_at|is_in|is_on|is_called|is_named|are_at|are_in|runs_on|run_on|lives_in|live_in|lives_at|listens_on|uses|is|are Y"},
	{episode.SignalFact, emitFactPath, prevStart, "X is|are|lives|live|runs|run at|in|under|on Y"},
}

// patterns holds the compiled patternDefs; byFirst indexes them by their
// first word (patterns starting with a slot are tried at clause start only).
var (
	patterns  []pattern
	byFirst   map[string][]int
	slotFirst []int
)

func init() {
	byFirst = map[string][]int{}
	for i, d := range patternDefs {
		p := pattern{kind: d.kind, emit: d.emit, prev: d.prev}
		for _, f := range strings.Fields(d.pat) {
			var e pelem
			switch {
			case f == "X" || f == "Y" || f == "A":
				e.slot = f[0]
			default:
				if strings.HasPrefix(f, "[") {
					e.opt = true
					f = strings.Trim(f, "[]")
				}
				e.first = map[string]bool{}
				for _, alt := range strings.Split(f, "|") {
					words := strings.Split(alt, "_")
					e.alts = append(e.alts, words)
					e.first[words[0]] = true
				}
			}
			p.elems = append(p.elems, e)
		}
		if e := p.elems[0]; e.slot != 0 {
			slotFirst = append(slotFirst, i)
		} else {
			seen := map[string]bool{}
			for _, alt := range e.alts {
				if !seen[alt[0]] {
					seen[alt[0]] = true
					byFirst[alt[0]] = append(byFirst[alt[0]], i)
				}
			}
		}
		p.assistant = d.kind == episode.SignalDecision && d.prev == nil
		patterns = append(patterns, p)
	}
}

// match is one pattern matched in a clause: token ranges [start,end) of
// the whole match and of its slots (x[0] == x[1] when absent).
type match struct {
	p          int
	start, end int
	x, y       [2]int
	sigs       []episode.Signal
	prim       primary
}

// primary is what a match is mainly about, for wrappers that adopt it
// ("we decided to stop using X" is a decision about X).
type primary struct {
	subject, object string
	polarity        int
	ok              bool
}

// matchAt tries pattern p on toks at i.
func matchAt(p *pattern, toks []token, i int) (match, bool) {
	m := match{p: -1, start: i}
	if end, ok := matchElems(p.elems, 0, toks, i, &m); ok {
		m.end = end
		return m, true
	}
	return m, false
}

// maxSlot bounds a slot's words.
const maxSlot = 14

// matchElems matches elems[ei:] at toks[ti:], recording slots in m, and
// returns the end of the match. Slots are lazy when a literal follows them
// and run to the end of the clause (or a stop word) when last.
func matchElems(elems []pelem, ei int, toks []token, ti int, m *match) (int, bool) {
	if ei == len(elems) {
		return ti, true
	}
	e := elems[ei]
	switch e.slot {
	case 0:
		if ti >= len(toks) || !e.first[toks[ti].w] {
			if e.opt {
				return matchElems(elems, ei+1, toks, ti, m)
			}
			return 0, false
		}
		for _, alt := range e.alts {
			if ti+len(alt) > len(toks) {
				continue
			}
			ok := true
			for k, w := range alt {
				if toks[ti+k].w != w {
					ok = false
					break
				}
			}
			if ok {
				if end, ok := matchElems(elems, ei+1, toks, ti+len(alt), m); ok {
					return end, true
				}
			}
		}
		if e.opt {
			return matchElems(elems, ei+1, toks, ti, m)
		}
		return 0, false
	case 'A':
		for ti < len(toks) && adverbs[toks[ti].w] {
			ti++
		}
		return matchElems(elems, ei+1, toks, ti, m)
	}
	// X or Y.
	set := func(a, b int) {
		if e.slot == 'X' {
			m.x = [2]int{a, b}
		} else {
			m.y = [2]int{a, b}
		}
	}
	if ei == len(elems)-1 {
		end := ti
		for end < len(toks) && end-ti < maxSlot {
			if end > ti && slotStops[toks[end].w] {
				break
			}
			end++
		}
		if end == ti {
			return 0, false
		}
		set(ti, end)
		return end, true
	}
	for end := ti + 1; end <= len(toks) && end-ti <= maxSlot; end++ {
		if end-1 > ti && slotStops[toks[end-1].w] {
			break
		}
		set(ti, end)
		if r, ok := matchElems(elems, ei+1, toks, end, m); ok {
			return r, true
		}
	}
	return 0, false
}

// scanner collects the signals of one exchange.
type scanner struct {
	sigs  []episode.Signal
	off   []bool                 // patterns left out (Local.WithoutRule)
	adds  bool                   // the reading alone makes statements (Local.WithAdd)
	model *reading.Model         // nil: the rules alone
	vec   func(string) []float32 // the sentence vector model reads, when it reads one
	// vectors counts the sentence vectors taken (see maxVectors).
	vectors int
	// corrects: a sentence of the text so far corrects (see readSentence).
	corrects bool
	// long: the user text being scanned has more sentences than
	// maxReadAddSentences (see readSentence).
	long bool
}

// add appends s unless an equal signal is already there; an equal one
// becomes global when s is.
func (sc *scanner) add(s episode.Signal) {
	for i := range sc.sigs {
		o := &sc.sigs[i]
		if o.Kind == s.Kind && o.Subject == s.Subject && o.Object == s.Object && o.Polarity == s.Polarity {
			o.Global = o.Global || s.Global
			o.Stated = o.Stated || s.Stated
			return
		}
	}
	if len(sc.sigs) < maxSignals {
		sc.sigs = append(sc.sigs, s)
	}
}

// scanUser scans one user text block.
func (sc *scanner) scanUser(text string) {
	text = clipBytes(text, maxScanUser)
	if i := instructionColon(text); i > 0 {
		text = text[:i] // the rest is material to work on, not the user's word
	} else if i := rewordLead(text); i > 0 {
		text = text[:i]
	}
	text = blankTabbed(text)
	m := prepare(text)
	sents := sentences(m)
	sc.long = len(sents) > maxReadAddSentences
	for k := 0; k < len(sents); k++ {
		st, ok := newSentence(m, text, sents[k])
		if !ok {
			continue
		}
		st.off = sc.off
		r := scanSentence(&st, false)
		sc.readSentence(&st, &r)
		if r.bare && k+1 < len(sents) {
			// "No." / "Wrong file." says what is right in the next
			// sentence: one correction for both.
			if next, ok := newSentence(m, text, sents[k+1]); ok {
				k++
				next.off = sc.off
				nr := scanSentence(&next, false)
				c := &r.sigs[0]
				switch {
				case len(nr.sigs) > 0 && nr.sigs[0].Kind == episode.SignalCorrection:
					c.Subject, c.Polarity = nr.sigs[0].Subject, nr.sigs[0].Polarity
					c.Object = cmp.Or(nr.sigs[0].Object, c.Object)
					nr.sigs = nr.sigs[1:]
				case nr.prim.ok:
					c.Subject, c.Polarity = nr.prim.subject, nr.prim.polarity
					c.Object = cmp.Or(nr.prim.object, c.Object)
				case len(next.toks) <= 5:
					if subj := normSubject(joinTokens(text, next.toks)); subj != "" {
						c.Subject, c.Polarity = subj, 1
					}
				}
				c.Text = clipRunes(collapseSpace(text[st.a:next.b]), maxSignalText)
				r.sigs = append(r.sigs, nr.sigs...)
			}
		}
		for _, s := range r.sigs {
			// A decision ("let's go with the map here") is often about
			// the task at hand, and so is a bare request ("nature themed
			// usernames please"): they take the clustering path, three
			// mentions. What the user states as a rule is Stated.
			s.Stated = s.Kind != episode.SignalDecision && !r.requests[signalKey(s)]
			sc.add(s)
		}
	}
}

// blankTabbed blanks the lines that hold a tab: a pasted table, log or
// indented code, material and not the user's word (typed prose has no
// tabs). Blanks keep the offsets of the rest.
func blankTabbed(text string) string {
	if !strings.Contains(text, "\t") {
		return text
	}
	b := []byte(text)
	for start := 0; start < len(b); {
		end := bytes.IndexByte(b[start:], '\n')
		if end < 0 {
			end = len(b)
		} else {
			end += start
		}
		if bytes.IndexByte(b[start:end], '\t') >= 0 {
			for i := start; i < end; i++ {
				if b[i] != '\r' {
					b[i] = ' '
				}
			}
		}
		start = end + 1
	}
	return string(b)
}

// instructionColon finds where a request's material starts: the colon
// ending an opening instruction ("Make this grammatically correct: I like
// your watch.", "Translate to French: …", "Summarize: …"). What follows it
// is text the user wants worked on; its "I like" is not theirs. It returns
// the colon's index, or -1.
func instructionColon(text string) int {
	head := text[:min(len(text), maxInstruction)]
	i := strings.IndexByte(head, ':')
	if i <= 0 || i+1 < len(text) && text[i+1] != ' ' && text[i+1] != '\n' && text[i+1] != '\t' {
		return -1 // no colon, or one inside a URL, a time, a path
	}
	if strings.ContainsAny(head[:i], "\n.?!") {
		return -1 // the colon is not in the opening sentence
	}
	// The verb after "please", "can you" and the like.
	words := strings.Fields(strings.ToLower(head[:i]))
lead:
	for len(words) > 1 {
		switch {
		case words[0] == "please" || words[0] == "pls" || words[0] == "kindly":
			words = words[1:]
		case (words[0] == "can" || words[0] == "could" || words[0] == "would" || words[0] == "will") && words[1] == "you":
			words = words[2:]
		default:
			break lead
		}
	}
	if len(words) == 0 || !materialVerbs[strings.Trim(words[0], ",")] {
		return -1
	}
	return i
}

// rewordLead finds where the material of a request to reword text starts
// when no colon sets it off ("other ways to say Works of art always carry
// …", "paraphrase I like your watch"): everything after the request's
// opening words. It returns that index, or -1.
func rewordLead(text string) int {
	head := strings.ToLower(text[:min(len(text), maxInstruction)])
	for _, p := range []string{"please ", "can you ", "could you ", "would you ", "give me ", "what are ", "what's ", "what is ", "list "} {
		if strings.HasPrefix(head, p) {
			head = head[len(p):]
			break
		}
	}
	for _, lead := range rewordLeads {
		if strings.HasPrefix(head, lead) {
			return len(text[:min(len(text), maxInstruction)]) - len(head) + len(lead)
		}
	}
	return -1
}

var rewordLeads = []string{"other ways to say ", "another way to say ", "other ways of saying ",
	"another way of saying ", "ways to say ", "how to say ", "how do you say ", "how do i say ",
	"how would you say ", "how would i say ", "synonyms for ", "rephrase ", "paraphrase ", "reword ",
	"rewrite ", "translate ", "proofread ", "correct the grammar of ", "fix the grammar of ",
	"fix the grammar in ", "grammar check "}

// maxInstruction bounds how far into a request instructionColon looks.
const maxInstruction = 200

// materialVerbs open a request to work on text that follows a colon.
var materialVerbs = setOf("make", "rewrite", "correct", "fix", "translate", "summarize", "summarise",
	"paraphrase", "proofread", "edit", "improve", "reword", "rephrase", "explain", "write", "continue",
	"complete", "convert", "analyze", "analyse", "classify", "format", "shorten", "expand", "polish",
	"create", "generate", "craft", "answer", "solve", "evaluate", "review", "critique", "grade", "check",
	"respond", "reply", "compose", "draft", "simplify", "extract", "sort", "list", "add", "modify",
	"change", "turn", "transform", "interpret", "describe", "debug")

// scanAssistant scans one assistant text block for decisions.
func (sc *scanner) scanAssistant(text string) {
	text = clipBytes(text, maxScanAssistant)
	m := prepare(text)
	for _, span := range sentences(m) {
		if st, ok := newSentence(m, text, span); ok {
			st.off = sc.off
			for _, s := range scanSentence(&st, true).sigs {
				sc.add(s)
			}
		}
	}
}

// sentence is one sentence being scanned.
type sentence struct {
	text string  // the whole original text
	toks []token // its words
	a, b int     // its byte range in text
	off  []bool  // patterns left out, by index (Local.WithoutRule); nil: none
}

// newSentence tokenizes one sentence of the prepared text m; questions
// and empty sentences are not scanned.
func newSentence(m string, text string, span [2]int) (sentence, bool) {
	a, b := span[0], span[1]
	toks := tokenize(m, text, a, b)
	if len(toks) == 0 || isQuestion(m, a, b, toks) {
		return sentence{}, false
	}
	return sentence{text: text, toks: toks, a: a, b: b}, true
}

func (st *sentence) quote() string {
	return clipRunes(collapseSpace(st.text[st.a:st.b]), maxSignalText)
}

// sentenceResult is what one sentence said.
type sentenceResult struct {
	sigs []episode.Signal
	prim primary // of the first signal that has one
	// bare: the sentence is only a correction ("No.", "That's wrong.",
	// "Wrong file."), its signal first in sigs.
	bare bool
	// requests are the signals that only a bare request gave ("air
	// themed names please"): what one asks for once is no rule yet.
	requests map[string]bool
}

// signalKey identifies a signal's claim.
func signalKey(s episode.Signal) string {
	return s.Kind + "\x00" + s.Subject + "\x00" + s.Object + "\x00" + strconv.Itoa(s.Polarity)
}

// scanSentence finds the signals of one sentence. assistant restricts the
// scan to decisions and never makes them global.
func scanSentence(st *sentence, assistant bool) sentenceResult {
	toks := st.toks
	global := hasGlobalMarker(toks)
	project := !global && hasProjectMarker(toks)
	var out []episode.Signal // Text is set at the end
	var prims []primary
	var requests map[string]bool

	// Corrections: a marker at the start of the sentence; what follows it
	// is scanned like any sentence. "Wrong X" says X is what was wrong.
	corr, bare := false, false
	wrongObj := ""
	if !assistant {
		if n := correctionMarker(toks); n > 0 {
			corr = true
			if w := toks[n-1].w; (w == "wrong" || w == "incorrect") && n == 1 && len(toks)-n <= 3 {
				wrongObj = normSubject(joinTokens(st.text, toks[n:]))
				n = len(toks)
			}
			toks = trimLead(toks[n:], "to", "that")
			bare = len(toks) == 0
		}
		if c, ok := notButCorrection(toks, st.text); ok {
			out = append(out, c)
			prims = append(prims, primary{subject: c.Subject, object: c.Object, polarity: 1, ok: true})
		}
	}

	person, first, cond := byte(0), byte(0), false
	var last *episode.Signal // last preference/avoid/decision, for coordinated items
	lastAt := -1             // its index in out
	subject := false         // the first clause is a noun phrase the sentence is about
	factAt := -1             // the index in out of a fact about the user the previous clause ended on
	var prevToks []token     // the previous clause's tokens
	// rename gives the claim at lastAt a new subject (and the purpose
	// obj, when it has none) everywhere a clause stated it; drop removes
	// it.
	rename := func(subj, obj string) {
		old := out[lastAt]
		for i := range out {
			if sameClaim(out[i], old) {
				out[i].Subject, out[i].Object = subj, cmp.Or(old.Object, obj)
			}
		}
	}
	drop := func() {
		old := out[lastAt]
		out = slices.DeleteFunc(out, func(o episode.Signal) bool { return sameClaim(o, old) })
		last, lastAt = nil, -1
	}
	for ci, cl := range splitClauses(toks) {
		before := prevToks
		prevToks = cl.toks
		if ci == 0 {
			subject = subjectPhrase(cl.toks)
		} else if subject && cl.conj == "" && len(cl.toks) > 0 && (cl.toks[0].w == "always" || cl.toks[0].w == "never") {
			// "Works of art, regardless of their theme, always carry a
			// piece of reality": what the subject does, no rule.
			last, lastAt = nil, -1
			continue
		}
		if cl.conj == "" && cl.coord && lastAt >= 0 && relativeSubject(out[lastAt].Subject) && len(before) > 0 &&
			before[len(before)-1].sep && lastWord(out[lastAt].Subject) == before[len(before)-1].w &&
			adjectiveLike(before[len(before)-1].w) && phraseTail(cl.toks) {
			// "activities that involve monotonous, repetitive movements":
			// the comma lists modifiers inside the relative clause.
			tail := strings.ToLower(phraseOf(st.text, cl.toks))
			if subj := out[lastAt].Subject + " " + tail; len(subj) <= maxRelativeSubjectBytes {
				rename(subj, "")
				continue
			}
			drop() // cut off on a modifier, it says less than was said
			continue
		}
		if cl.conj != "" && relativeOpen(before) {
			// "brands that test on animals or use lanolin": the
			// coordinated verb carries on the relative clause, and so
			// does a short phrase the claim's relative clause ends on
			// ("games that involve magic or fantasy elements").
			if lastAt >= 0 && relativeSubject(out[lastAt].Subject) && len(before) > 0 &&
				strings.HasSuffix(out[lastAt].Subject, before[len(before)-1].w) && phraseTail(cl.toks) {
				if subj := out[lastAt].Subject + " " + cl.conj + " " + strings.ToLower(phraseOf(st.text, cl.toks)); len(subj) <= maxSubjectBytes {
					rename(subj, "")
				}
			}
			last, lastAt = nil, -1
			continue
		}
		ctoks, please := stripFillers(cl.toks)
		if p := clausePerson(cl.toks); p != 0 {
			person = p
			if first == 0 {
				first = p
			}
		}
		if len(ctoks) > 0 && conditional(ctoks) {
			cond = true // "if you prefer, use pytest": all of it is hedged
		}
		if len(ctoks) == 0 || len(ctoks) > maxClause || cond {
			last, lastAt = nil, -1
			continue
		}
		got, ps, kinds := clauseSignals(ctoks, st.text, please, assistant, st.off)
		request := kinds == 1<<emitPlease
		if kinds == 1<<emitOnly && cl.conj != "" || kinds == 1<<emitInsteadBare && ci > 0 {
			// "Python 3.7 with tkinter and internal modules only": the
			// "only" holds for all that is coordinated, not for its last
			// item; "… margarine or coconut oil instead of butter": a
			// bare choice is the sentence's own, not a clause's.
			got, ps, request = nil, nil, false
		}
		subject = subject && len(got) == 0 // "use pnpm here, never npm" is no subject
		if len(got) == 0 && factAt >= 0 && cl.conj != "" && factTail(out[factAt], before, ctoks) {
			// "I have a severe peanut and tree nut allergy": one fact.
			v := phraseOf(st.text, ctoks)
			out[factAt].Object += " " + cl.conj + " " + v
			factAt = -1
			continue
		}
		factAt = -1
		for i, g := range got {
			if g.Kind == episode.SignalFact && g.Subject == "user" && i == len(got)-1 {
				factAt = len(out) + i
			}
		}
		if request {
			if requests == nil {
				requests = map[string]bool{}
			}
			for _, g := range got {
				requests[signalKey(g)] = true
			}
		}
		prims = append(prims, ps...)
		if len(got) == 0 && last != nil && cl.coord && examplesOpen(before) {
			// "made from animal products like leather, wool, or silk":
			// the list goes on with examples, which its item holds.
			last, lastAt = nil, -1
			continue
		}
		if len(got) == 0 && last != nil && cl.coord {
			// "I prefer pytest, black and ruff", "never use mocks or
			// stubs", "I prefer X, not Y".
			if s, ok := coordinated(*last, ctoks, st.text); ok {
				if lastAt >= 0 && (sharedHead(out[lastAt], s, cl.conj, before, ctoks) || sharedModifier(out[lastAt], s, cl.conj, before, ctoks, st.text)) {
					// "interactive and gamified learning modes": one item
					// whose modifiers were coordinated, not two items.
					joint := " " + cl.conj + " "
					if cl.conj == "" {
						joint = " "
					}
					rename(out[lastAt].Subject+joint+s.Subject, s.Object)
					m := out[lastAt]
					last = &m
					continue
				}
				out = append(out, s) // keeps last's Global
				last, lastAt = &s, len(out)-1
				continue
			}
			if k := slices.IndexFunc(ctoks, func(t token) bool { return placePreps[t.w] }); lastAt >= 0 && cl.conj != "" && k > 1 &&
				!slices.ContainsFunc(ctoks[:k], func(t token) bool { return slotStops[t.w] || finiteVerbs[t.w] || t.sep }) {
				// "commercial flea and tick treatments on my pets": the
				// place is where, and the head is shared all the same.
				if s, ok := coordinated(*last, ctoks[:k], st.text); ok && sharedHead(out[lastAt], s, cl.conj, before, ctoks[:k]) {
					rename(out[lastAt].Subject+" "+cl.conj+" "+s.Subject, s.Object)
					last, lastAt = nil, -1
					continue
				}
			}
			if lastAt >= 0 && modifierFragment(out[lastAt], cl.conj, before, ctoks) {
				// "a preference for logical and analytical approaches
				// that involve …": "logical" alone is no item.
				drop()
				continue
			}
			if lastAt >= 0 && cl.conj != "" && qualifiedTail(out[lastAt], before, ctoks) {
				// "any clothing or accessories made from animal
				// products": the qualifier is the last item's and the
				// previous one's, so they are one item.
				if tail := normSubject(joinTokens(st.text, ctoks)); pointsBack(ctoks) {
					drop()
					continue
				} else if strings.Contains(tail, " ") {
					rename(out[lastAt].Subject+" "+cl.conj+" "+tail, "")
				}
				last, lastAt = nil, -1
				continue
			}
			if lastAt >= 0 && cl.conj != "" && relativeTail(out[lastAt], before, ctoks) {
				// "watch shows or movies that are more than two hours
				// long": the relative clause restricts both, and a claim
				// without it says more than was said (as for one noun).
				// Both with it are one claim, when the clause is whole.
				subj := rawPlural(out[lastAt].Subject, before[len(before)-1].w) + " " + cl.conj + " " +
					strings.ToLower(phraseOf(st.text, ctoks))
				if at := relativeAt(ctoks); at > 0 && len(subj) <= maxSubjectBytes {
					if _, ok := relativeClause(ctoks, [2]int{0, at}); ok && relativeClauseEnds(ctoks, at) {
						rename(subj, "")
						last, lastAt = nil, -1
						continue
					}
				}
				drop()
				continue
			}
		}
		sw := false
		for i := range got {
			got[i].Global = isGlobal(got[i].Kind, global, project, person) && !assistant
			sw = sw || got[i].Kind == episode.SignalSwitch
		}
		if sw {
			// A switch and the preference it states are one statement:
			// one scope, the switch's.
			g := isGlobal(episode.SignalSwitch, global, project, person) && !assistant
			for i := range got {
				got[i].Global = g
			}
		}
		last, lastAt = nil, -1
		for i := len(got) - 1; i >= 0 && last == nil; i-- {
			switch got[i].Kind {
			case episode.SignalPreference, episode.SignalAvoid, episode.SignalDecision:
				s := got[i]
				last, lastAt = &s, len(out)+i
			}
		}
		out = append(out, got...)
	}

	if taskPlan(st.toks) {
		// "I'll need to turn off the scroll bar and always show the full
		// text": the steps of a task the user plans, no standing rule.
		out = slices.DeleteFunc(out, func(o episode.Signal) bool {
			return o.Kind == episode.SignalPreference || o.Kind == episode.SignalAvoid
		})
	}
	if endedHabit(st.toks) {
		// "We don't use Docker anymore": an avoidance that ends a habit
		// is a switch away from it.
		for i := range out {
			if out[i].Kind == episode.SignalAvoid {
				out[i].Kind = episode.SignalSwitch
				out[i].Global = isGlobal(episode.SignalSwitch, global, project, first)
			}
		}
	}
	for i := range out {
		if out[i].Kind != episode.SignalDecision {
			continue
		}
		for _, o := range out {
			if o.Kind != episode.SignalDecision && o.Subject == out[i].Subject {
				out[i].Global = o.Global // one statement, one scope
				break
			}
		}
	}
	for _, o := range out {
		if o.Kind == episode.SignalSwitch {
			// A switch and what replaces it are one statement: one scope.
			for i := range out {
				out[i].Global = o.Global
			}
			break
		}
	}
	if corr && !ackRemainder(toks) {
		// Subject: what the user says instead, when they say it.
		c := episode.Signal{Kind: episode.SignalCorrection, Object: wrongObj, Polarity: -1,
			Global: isGlobal(episode.SignalCorrection, global, project, first)}
		if len(prims) > 0 {
			c.Subject, c.Polarity = prims[0].subject, prims[0].polarity
			c.Object = cmp.Or(prims[0].object, c.Object)
		} else if len(toks) > 0 && len(toks) <= 5 {
			if c.Subject = normSubject(joinTokens(st.text, toks)); c.Subject != "" {
				c.Polarity = 1
			}
		}
		out = append([]episode.Signal{c}, out...)
	} else {
		bare = false
	}

	// "From now on, X": a decision about whatever X is.
	if !assistant && fromNowOnAt(st.toks) >= 0 {
		d := episode.Signal{Kind: episode.SignalDecision, Polarity: 1, Global: global}
		if len(prims) > 0 {
			d.Subject, d.Object, d.Polarity = prims[0].subject, prims[0].object, prims[0].polarity
			for _, o := range out {
				if o.Subject == d.Subject {
					d.Global = o.Global // one statement, one scope
					break
				}
			}
		} else if rest := untilStop(withoutFromNowOn(toks)); len(rest) > 0 && len(rest) <= 8 {
			d.Subject = normSubject(joinTokens(st.text, rest))
		}
		if d.Subject != "" {
			out = append(out, d)
		}
	}
	r := sentenceResult{sigs: out, bare: bare, requests: requests}
	if len(prims) > 0 {
		r.prim = prims[0]
	}
	if len(out) > 0 {
		text := st.quote()
		for i := range out {
			out[i].Text = text
		}
	}
	return r
}

// taskPlan reports a sentence that opens with what the user will have to
// do ("I'll need to …", "we will have to …", "I'm going to need to …").
func taskPlan(toks []token) bool {
	ws := make([]string, 0, 5)
	for _, t := range toks[:min(len(toks), 5)] {
		ws = append(ws, t.w)
	}
	s := strings.Join(ws, " ") + " "
	for _, who := range []string{"i'll ", "we'll ", "i will ", "we will ", "i'm going to ", "we're going to "} {
		if rest, ok := strings.CutPrefix(s, who); ok {
			return strings.HasPrefix(rest, "need to ") || strings.HasPrefix(rest, "have to ")
		}
	}
	return false
}

// subjectPhrase reports a clause that is a bare noun phrase of two to six
// words ("Works of art", "The unit tests"): set off by a comma, it is the
// subject of what follows. A phrase of place or time ("For tests", "In
// this repo", "Going forward"), a pronoun or a verb makes it no subject,
// and a lone word may be whom the user addresses ("Claude, always …").
func subjectPhrase(toks []token) bool {
	if len(toks) < 2 || len(toks) > 6 {
		return false
	}
	w := toks[0].w
	if preps[w] || fillers[w] || adverbs[w] || hedges[w] || subWords[w] || coordWords[w] || scopeDets[w] && w != "the" && w != "my" && w != "our" ||
		strings.HasSuffix(w, "ing") || strings.HasSuffix(w, "ly") {
		return false
	}
	switch w {
	case "as", "once", "since", "after", "before", "until", "whenever", "where", "here", "there", "from",
		"going", "moving", "next", "first", "lastly", "finally", "otherwise", "also", "again", "today", "tomorrow":
		return false
	}
	for i, t := range toks {
		switch t.w {
		case "i", "we", "you", "let's", "lets", "me", "us", "it", "they", "he", "she", "please", "i'm", "we're", "you're":
			return false
		}
		if i > 0 && (finiteVerbs[t.w] || pastTense(t.w)) {
			return false
		}
	}
	return true
}

// phraseOf is the text of toks as written, white space folded, without
// the punctuation that ends it.
func phraseOf(text string, toks []token) string {
	return collapseSpace(strings.TrimRight(joinTokens(text, toks), ".,;:!?"))
}

// untilStop cuts toks at the first slot stop or clause separator.
func untilStop(toks []token) []token {
	for i, t := range toks {
		if i > 0 && slotStops[t.w] {
			return toks[:i]
		}
		if t.sep {
			return toks[:i+1]
		}
	}
	return toks
}

// isGlobal applies the scope rule documented at the top of this file.
func isGlobal(kind string, global, project bool, person byte) bool {
	if global {
		return true
	}
	if project {
		return false
	}
	switch kind {
	case episode.SignalPreference, episode.SignalAvoid:
		// The user's own habits and taste: "I prefer X", "never X".
		return person == 'i' || person == 0
	case episode.SignalSwitch, episode.SignalCorrection, episode.SignalFact:
		// A change of the codebase unless the user speaks of themself.
		return person == 'i'
	}
	return false
}

// kindBit gives each signal kind a bit, so that at one word only the first
// matching pattern of a kind counts.
func kindBit(kind string) uint8 {
	switch kind {
	case episode.SignalPreference:
		return 1
	case episode.SignalAvoid:
		return 2
	case episode.SignalSwitch:
		return 4
	case episode.SignalDecision:
		return 8
	case episode.SignalFact:
		return 16
	}
	return 32
}

// clauseSignals matches the patterns in one clause and emits their
// signals in clause order, with the primaries of the matches that emitted.
// Overlaps: a preference, avoidance or fact whose slot holds another match
// is dropped in favour of the inner one ("always avoid X" is avoid X); a
// decision adopts it ("we decided to stop using X" is a decision against
// X).
func clauseSignals(toks []token, text string, please, assistant bool, off []bool) (sigs []episode.Signal, prims []primary, kinds uint64) {
	// Words are visited from the last to the first, so that the matches
	// inside a slot are settled before the match around them.
	var ms []match
	var buf [64]int
	for i := len(toks) - 1; i >= 0; i-- {
		cands := byFirst[toks[i].w]
		if i == 0 && len(slotFirst) > 0 {
			merged := append(append(buf[:0], cands...), slotFirst...)
			slices.Sort(merged)
			cands = merged
		}
		prev := ""
		if i > 0 {
			prev = toks[i-1].w
		}
		var done uint8
		for _, pi := range cands {
			p := &patterns[pi]
			b := kindBit(p.kind)
			if done&b != 0 || off != nil && off[pi] || assistant && !p.assistant || p.prev != nil && !p.prev[prev] || blockedBefore(toks, i) ||
				prev == "to" && p.prev != nil && purposeTo(toks, i-1) {
				continue
			}
			m, ok := matchAt(p, toks, i)
			if !ok {
				continue
			}
			m.p = pi
			var inner *match
			for j := range ms {
				if s := ms[j].start; s > i && s >= m.x[0] && s < m.x[1] && (inner == nil || s < inner.start) {
					inner = &ms[j]
				}
			}
			var adopt *primary
			if inner != nil {
				switch p.kind {
				case episode.SignalPreference, episode.SignalAvoid, episode.SignalFact:
					done |= b // the inner match says it better
					continue
				case episode.SignalDecision:
					adopt = &inner.prim
				}
			}
			if m.sigs = emit(&m, toks, text, please, adopt); len(m.sigs) > 0 {
				done |= b
				ms = append(ms, m)
			}
		}
	}
	if len(ms) == 0 {
		return nil, nil, 0
	}
	for i := range ms {
		kinds |= 1 << patterns[ms[i].p].emit
	}
	slices.SortFunc(ms, func(a, b match) int {
		if a.start != b.start {
			return a.start - b.start
		}
		return a.p - b.p
	})
	n := 0
	for i := range ms {
		n += len(ms[i].sigs)
	}
	sigs = make([]episode.Signal, 0, n)
	prims = make([]primary, 0, len(ms))
	for i := range ms {
		sigs = append(sigs, ms[i].sigs...)
		prims = append(prims, ms[i].prim)
	}
	return sigs, prims, kinds
}

// adverbs may stand between "I" and a verb ("I really prefer").
var adverbs = setOf("always", "usually", "generally", "really", "strongly", "definitely", "much", "just",
	"still", "personally", "actually", "also", "typically", "normally", "mostly", "very", "totally",
	"absolutely", "honestly", "truly", "do", "kinda", "sorta", "certainly", "far", "probably", "all", "strictly",
	"religiously", "exclusively")

// slotStops end a slot: what follows them is a reason, a condition or a
// relative clause, not part of the subject.
var slotStops = setOf("because", "since", "so", "when", "whenever", "while", "where", "which", "who",
	"that", "unless", "if", "until", "than", "instead", "except", "rather", "whereas", "though",
	"although", "otherwise", "as", "but", "cause", "cuz", "whereby", "unlike", "not", "due", "such")

// negators, hedges and reporting verbs block a positive pattern when they
// come within the three words before it.
var (
	negators = setOf("not", "no", "never", "don't", "dont", "doesn't", "didn't", "won't", "can't", "cannot",
		"shouldn't", "wouldn't", "isn't", "aren't", "wasn't", "weren't", "hardly", "without", "stop",
		"stopped", "mustn't", "haven't", "hasn't", "nor", "neither")
	hedges    = setOf("could", "might", "may", "maybe", "perhaps", "if", "whether", "wonder", "wondering", "unless")
	reporting = setOf("said", "says", "say", "wrote", "suggested", "suggests", "mentioned", "claimed", "claims", "asked", "thought")
)

// blockedBefore reports a negation, hedge or reported speech in the three
// words before toks[i].
func blockedBefore(toks []token, i int) bool {
	for k := max(0, i-3); k < i; k++ {
		w := toks[k].w
		if negators[w] || hedges[w] {
			return true
		}
		if reporting[w] && (k == 0 || toks[k-1].w != "i") {
			return true
		}
		if k+1 < i && (wishVerbs[w] && (toks[k+1].w == "us" || toks[k+1].w == "me" || toks[k+1].w == "you") ||
			w == "used" && toks[k+1].w == "to") {
			// "my boss wants us to use Java", "I used to prefer tabs".
			return true
		}
	}
	// "it should always return an error": a thing, not a person or the
	// codebase ("this service should never log tokens"), does it.
	if i >= 2 && modals[toks[i-1].w] && !persons[toks[i-2].w] && !scopeNouns[toks[i-2].w] {
		return true
	}
	return false
}

// purposeTo reports a "to" at toks[t] that opens the purpose of a task or
// names what is asked about ("explain how to use X", "enumerate solutions
// to keep the code compact", "ways to avoid deadlocks"), not a rule of the
// user's: an infinitive is theirs after a word of wanting, needing,
// trying, remembering or judging ("remember to keep functions small",
// "I want you to always use pnpm", "it's best to avoid X"), or opening
// its clause.
func purposeTo(toks []token, t int) bool {
	if t == 0 {
		return false
	}
	w := toks[t-1].w
	if ruleTo[w] || t >= 2 && (toks[t-2].w == "it's" || toks[t-2].w == "is" || toks[t-2].w == "be") {
		return false
	}
	return true
}

var ruleTo = setOf("want", "wants", "wanted", "need", "needs", "like", "love", "prefer", "prefers", "try",
	"trying", "remember", "sure", "important", "best", "better", "good", "essential", "crucial",
	"careful", "going", "gonna", "have", "has", "got", "ought", "tend", "tends", "continue", "you", "us",
	"me", "always", "never", "please", "rule", "habit", "policy", "convention", "practice", "and", "or",
	"also", "just", "rather", "wish", "hope", "plan", "planning", "intend", "mean", "decide", "decided",
	"chose", "choose", "agreed", "agree", "learned", "learn", "start", "started", "begin", "supposed",
	"required", "necessary", "able", "only", "still", "really", "definitely", "generally", "usually",
	"ideally", "strictly", "first", "not", "use", "used", "default", "forget")

// describedBefore reports whether the words before i say what someone
// other than the user or their team is or does ("you are", "it's",
// "this is").
func describedBefore(toks []token, i int) bool {
	for k := max(0, i-2); k < i; k++ {
		switch toks[k].w {
		case "you", "you're", "it", "it's", "this", "that", "that's", "they", "they're", "he", "she", "he's", "she's":
			return true
		}
	}
	return false
}

var (
	wishVerbs = setOf("wants", "want", "wanted", "told", "asked", "asks", "expects", "expected", "requires",
		"required", "forces", "forced", "makes", "made", "lets", "needs", "needed")
	modals  = setOf("should", "must", "will", "would", "shall")
	persons = setOf("i", "we", "you", "please", "and", "so", "really", "just", "also", "then", "definitely")
)

// emit turns a match into signals (Text and Global are set by the caller)
// and records its primary. adopt, for a decision wrapping another match,
// is that match's primary.
func emit(m *match, toks []token, text string, please bool, adopt *primary) []episode.Signal {
	switch patterns[m.p].emit {
	case emitPref, emitAvoid, emitNoX, emitDont, emitNever, emitUse:
	default:
		return emitSlot(m, toks, text, please, adopt, false)
	}
	if e := asQualifier(toks, m.x); e > 0 {
		m.x[1] = e // "fish as pets": not fish as food
	}
	if !restricted(toks, m.x) {
		return emitSlot(m, toks, text, please, adopt, false)
	}
	// "I avoid restaurants that serve gluten": the claim is about what
	// the relative clause restricts, and says it.
	rel, ok := relativeClause(toks, m.x)
	if !ok {
		return nil
	}
	out := emitSlot(m, toks, text, please, adopt, true)
	if len(out) != 1 {
		return nil
	}
	subj := rawPlural(out[0].Subject, toks[m.x[1]-1].w) + " " + rel // "beauty products that …"
	if len(subj) > maxSubjectBytes {
		return nil
	}
	out[0].Subject = subj
	m.prim.subject = subj
	return out
}

// rawPlural gives subject's last word back its plural as written (raw),
// for a subject a relative clause goes on from: "beauty products that
// …", not "beauty product that …".
func rawPlural(subject, raw string) string {
	if w := lastWord(subject); raw != w && singular(raw) == w {
		return subject[:len(subject)-len(w)] + raw
	}
	return subject
}

// asQualifier returns where an "as" phrase after slot x ends when it says
// in which role the slot's thing is meant ("fish as pets", "cycling as a
// form of exercise"), or 0: not when "as" opens a reason or a comparison
// ("as I'm vegan", "as well", "as much as").
func asQualifier(toks []token, x [2]int) int {
	a := x[1]
	if a <= x[0] || a+1 >= len(toks) || toks[a].w != "as" || toks[a-1].sep {
		return 0
	}
	switch toks[a+1].w {
	case "well", "much", "many", "long", "soon", "far", "if", "though", "such", "possible", "usual", "needed",
		"necessary", "often", "little", "few", "good", "best":
		return 0
	}
	e := a + 1
	for e < len(toks) && !toks[e-1].sep && !slotStops[toks[e].w] {
		w := toks[e].w
		if clauseSubjects[w] || objPronouns[w] || finiteVerbs[w] || modals[w] || negators[w] || w == "`" {
			return 0
		}
		e++
	}
	if e-a > 5 {
		return 0
	}
	return e
}

// relativeClause returns the words of the restrictive relative clause
// after slot x, lower-cased ("that have been tested on animals"), up to
// the end of its clause or a reason, an example or an aside ("… due to
// ethical concerns", "… like beeswax"). It fails when the clause is a
// single word or longer than maxRelativeWords.
func relativeClause(toks []token, x [2]int) (string, bool) {
	if x[1]-x[0] >= 2 && toks[x[1]-2].w == "to" {
		return "", false // "to learn that": an object, no relative clause
	}
	e := x[1] + 1
	for e < len(toks) && !toks[e-1].sep && !relativeStops[toks[e].w] {
		e++
	}
	if e-x[1] < 2 || e-x[1] > maxRelativeWords {
		return "", false
	}
	ws := make([]string, 0, e-x[1])
	for _, t := range toks[x[1]:e] {
		if t.w == "`" {
			return "", false
		}
		ws = append(ws, t.w)
	}
	for len(ws) > 2 && preps[ws[len(ws)-1]] {
		ws = ws[:len(ws)-1]
	}
	if l := ws[len(ws)-1]; looksLikeValue(l) || numberWords[l] || modals[l] || finiteVerbs[l] || adverbs[l] ||
		modals[ws[len(ws)-2]] || hedges[ws[len(ws)-2]] || hedges[l] || clauseSubjects[l] || l == "too" || l == "either" {
		// "movies that are over two [and a half hours long]", "that
		// could potentially [cause …]": cut off, it says nothing.
		return "", false
	}
	return strings.TrimRight(strings.Join(ws, " "), ".,;:!?"), true
}

// reactionVerbs before one of shownDets say what the user thinks of a
// thing in front of them.
var (
	reactionVerbs = setOf("like", "love", "enjoy", "adore", "likes", "loves", "into")
	shownDets     = setOf("the", "this", "that", "these", "those", "your")
)

// genericThe are the nouns English names in general with "the".
var genericThe = setOf("ocean", "sea", "beach", "mountains", "outdoors", "countryside", "city", "snow", "rain",
	"sun", "wilderness", "desert", "forest", "woods", "water", "cold", "heat", "winter", "summer", "spring",
	"autumn", "fall", "night", "morning", "evening", "theater", "theatre", "opera", "ballet", "piano",
	"guitar", "violin", "drums", "terminal", "command", "keyboard")

// thirdPerson reports a verb in the third person singular ("gets",
// "fails"), not the plain form an imperative or the user's own habit takes.
func thirdPerson(w string) bool {
	if len(w) < 4 || !strings.HasSuffix(w, "s") || !plainWord(w) {
		return false
	}
	for _, e := range []string{"ss", "us", "is", "ys", "as", "os"} {
		if strings.HasSuffix(w, e) {
			return false
		}
	}
	return thirdPersonVerbs[w] || strings.HasSuffix(w, "es") && thirdPersonVerbs[strings.TrimSuffix(w, "es")+"e"] ||
		thirdPersonVerbs[strings.TrimSuffix(w, "s")]
}

// thirdPersonVerbs are verbs whose -s form is only a verb: "never gets old".
var thirdPersonVerbs = setOf("get", "gets", "go", "goes", "fail", "work", "happen", "seem", "look", "come",
	"take", "make", "give", "stop", "end", "change", "matter", "help", "hurt", "last", "run", "break",
	"cease", "fade", "disappoint", "lie", "sleep", "rest", "quit", "tire", "leave", "let", "say", "tell")

// followNouns end what a user follows as a way of living.
var followNouns = setOf("diet", "lifestyle", "regimen", "fast", "religion", "faith")

var numberWords = setOf("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
	"eleven", "twelve", "twenty", "thirty", "forty", "fifty", "hundred", "thousand", "half", "few")

// maxRelativeWords bounds a relative clause kept in a subject, and
// maxRelativeSubjectBytes a subject whose relative clause lists modifiers.
const (
	maxRelativeWords        = 9
	maxRelativeSubjectBytes = 120
)

var relativeStops = setOf("due", "because", "since", "as", "so", "including", "like", "such", "especially",
	"unless", "if", "when", "whenever", "while", "but", "except", "although", "though", "even", "e.g", "(")

// emitSlot is emit for a slot that is restricted by a relative clause
// only when rel says so (the caller adds the clause).
func emitSlot(m *match, toks []token, text string, please bool, adopt *primary, rel bool) []episode.Signal {
	p := &patterns[m.p]
	span := func(r [2]int) string {
		if r[1] <= r[0] {
			return ""
		}
		return text[toks[r[0]].start:toks[r[1]-1].end]
	}
	x, y := m.x, m.y
	var out []episode.Signal
	pref := func(kind string, pol int, r [2]int, purpose bool) (episode.Signal, bool) {
		subj, obj := normSlot(span(r), purpose)
		if subj == "" {
			return episode.Signal{}, false
		}
		return episode.Signal{Kind: kind, Subject: subj, Object: obj, Polarity: pol}, true
	}
	setPrim := func(s episode.Signal) {
		m.prim = primary{subject: s.Subject, object: s.Object, polarity: s.Polarity, ok: true}
	}
	switch p.emit {
	case emitPref, emitAvoid, emitNoX:
		pol := 1
		if p.emit != emitPref {
			pol = -1
		}
		if p.emit == emitNoX {
			first := toks[m.start+1].w
			if first != "more" && !please && !hasProjectMarker(toks) && !hasGlobalMarker(toks) {
				return nil
			}
			if noNotAvoid[toks[x[0]].w] {
				return nil
			}
		}
		if p.emit == emitPref && toks[m.start].w == "always" && !verbAfterAlways(toks, x) {
			return nil
		}
		if p.emit == emitPref && toks[m.start].w == "always" && x[1]-x[0] > 1 && (likeVerbs[toks[x[0]].w] || toks[x[0]].w == "love") {
			x[0]++ // "I will always love reading" is about reading
		}
		if p.emit == emitPref && x[0] == m.start+1 && (toks[m.start].w == "only" || toks[m.start].w == "exclusively") &&
			(!habitVerbs[toks[x[0]].w] || x[0]+1 < x[1] && anaphoric[toks[x[0]+1].w]) {
			// "I only eat organic produce" is a habit; "I only have two
			// hours", "I only need the summary" are not, and "I only
			// read it once" is about what was shown.
			return nil
		}
		if thatClause(toks, x) || pol > 0 && (negators[toks[x[0]].w] || avoidsAfter(toks, x)) || !rel && restricted(toks, x) {
			return nil
		}
		if anaphoric[toks[x[0]].w] && (p.emit == emitAvoid || p.emit == emitPref && toks[m.start].w == "i") {
			return nil
		}
		if pol > 0 && x[0] > 0 && reactionVerbs[toks[x[0]-1].w] && (shownDets[toks[x[0]].w] ||
			toks[x[0]].w == "all" && x[0]+1 < x[1] && shownDets[toks[x[0]+1].w]) &&
			!(x[1]-x[0] == 2 && toks[x[0]].w == "the" && genericThe[toks[x[0]+1].w]) {
			// "I love the yellow leaves", "I like this approach": a
			// reaction to what is shown, not a taste ("I love the
			// ocean" is one).
			return nil
		}
		if toks[m.start].w == "use" && y[1] > y[0] && specific[toks[x[0]].w] {
			// "use the staging config for this test": a task, not a habit.
			return nil
		}
		s, ok := pref(p.kind, pol, x, true)
		if !ok {
			return nil
		}
		if y[1] > y[0] { // "use X for Y"
			if s.Object, _ = normSlot(span(y), false); s.Object == "" {
				return nil
			}
		}
		if pol > 0 {
			// "I prefer JavaScript without semicolons", "clothing free
			// of leather": X, and not Y.
			for j := x[0] + 1; j < x[1]-1; j++ {
				skip := 0
				if toks[j].w == "without" {
					skip = 1
				} else if toks[j].w == "free" && j+2 < x[1] && (toks[j+1].w == "of" || toks[j+1].w == "from") {
					skip = 2
				}
				if skip > 0 {
					ws, wok := pref(episode.SignalAvoid, -1, [2]int{j + skip, x[1]}, false)
					if xs, xok := pref(p.kind, pol, [2]int{x[0], j}, true); wok && xok {
						out = append(out, xs, ws)
						setPrim(xs)
						return out
					}
				}
			}
		}
		out = append(out, s)
		setPrim(s)
		if a, ok := notAfter(toks, m.end, span); ok && pol > 0 {
			out = append(out, a) // "this service uses gRPC, not REST"
		}
	case emitPrefOver:
		if negators[toks[x[0]].w] {
			return nil
		}
		s, ok := pref(episode.SignalPreference, 1, x, true)
		if !ok {
			return nil
		}
		a, ok := pref(episode.SignalAvoid, -1, y, true)
		if ok && s.Object == "" {
			s.Object = a.Object // "Go over Python for CLIs"
		}
		if ok && a.Object == "" {
			a.Object = s.Object // "zap for logging, not fmt.Printf"
		}
		out = append(out, s)
		setPrim(s)
		if ok {
			out = append(out, a)
		}
	case emitDont, emitNever:
		if x[1] <= x[0] || !rel && restricted(toks, x) {
			return nil
		}
		k := x[0]
		// "I don't completely understand": the verb after the adverbs says
		// whether it is a habit at all.
		for k < x[1] && (toks[k].w == "ever" || toks[k].w == "even" || dontAdverbs[toks[k].w]) {
			k++
		}
		if k == x[1] {
			return nil
		}
		verb := toks[k].w
		if p.emit == emitNever && (pastTense(verb) || verb == "mind" || verb == "again" || verb == "once") {
			return nil
		}
		if thirdPerson(verb) {
			return nil // "it never gets old": what something does
		}
		switch {
		case verb == "be" && k+1 < x[1] && x[1]-k <= 3 && !beDeny[toks[k+1].w] && !specific[toks[k+1].w]:
			s, ok := pref(episode.SignalAvoid, -1, [2]int{k + 1, x[1]}, false)
			if !ok {
				return nil
			}
			out = append(out, s)
			setPrim(s)
		case verb == "need" && k+1 < x[1] && !specific[toks[k+1].w] && toks[k+1].w != "to" && toks[k+1].w != "a" &&
			toks[k+1].w != "an" && toks[k+1].w != "you":
			// "I don't need long explanations".
			s, ok := pref(episode.SignalAvoid, -1, [2]int{k + 1, x[1]}, true)
			if !ok {
				return nil
			}
			out = append(out, s)
			setPrim(s)
		case dontDeny[verb]:
			return nil
		case likeVerbs[verb] && taskWish(verb, toks, k+1, x[1]):
			// "I don't want to modify the stack trace": this task's
			// object, no habit.
			return nil
		case likeVerbs[verb]:
			s, ok := pref(episode.SignalAvoid, -1, [2]int{k + 1, x[1]}, true)
			if !ok {
				return nil
			}
			out = append(out, s)
			setPrim(s)
		case verb == "forget":
			s, ok := pref(episode.SignalPreference, 1, [2]int{k + 1, x[1]}, true)
			if !ok {
				return nil
			}
			out = append(out, s)
			setPrim(s)
		default:
			e := x[1]
			if placeVerbs[verb] {
				// "don't add semicolons to my JS files": what is avoided
				// is the thing, not the place.
				for j := k + 2; j < e; j++ {
					if w := toks[j].w; w == "to" || w == "into" || w == "in" || w == "onto" {
						e = j
						break
					}
				}
			}
			s, ok := pref(episode.SignalAvoid, -1, [2]int{k, e}, true)
			if !ok {
				return nil
			}
			out = append(out, s)
			setPrim(s)
		}
	case emitInsteadBare:
		// "pnpm instead of npm", "rebase rather than merge", "tabs, not
		// spaces": the whole clause is the choice, in a few words, of
		// no particular thing ("fix the bug instead of …" is a task).
		if x[1]-x[0] > 3 || y[1]-y[0] > 4 || !onlyScopeAfter(toks, y[1]) ||
			toks[x[1]].w == "not" && !toks[x[1]-1].sep {
			return nil
		}
		for _, r := range [][2]int{x, y} {
			for k := r[0]; k < r[1]; k++ {
				if w := toks[k].w; specific[w] || finiteVerbs[w] || negators[w] || clauseSubjects[w] || w == "`" {
					return nil
				}
			}
		}
		fallthrough
	case emitInstead, emitInsteadRev:
		want, not := x, y
		if p.emit == emitInsteadRev {
			want, not = y, x
		}
		ws, wo := normSlot(span(want), true)
		ns, _ := normSlot(span(not), false)
		if ws == "" || ns == "" || ws == ns || placeWord(ws) && p.emit != emitInsteadBare {
			return nil
		}
		out = append(out,
			episode.Signal{Kind: episode.SignalPreference, Subject: ws, Object: wo, Polarity: 1},
			episode.Signal{Kind: episode.SignalAvoid, Subject: ns, Polarity: -1})
		m.prim = primary{subject: ws, object: wo, polarity: 1, ok: true}
	case emitUse:
		if w := toks[x[0]].w; x[1]-x[0] > 5 || specific[w] || w == "a" || w == "an" || w == "to" || w == "you" ||
			w == "us" || w == "more" || w == "help" {
			return nil
		}
		s, ok := pref(episode.SignalPreference, 1, x, true)
		if !ok {
			return nil
		}
		out = append(out, s)
		setPrim(s)
	case emitOnly, emitPlease:
		// The slot opens the clause and is a noun phrase: "pnpm only in
		// this repo", "table-driven tests please".
		if x[1]-x[0] > 4 || !onlyScopeAfter(toks, m.end) {
			return nil
		}
		for k := x[0]; k < x[1]; k++ {
			w := toks[k].w
			if specific[w] || finiteVerbs[w] || negators[w] || w == "and" || w == "or" || w == "`" {
				return nil
			}
		}
		if taskVerbs[toks[x[0]].w] {
			return nil
		}
		s, ok := pref(episode.SignalPreference, 1, x, false)
		if !ok {
			return nil
		}
		out = append(out, s)
		setPrim(s)
	case emitBe:
		if x[1]-x[0] > 2 || beDeny[toks[x[0]].w] || pastTense(toks[x[0]].w) || specific[toks[x[0]].w] {
			return nil
		}
		s, ok := pref(episode.SignalPreference, 1, x, false)
		if !ok {
			return nil
		}
		out = append(out, s)
		setPrim(s)
	case emitKeepAdj:
		k := x[0]
		if k < x[1] && (toks[k].w == "your" || toks[k].w == "my" || toks[k].w == "our") {
			k++
		}
		n := x[1] - k
		if n < 2 || n > 3 || !styleAdjs[toks[x[1]-1].w] || specific[toks[k].w] {
			return nil
		}
		subj := normSubject(toks[x[1]-1].w + " " + text[toks[k].start:toks[x[1]-2].end])
		if subj == "" {
			return nil
		}
		s := episode.Signal{Kind: episode.SignalPreference, Subject: subj, Polarity: 1}
		out = append(out, s)
		setPrim(s)
	case emitUser:
		v, ok := userFact(text, toks, x)
		if !ok {
			return nil
		}
		s := episode.Signal{Kind: episode.SignalFact, Subject: "user", Object: v, Polarity: 1}
		out = append(out, s)
		setPrim(s)
	case emitFollow:
		// A way of living the user keeps to: "I strictly follow a Kosher
		// diet". Following a guide or a person is no fact about them.
		if x[1]-x[0] > 6 || !followNouns[singular(toks[x[1]-1].w)] {
			return nil
		}
		v := collapseSpace(strings.TrimRight(text[toks[x[0]].start:toks[x[1]-1].end], ".,;:!?"))
		s := episode.Signal{Kind: episode.SignalFact, Subject: "user", Object: "follows " + v, Polarity: 1}
		out = append(out, s)
		setPrim(s)
	case emitFactAs:
		if x[1]-x[0] > 4 || y[1] <= y[0] {
			return nil
		}
		name := factName(toks, x, y)
		if name == "" {
			return nil
		}
		ye := y[0] + 1
		for ye < y[1] && !valueStops[toks[ye].w] {
			ye++
		}
		val := factValue(text, toks, [2]int{y[0], ye})
		if val == "" || ye-y[0] > 4 || specific[toks[y[0]].w] && ye-y[0] == 1 {
			return nil
		}
		s := episode.Signal{Kind: episode.SignalFact, Subject: name, Object: val, Polarity: 1}
		out = append(out, s)
		setPrim(s)
	case emitSwitch, emitSwitchIns:
		from, to := x, y
		if p.emit == emitSwitchIns {
			from, to = y, x
		}
		if particles[toks[from[0]].w] || to[1] > to[0] && particles[toks[to[0]].w] {
			return nil // "I dropped off the cookies": a phrasal verb, no switch
		}
		fs, _ := normSlot(span(from), false)
		ts, _ := normSlot(span(to), false)
		if fs == "" || ts == "" || fs == ts || placeWord(ts) {
			return nil
		}
		out = append(out,
			episode.Signal{Kind: episode.SignalSwitch, Subject: fs, Object: ts, Polarity: -1},
			episode.Signal{Kind: episode.SignalPreference, Subject: ts, Polarity: 1})
		m.prim = primary{subject: ts, polarity: 1, ok: true}
	case emitSwitchTo:
		ts, _ := normSlot(span(y), false)
		if ts == "" || placeWord(ts) {
			return nil
		}
		out = append(out,
			episode.Signal{Kind: episode.SignalSwitch, Object: ts, Polarity: -1},
			episode.Signal{Kind: episode.SignalPreference, Subject: ts, Polarity: 1})
		m.prim = primary{subject: ts, polarity: 1, ok: true}
	case emitSwitchAway:
		if toks[m.start].w == "stop" && toks[m.start+1].w != "using" && !strings.HasSuffix(toks[x[0]].w, "ing") {
			return nil
		}
		if particles[toks[x[0]].w] {
			return nil // "I dropped off the cookies": a phrasal verb
		}
		if toks[m.start].w == "no" && describedBefore(toks, m.start) {
			// "You are no longer hiding the widget": what the code or the
			// assistant now does, not a habit the user left.
			return nil
		}
		if x[1]-x[0] > 2 && movePreps[toks[x[0]+1].w] && !leadStrip[toks[x[0]].w] {
			// "no longer deploy to Heroku": what is left is Heroku.
			x[0] += 2
		}
		s, ok := pref(episode.SignalSwitch, -1, x, false)
		if !ok {
			return nil
		}
		out = append(out, s)
		setPrim(s)
	case emitDecision, emitDecisionNo:
		pol := 1
		if p.emit == emitDecisionNo {
			pol = -1
		}
		if adopt != nil {
			s := episode.Signal{Kind: episode.SignalDecision, Subject: adopt.subject, Object: adopt.object,
				Polarity: pol * adopt.polarity}
			out = append(out, s)
			setPrim(s)
			break
		}
		k := x[0]
		if toks[k].w == "not" {
			pol = -pol
			k++
		}
		s, ok := pref(episode.SignalDecision, pol, [2]int{k, x[1]}, true)
		if !ok {
			return nil
		}
		out = append(out, s)
		setPrim(s)
	case emitFact, emitFactPath:
		if x[1]-x[0] > 6 || y[1] <= y[0] {
			return nil
		}
		val := factValue(text, toks, y)
		if i := strings.Index(val, " ("); i > 0 {
			val = val[:i] // "(see #12)", "(case 8)": an aside, not the value
		}
		if f := strings.Fields(val); len(f) > 1 && preps[strings.ToLower(f[len(f)-1])] {
			return nil // "42 story points per": cut off
		}
		if val == "" {
			return nil
		}
		subj := normSubject(span(x))
		if subj == "" {
			return nil
		}
		head := lastWord(subj)
		// A value is a path, a URL, a number… from its first word on: "is
		// unclear (case 8)" holds a digit but is a state.
		first := strings.Fields(val)[0]
		valueLike := looksLikeValue(first)
		if p.emit == emitFactPath && !(strings.Contains(val, "/") || strings.HasPrefix(val, "~")) {
			return nil
		}
		if strings.HasPrefix(subj, "other ") || strings.HasSuffix(toks[y[0]].w, "ing") && !strings.ContainsAny(toks[y[0]].w, "./") ||
			(repoNouns[subj] || subj == "service" || subj == "app" || subj == "team") && x[1] < len(toks) && toks[x[1]].w == "uses" ||
			subj == "default" || subj == "go" || subj == "go-to" || subj == "favorite" || subj == "preference" || factDeny[head] && !strings.Contains(val, "/") || (!factNouns[head] && !valueLike) {
			return nil
		}
		if !valueLike && (stateWord(toks[y[0]].w) || negators[toks[y[0]].w] || toks[y[0]].w == "too") {
			return nil
		}
		s := episode.Signal{Kind: episode.SignalFact, Subject: subj, Object: val, Polarity: 1}
		out = append(out, s)
		setPrim(s)
	}
	return out
}

// habitVerbs are what "I only …" says a habit with: what one wears, eats,
// buys, watches, plays or travels by.
var habitVerbs = setOf("wear", "eat", "drink", "buy", "purchase", "watch", "read", "play", "cook", "fly", "drive",
	"order", "choose", "pick", "shop", "listen", "stay", "book", "travel", "stream", "consume", "use", "take",
	"ride", "visit", "dine", "cycle", "bike", "walk")

// verbAfterAlways rejects "always" before a past tense or a form of "be"
// ("it has always been", "always was").
func verbAfterAlways(toks []token, x [2]int) bool {
	w := toks[x[0]].w
	switch w {
	case "been", "was", "were", "is", "are", "had", "has", "seems", "seemed", "fails", "works", "returns",
		"forget", "forgets", "miss", "misses", "lose", "loses", "break", "breaks", "mess", "mix", "confuse",
		"struggle", "struggles", "hit", "hits", "crash", "crashes", "get", "gets", "end", "ends", "takes", "take",
		"feel", "feels", "here", "there": // "I always feel like …", "always here to help"
		return false
	}
	return !pastTense(w)
}

// thatClause reports a slot holding a that-clause ("I like that you …"):
// a remark about what happened, not a preference.
func thatClause(toks []token, x [2]int) bool {
	if x[1]-x[0] < 2 {
		return false
	}
	switch toks[x[0]].w {
	case "that", "how", "what", "when", "where", "why", "it's", "it", "this":
		switch toks[x[0]+1].w {
		case "you", "we", "i", "it", "they", "he", "she", "the", "this", "there", "is", "was", "you're", "you've":
			return true
		}
	}
	return false
}

// restricted reports whether slot x is followed by a restrictive relative
// clause ("I avoid restaurants that serve gluten", "never hire people who
// …", no comma before it): the slot alone would claim far more than was said
// ("avoids restaurants"), so no signal is made of it. A clause after a comma
// ("I use pnpm, which is faster") only comments, and the slot stands.
func restricted(toks []token, x [2]int) bool {
	if x[1] <= x[0] || x[1] >= len(toks) || toks[x[1]-1].sep {
		return false
	}
	switch toks[x[1]].w {
	case "that", "who", "whom", "whose":
		return true
	case "where":
		// "use const where possible" says when, not which.
		return !(x[1]+1 < len(toks) && whereWhen[toks[x[1]+1].w])
	}
	return false
}

var whereWhen = setOf("possible", "necessary", "needed", "applicable", "appropriate", "feasible", "practical",
	"relevant", "sensible", "reasonable")

// coordinated extends the last signal of the previous clause to a short
// coordinated item ("…, black and ruff"; "…, not Y").
func coordinated(last episode.Signal, toks []token, text string) (episode.Signal, bool) {
	neg := false
	if toks[0].w == "not" || toks[0].w == "no" {
		if last.Kind != episode.SignalPreference || len(toks) == 1 {
			return episode.Signal{}, false
		}
		neg = true
		toks = toks[1:]
	}
	if !neg {
		// "I prefer a plant-based diet and strongly dislike animal-based
		// supplements": the item carries its own stance, which wins over
		// the previous clause's.
		k := 0
		for k < len(toks)-1 && adverbs[toks[k].w] {
			k++
		}
		if stance := stanceVerbs[toks[k].w]; stance != 0 && k+1 < len(toks) {
			toks = toks[k+1:]
			if stance < 0 {
				last.Kind, last.Polarity = episode.SignalAvoid, -1
			} else {
				last.Kind, last.Polarity = episode.SignalPreference, 1
			}
		} else if k > 0 && likeVerbs[toks[k].w] || toks[0].w == "only" {
			// "… and only support indie brands": a verb of its own.
			return episode.Signal{}, false
		}
	}
	if exampleWords[toks[0].w] {
		// "reptiles, especially snakes and lizards": examples of the
		// previous item, which holds them; no items of their own.
		return episode.Signal{}, false
	}
	if len(toks) > 4 || itemStart[toks[0].w] || preps[toks[0].w] {
		// A clause, or a phrase of place or manner ("… compact and in a
		// single file"), is no item of the previous clause's list.
		return episode.Signal{}, false
	}
	if !neg && choiceVerbs[toks[0].w] {
		// "don't use var, use const": the item is a preference whatever
		// the previous clause was.
		if len(toks) == 1 {
			return episode.Signal{}, false
		}
		last.Kind, last.Polarity = episode.SignalPreference, 1
	}
	for _, t := range toks {
		if finiteVerbs[t.w] || t.w == "`" && len(toks) > 1 || objPronouns[t.w] {
			// A clause ("… and find them childish"), not an item.
			return episode.Signal{}, false
		}
	}
	subj, obj := normSlot(text[toks[0].start:toks[len(toks)-1].end], true)
	if subj == "" {
		return episode.Signal{}, false
	}
	s := last
	s.Subject, s.Object = subj, obj
	if neg {
		s.Kind, s.Polarity = episode.SignalAvoid, -1
	}
	return s, true
}

// sharedHead reports whether a coordinated item and the previous one are
// one item whose modifiers were coordinated ("interactive and gamified
// learning modes", "dry, factual textbooks", "games with dark or horror
// themes"): the previous item ended its clause on a single word that reads
// as a modifier (no plural noun: "podcasts and long lectures" are two
// items), and the new item is a phrase of its own, which names the head
// they share.
func sharedHead(prev, item episode.Signal, conj string, prevToks, itemToks []token) bool {
	if len(prevToks) == 0 || len(itemToks) < 2 || prev.Subject == "" || prev.Object != "" {
		return false
	}
	if prev.Kind != item.Kind || prev.Polarity != item.Polarity || !strings.Contains(item.Subject, " ") {
		return false
	}
	if conj == "" && strings.Contains(prev.Subject, " ") {
		// "any type of sugar, including natural sugars": after a comma
		// only a lone modifier ("dry, factual textbooks") shares a head.
		return false
	}
	w := prevToks[len(prevToks)-1].w
	if normSubject(w) != lastWord(prev.Subject) || prevToks[len(prevToks)-1].sep && w != lastWord(prev.Subject) {
		return false
	}
	for _, t := range itemToks[1:] {
		if postModifiers[t.w] {
			// "any clothing or accessories made from animal products":
			// what follows the last item qualifies them all.
			return true
		}
	}
	return !strings.HasSuffix(w, "s") || strings.HasSuffix(w, "ous") || strings.HasSuffix(w, "ss")
}

// postModifiers open what qualifies a noun from behind.
var postModifiers = setOf("made", "containing", "with", "without", "from", "involving", "featuring", "based",
	"derived", "that", "which", "who")

// factTail reports whether a short coordinated clause finishes the fact
// about the user the previous clause ended on ("a severe peanut" and "tree
// nut allergy"): no verb, no pronoun, no clause of its own.
func factTail(fact episode.Signal, prevToks, toks []token) bool {
	if len(prevToks) == 0 || len(toks) == 0 || len(toks) > 4 {
		return false
	}
	last := prevToks[len(prevToks)-1]
	if last.sep || !strings.HasSuffix(strings.ToLower(fact.Object), last.w) {
		return false
	}
	if f := toks[0].w; itemStart[f] || adverbs[f] || exampleWords[f] || f == "only" || choiceVerbs[f] || likeVerbs[f] ||
		stanceVerbs[f] != 0 || taskVerbs[f] {
		return false // "I'm blind and use a screen reader": a clause of its own
	}
	for _, t := range toks {
		// A preposition most often follows a verb of a clause of its
		// own ("… and adopt from shelters").
		if finiteVerbs[t.w] || negators[t.w] || modals[t.w] || objPronouns[t.w] || preps[t.w] || t.w == "`" {
			return false
		}
	}
	return true
}

// sharedModifier reports whether a bare plural noun coordinated after an
// item with modifiers shares them: "animated shows or movies", "crowded
// conventions or events" (alone, "movies" would claim more than was
// said). A name ("React Query and Zustand") keeps its own item.
func sharedModifier(prev, item episode.Signal, conj string, prevToks, itemToks []token, text string) bool {
	if conj == "" || len(itemToks) != 1 || len(prevToks) == 0 || prev.Object != "" || item.Object != "" {
		return false
	}
	if prev.Kind != item.Kind || prev.Polarity != item.Polarity || !strings.Contains(prev.Subject, " ") {
		return false
	}
	if normSubject(prevToks[len(prevToks)-1].w) != lastWord(prev.Subject) {
		return false
	}
	t := itemToks[0]
	if c := text[t.start]; c < 'a' || c > 'z' {
		return false
	}
	return strings.HasSuffix(t.w, "s") && !strings.HasSuffix(t.w, "ss") && !strings.HasSuffix(t.w, "ous")
}

// modifierFragment reports whether the previous item is a lone modifier
// cut from the noun phrase the next clause carries on ("logical and
// analytical learning approaches that involve …", "vegan, plant-based
// formulas that are …"): one word that is no plural noun, and a next
// clause that is a noun phrase with a relative clause, not a verb's.
func modifierFragment(prev episode.Signal, conj string, prevToks, toks []token) bool {
	if len(prevToks) == 0 || len(toks) < 3 || prev.Object != "" {
		return false
	}
	if conj != "" && strings.Contains(prev.Subject, " ") {
		// Only a comma lists modifiers after a phrase ("clothing from
		// sustainable, eco-friendly brands that …"); after "and" comes
		// as often a verb of its own.
		return false
	}
	w := prevToks[len(prevToks)-1].w
	if normSubject(w) != lastWord(prev.Subject) || strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ous") && !strings.HasSuffix(w, "ss") {
		return false
	}
	f := toks[0].w
	if finiteVerbs[f] || itemStart[f] || preps[f] || adverbs[f] || likeVerbs[f] || stanceVerbs[f] != 0 || choiceVerbs[f] ||
		f == "only" {
		return false
	}
	for _, t := range toks[1:] {
		switch t.w {
		case "that", "which", "who":
			return true
		}
	}
	return false
}

// relativeOpen reports whether a clause ends inside a relative or an
// adverbial clause ("beauty brands that test on animals", "… as it is
// perceived by the artist"): what is coordinated after it carries that
// clause on.
func relativeOpen(toks []token) bool {
	for i := 1; i < len(toks); i++ {
		switch toks[i].w {
		case "that", "which", "who":
			return !toks[i-1].sep
		case "as", "because", "since", "when", "while", "whenever", "where", "if", "unless", "until", "although",
			"though", "whereas":
			if i+1 < len(toks) && clauseSubjects[toks[i+1].w] {
				return true // "as it is …", "because they …"
			}
		}
	}
	return false
}

// placePreps open where, for whom or over what, not what qualifies a noun
// ("with", "from" do).
var placePreps = setOf("in", "on", "at", "inside", "within", "across", "for", "during", "around", "over")

// adjectiveLike reports a word with an adjective's ending ("monotonous",
// "abstract" not): before a comma inside a noun phrase, more modifiers of
// the same noun follow.
func adjectiveLike(w string) bool {
	for _, e := range []string{"ous", "ive", "al", "ful", "ic", "able", "ible", "less", "ish", "ent", "ant"} {
		if len(w) > len(e)+2 && strings.HasSuffix(w, e) {
			return true
		}
	}
	return false
}

// pointsBack reports a phrase holding a pronoun ("venues featuring it").
func pointsBack(toks []token) bool {
	return slices.ContainsFunc(toks, func(t token) bool { return objPronouns[t.w] })
}

// relativeSubject reports a subject that holds its relative clause.
func relativeSubject(s string) bool {
	return strings.Contains(s, " that ") || strings.Contains(s, " who ") || strings.Contains(s, " where ")
}

// phraseTail reports a short coordinated phrase with no clause of its
// own: no pronoun, negation or verb of being, nothing after a comma.
func phraseTail(toks []token) bool {
	if len(toks) == 0 || len(toks) > 5 {
		return false
	}
	for _, t := range toks {
		if clauseSubjects[t.w] || objPronouns[t.w] || negators[t.w] || finiteVerbs[t.w] || modals[t.w] ||
			relativeStops[t.w] || t.w == "`" || t.sep && t != toks[len(toks)-1] {
			return false
		}
	}
	return true
}

// examplesOpen reports whether a clause ends in a list of examples ("…
// animal products like leather,"; "…, such as Rust").
func examplesOpen(toks []token) bool {
	for i := 1; i < len(toks); i++ {
		w, prev := toks[i].w, toks[i-1].w
		if !exampleWords[w] || w == "say" {
			continue
		}
		if w == "like" && (adverbs[prev] || negators[prev] || itemStart[prev] || prev == "do" || prev == "would" ||
			prev == "i'd" || prev == "you'd" || prev == "really") {
			continue // "I do not like card games": the verb
		}
		return true
	}
	return false
}

// clauseSubjects open a clause after a subordinating word.
var clauseSubjects = setOf("i", "i'm", "it", "it's", "they", "they're", "we", "we're", "you", "you're", "he",
	"she", "this", "that", "there", "the", "my", "our", "their", "its")

// nounPhraseAfter reports whether a coordinated clause of three words or
// more opens like a noun phrase (no verb, pronoun, preposition, adverb or
// example word first) after an item that ended its clause.
func nounPhraseAfter(prev episode.Signal, prevToks, toks []token) bool {
	if len(prevToks) == 0 || len(toks) < 3 || prev.Object != "" {
		return false
	}
	if normSubject(prevToks[len(prevToks)-1].w) != lastWord(prev.Subject) {
		return false
	}
	f := toks[0].w
	return !(finiteVerbs[f] || itemStart[f] || preps[f] || adverbs[f] || likeVerbs[f] || stanceVerbs[f] != 0 ||
		choiceVerbs[f] || exampleWords[f] || objPronouns[f] || f == "only" || taskVerbs[f])
}

// sameClaim reports whether two signals make the same claim (a clause may
// state one twice).
func sameClaim(a, b episode.Signal) bool {
	return a.Kind == b.Kind && a.Subject == b.Subject && a.Object == b.Object && a.Polarity == b.Polarity
}

// qualifiedTail reports whether a coordinated clause too long to be an
// item is a noun phrase whose qualifier also holds for the previous item,
// which ended its clause: "… any clothing or accessories made from animal
// products" (alone, "clothing" would claim more than was said).
func qualifiedTail(prev episode.Signal, prevToks, toks []token) bool {
	if !nounPhraseAfter(prev, prevToks, toks) {
		return false
	}
	qualified := false
	for i, t := range toks {
		if i > 0 && postModifiers[t.w] {
			qualified = true // "made" here is a participle, no finite verb
			continue
		}
		if objPronouns[t.w] && qualified {
			// "any events or venues featuring it": the qualifier holds
			// for both and points back; the items alone claim more than
			// was said, and with it say nothing.
			return true
		}
		if finiteVerbs[t.w] || objPronouns[t.w] {
			return false
		}
	}
	return qualified
}

// relativeTail reports whether a coordinated clause is a noun phrase
// followed by a restrictive relative clause ("… or movies that are long"),
// after an item that ended its clause.
func relativeTail(prev episode.Signal, prevToks, toks []token) bool {
	if !nounPhraseAfter(prev, prevToks, toks) {
		return false
	}
	for i, t := range toks {
		switch {
		case i > 0 && (t.w == "that" || t.w == "which" || t.w == "who"):
			return !toks[i-1].sep
		case finiteVerbs[t.w] || objPronouns[t.w]:
			return false
		}
	}
	return false
}

// relativeAt returns where the relative clause of toks starts, or -1.
func relativeAt(toks []token) int {
	for i := 1; i < len(toks); i++ {
		switch toks[i].w {
		case "that", "which", "who":
			return i
		}
	}
	return -1
}

// relativeClauseEnds reports whether the relative clause at toks[at]
// reaches the end of toks: nothing after it that relativeClause would cut.
func relativeClauseEnds(toks []token, at int) bool {
	for _, t := range toks[at+1:] {
		if relativeStops[t.w] {
			return false
		}
	}
	return len(toks)-at <= maxRelativeWords
}

// lastWord is the last word of a space-separated phrase.
func lastWord(s string) string { return s[strings.LastIndexByte(s, ' ')+1:] }

// avoidsAfter reports whether a liked slot opens with a verb of avoiding
// ("I prefer to stay away from X" is no liking of "stay away").
func avoidsAfter(toks []token, x [2]int) bool {
	k := x[0]
	if toks[k].w == "to" && k+1 < x[1] {
		k++
	}
	switch toks[k].w {
	case "avoid", "avoiding", "stay", "staying", "steer", "steering", "skip", "skipping", "shun":
		return true
	}
	return false
}

// taskWish reports whether "want" or "need" takes a verb whose object is
// a specific thing ("want to modify the stack trace", "need to change this
// file"): a wish about the task at hand, not a preference.
func taskWish(verb string, toks []token, a, b int) bool {
	if verb != "want" && verb != "need" {
		return false
	}
	if a < b && toks[a].w == "to" {
		a++
	}
	return a+1 < b && specific[toks[a+1].w]
}

// objPronouns stand for something said before: an item holding one is a
// clause about it.
var objPronouns = setOf("them", "it", "him", "her", "me", "us", "you")

// anaphoric words open a slot that points back at what was said before
// ("I'm not interested in that genre", "I love this one"): no claim of
// its own.
var anaphoric = setOf("that", "this", "those", "these", "it", "them", "such")

// stanceNouns name a liking or a dislike ("a strong aversion to X").
var stanceNouns = setOf("aversion", "dislike", "distaste", "objection", "preference", "liking", "fondness")

// dontAdverbs may stand between "don't" and its verb.
var dontAdverbs = setOf("completely", "fully", "entirely", "quite", "exactly", "necessarily", "particularly", "really")

// stanceVerbs open a coordinated item with a stance of its own: +1 for a
// liking, -1 for a dislike.
var stanceVerbs = map[string]int{"like": 1, "likes": 1, "love": 1, "loves": 1, "enjoy": 1, "enjoys": 1,
	"prefer": 1, "prefers": 1, "dislike": -1, "dislikes": -1, "hate": -1, "hates": -1, "detest": -1,
	"avoiding": -1, "disliking": -1, "hating": -1,
	"detests": -1, "loathe": -1, "loathes": -1, "avoid": -1, "avoids": -1}

// choiceVerbs open a coordinated item that states a preference.
var choiceVerbs = setOf("use", "using", "prefer", "try", "choose", "pick")

// itemStart and finiteVerbs keep full clauses ("and it works", "or we
// could …") from being taken as coordinated items.
var (
	itemStart = setOf("it", "it's", "this", "that", "that's", "they", "they're", "there", "there's", "we",
		"we're", "i", "i'm", "you", "you're", "he", "she", "what", "which", "who", "if", "when", "then",
		"also", "maybe", "please", "thanks", "thank", "ok", "okay")
	finiteVerbs = setOf("is", "are", "was", "were", "be", "been", "has", "have", "had", "do", "does", "did",
		"will", "would", "can", "could", "should", "must", "might", "may", "shall", "isn't", "aren't", "don't",
		"doesn't", "didn't", "won't", "can't", "works", "worked", "seems", "makes", "made", "looks")
)

// dontDeny are verbs after "don't"/"never" that make no preference ("I
// don't know", "don't worry"); likeVerbs turn "don't VERB X" into avoid X.
var (
	dontDeny = setOf("know", "think", "understand", "see", "worry", "mind", "care", "have", "need", "get",
		"remember", "believe", "recall", "seem", "feel", "bother", "hesitate", "be", "expect", "mean",
		"agree", "recognize", "recognise", "find", "hear", "matter", "apologize", "apologise", "guess",
		"suppose", "fret", "panic", "wait", "stop", "go", "let", "ask", "say", "tell", "wanna", "gotta",
		"give", "quit", "lose", "underestimate", "doubt", "settle",
		"really", "quite", "actually", "necessarily", "always", "usually", "even", "just", "forget's",
		"happen", "exist", "work", "seem", "look", "sound", "notice", "trust", "get", "bother", "blame")
	likeVerbs  = setOf("like", "love", "enjoy", "prefer", "want", "fancy", "appreciate")
	noNotAvoid = setOf("problem", "problems", "worries", "worry", "need", "rush", "idea", "way", "luck",
		"thanks", "clue", "doubt", "issue", "issues", "error", "errors", "change", "changes", "one", "matter",
		"longer", "point", "wonder", "reason", "difference", "response", "output", "results")
)

// pastTense guesses a past tense: "-ed" words and common irregular forms.
func pastTense(w string) bool {
	if irregularPast[w] {
		return true
	}
	return len(w) > 4 && strings.HasSuffix(w, "ed") && !strings.HasSuffix(w, "eed")
}

var irregularPast = setOf("said", "did", "had", "was", "were", "got", "made", "told", "saw", "knew",
	"thought", "went", "wrote", "ran", "took", "gave", "came", "found", "meant", "felt", "left", "kept",
	"brought", "bought", "built", "sent", "spent", "heard", "understood", "forgot", "became", "began",
	"broke", "chose", "drove", "fell", "held", "led", "lost", "paid", "put", "read", "sat", "set", "stood",
	"won", "been", "done", "gone", "seen", "taken", "given", "written", "known")

// placeWord rejects switch targets that are places, not choices ("switch
// to the main branch", "move to the next step").
func placeWord(s string) bool {
	head := s[strings.LastIndexByte(s, ' ')+1:]
	switch head {
	case "branch", "directory", "folder", "dir", "tab", "mode", "step", "file", "line", "page", "window",
		"screen", "terminal", "root", "top", "bottom", "end", "beginning", "start", "section", "part",
		"phase", "task", "issue", "ticket", "commit", "version", "release", "main", "master", "next",
		"previous", "left", "right":
		return true
	}
	return false
}

// Fact subjects: nouns that name a setting or a place (fact X is Y is
// kept when X ends with one, or when Y is a value: a path, URL, number,
// address or redaction placeholder), and abstract nouns that never make
// one ("the problem is …").
var (
	factNouns = setOf("port", "host", "hostname", "url", "uri", "endpoint", "domain", "address", "ip",
		"database", "db", "server", "api", "password", "passphrase", "token", "secret", "username",
		"email", "region", "zone", "bucket", "cluster", "namespace", "repo", "repository", "registry",
		"branch", "version", "directory", "dir", "folder", "path", "home", "stack", "backend", "frontend",
		"runtime", "schema", "timezone", "account", "org", "organization", "organisation", "tenant", "id",
		"dsn", "vpc", "subnet", "queue", "topic", "channel", "proxy", "gateway", "license", "licence",
		"owner", "maintainer", "team", "language", "framework", "orm", "editor", "shell", "os", "platform",
		"ci", "pipeline", "image", "container", "environment", "env", "prod", "production", "staging",
		"config", "configuration", "docs", "documentation", "wiki", "dashboard", "deadline", "budget",
		"cloud", "provider", "hosting", "name", "key", "secret", "user", "node", "python", "go", "cron",
		"command", "cache", "monorepo", "linter", "formatter", "bundler", "runner", "manager", "script", "target",
		"schedule", "service", "app", "website", "site", "remote", "origin", "upstream", "default")
	factDeny = setOf("problem", "issue", "error", "goal", "reason", "point", "question", "idea", "thing",
		"difference", "result", "output", "fix", "plan", "decision", "bug", "answer", "solution",
		"change", "test", "code", "function", "approach", "task", "request", "fact", "case", "way",
		"trick", "catch", "thing", "problem", "rest", "same", "first", "last", "next", "one", "other",
		"bet", "guess", "move", "turn", "score", "bid", "pick", "choice", "wager", "stake", "hand", "balance")
)

// stateWord rejects "X is failing / broken / slow": states, not facts.
func stateWord(w string) bool {
	switch w {
	case "not", "failing", "broken", "wrong", "empty", "missing", "down", "slow", "up", "ok", "okay",
		"fine", "done", "ready", "working", "good", "bad", "great", "too", "very", "still", "also", "now",
		"always", "never", "already", "so", "quite", "pretty", "really", "just", "more", "less", "much",
		"currently", "probably", "definitely", "maybe", "correct", "incorrect", "right", "better", "worse":
		return true
	}
	return strings.HasSuffix(w, "ing") || pastTense(w)
}

// factValue returns the value slot of a fact as written (case kept,
// trailing punctuation dropped), at most 100 bytes.
func factValue(text string, toks []token, y [2]int) string {
	v := text[toks[y[0]].rawStart:toks[y[1]-1].rawEnd]
	v = strings.TrimRight(v, ".,;:!?)\"'")
	v = strings.TrimLeft(v, "(\"'")
	v = collapseSpace(v)
	return clipBytes(v, 100)
}

// looksLikeValue reports a path, URL, number, address, version or
// redaction placeholder.
func looksLikeValue(v string) bool {
	if strings.Contains(v, "://") || strings.Contains(v, "[REDACTED") || strings.HasPrefix(v, "/") ||
		strings.HasPrefix(v, "~/") || strings.HasPrefix(v, "./") || strings.Contains(v, "@") {
		return true
	}
	for _, f := range strings.Fields(v) {
		digits := 0
		for i := 0; i < len(f); i++ {
			if f[i] >= '0' && f[i] <= '9' {
				digits++
			}
		}
		if digits > 0 && digits*2 >= len(f) {
			return true
		}
		if strings.Contains(f, "/") || (strings.Contains(f, ":") && digits > 0) {
			return true
		}
	}
	return false
}

// correctionMarker returns how many words at the start of toks say the
// assistant got it wrong ("no,", "that's wrong", "actually,", "I said"),
// or 0.
func correctionMarker(toks []token) int {
	n := 0
	for n < len(toks)-1 && interjections[toks[n].w] {
		n++
	}
	lead := n
	for n < len(toks) {
		k := oneMarker(toks[n:])
		if k == 0 {
			break
		}
		n += k
	}
	if n == lead {
		return 0
	}
	return n
}

// interjections may come before a correction marker ("Hmm, no.").
var interjections = setOf("hmm", "hm", "well", "oh", "ugh", "wait", "sorry", "um", "uh", "err", "erm",
	"argh", "sigh", "ah")

var correctionSeqs = [][]string{
	{"that's", "not", "what", "i", "asked", "for"}, {"that's", "not", "what", "i", "asked"},
	{"that's", "not", "what", "i", "wanted"}, {"that's", "not", "what", "i", "meant"},
	{"that", "is", "not", "what", "i", "asked"}, {"not", "what", "i", "asked"}, {"not", "what", "i", "meant"},
	{"that", "is", "not", "right"}, {"that", "is", "not", "correct"}, {"that's", "not", "right"},
	{"that's", "not", "correct"}, {"that's", "not", "it"}, {"that's", "still", "wrong"},
	{"that", "is", "wrong"}, {"that", "is", "incorrect"}, {"that's", "wrong"}, {"that's", "incorrect"},
	{"this", "is", "wrong"}, {"it's", "wrong"}, {"this", "is", "not", "right"}, {"this", "isn't", "right"},
	{"that", "isn't", "right"}, {"that", "isn't", "correct"}, {"you're", "wrong"}, {"you", "are", "wrong"},
	{"you're", "mistaken"}, {"you", "are", "mistaken"}, {"wrong", "again"}, {"still", "wrong"},
	{"scratch", "that"}, {"i", "told", "you"}, {"i", "changed", "my", "mind"}, {"changed", "my", "mind"}, {"i've", "changed", "my", "mind"}, {"i", "asked", "you", "to"}, {"i", "asked", "for"}, {"i", "said"}, {"i", "meant"},
}

// correctionFirst holds the first words of correctionSeqs.
var correctionFirst = func() map[string]bool {
	m := map[string]bool{}
	for _, seq := range correctionSeqs {
		m[seq[0]] = true
	}
	return m
}()

func oneMarker(toks []token) int {
	w := toks[0].w
	endOrSep := len(toks) == 1 || toks[0].sep
	switch w {
	case "no":
		if endOrSep {
			return 1
		}
		switch toks[1].w {
		case "that's", "that", "it's", "you", "you're", "don't", "not", "stop", "never", "please", "actually",
			"wrong", "i", "we", "use", "just", "it", "instead":
			return 1
		}
		return 0
	case "nope", "nah", "wrong", "incorrect":
		return 1
	case "actually":
		// "Actually, …", "Actually we moved to …": what follows revises
		// what was said or assumed.
		return 1
	case "wait", "hmm":
		return 0
	case "not":
		if len(toks) > 1 && toks[1].w == "quite" {
			return 2
		}
	}
	if !correctionFirst[w] {
		return 0
	}
	for _, seq := range correctionSeqs {
		if len(seq) > len(toks) {
			continue
		}
		ok := true
		for i, s := range seq {
			if toks[i].w != s {
				ok = false
				break
			}
		}
		if ok {
			return len(seq)
		}
	}
	return 0
}

// ackRemainder reports a "no" that is polite, not a correction ("no,
// thanks", "no worries, that's fine").
func ackRemainder(toks []token) bool {
	if len(toks) == 0 {
		return false
	}
	switch toks[0].w {
	case "thanks", "thank", "worries", "problem", "need", "rush", "it's", "that's", "all":
		if toks[0].w == "it's" || toks[0].w == "that's" {
			return len(toks) > 1 && (toks[1].w == "fine" || toks[1].w == "ok" || toks[1].w == "okay" || toks[1].w == "good")
		}
		if toks[0].w == "all" {
			return len(toks) > 1 && toks[1].w == "good"
		}
		return true
	}
	return false
}

// notButCorrection finds "not X but Y" ("use pnpm, not npm" is handled by
// coordination): a correction whose Subject is Y and Object X.
func notButCorrection(toks []token, text string) (episode.Signal, bool) {
	for k := 0; k < len(toks); k++ {
		if toks[k].w != "not" {
			continue
		}
		if k > 0 {
			switch toks[k-1].w {
			case "it's", "it", "is", "that's", "was", "use", "meant", "want", "should", "be", "but", "i",
				"the", "answer", "fix":
			default:
				continue
			}
		}
		if k+1 < len(toks) {
			switch toks[k+1].w {
			case "sure", "only", "just", "yet", "really", "that", "able", "going", "too", "very", "quite",
				"necessarily", "always", "exactly", "bad", "a", "an", "the":
				continue
			}
		}
		b := -1
		for j := k + 2; j < len(toks) && j <= k+5; j++ {
			if toks[j].w == "but" {
				b = j
				break
			}
		}
		if b < 0 || b+1 >= len(toks) {
			continue
		}
		e := b + 1
		for e < len(toks) && e-b <= 6 && !slotStops[toks[e].w] {
			e++
			if toks[e-1].sep {
				break
			}
		}
		if e == b+1 {
			// "but" is followed by a stop word ("but as a document",
			// "but when you have time"): no Y to switch to.
			continue
		}
		x := normSubject(text[toks[k+1].start:toks[b-1].end])
		y := normSubject(text[toks[b+1].start:toks[e-1].end])
		if x == "" || y == "" || x == y {
			continue
		}
		return episode.Signal{Kind: episode.SignalCorrection, Subject: y, Object: x, Polarity: 1}, true
	}
	return episode.Signal{}, false
}

// clause is one clause of a sentence; coord says it was joined to the
// previous one by a comma, "and", "or" or "nor" (a coordinated item can
// extend the previous clause's signal).
type clause struct {
	toks  []token
	coord bool
	conj  string // the coordinating word before it ("and", "or"), "" after a comma
}

// Clause boundaries: words that start a new clause, coordinating or not.
var (
	coordWords = setOf("and", "or", "nor", "&", "plus")
	subWords   = setOf("but", "so", "then", "because", "although", "though", "while", "whereas", "cause",
		"however", "otherwise", "also")
)

// splitClauses splits a sentence at separators and conjunctions. A clause
// of fillers only ("…, please") is glued to the previous one, and one
// starting with "instead of" to the next ("instead of npm, use pnpm").
// Clauses are sub-slices of toks; a glued one spans both parts and what
// lies between them.
func splitClauses(toks []token) []clause {
	type span struct {
		a, b  int
		coord bool
		conj  string
	}
	spans := make([]span, 0, 4)
	start, coord, conj := 0, true, ""
	flush := func(end int, next bool) {
		if end > start {
			spans = append(spans, span{start, end, coord, conj})
		}
		coord, conj = next, ""
	}
	for i, t := range toks {
		switch {
		case i > 0 && coordWords[t.w]:
			flush(i, true)
			start, conj = i+1, t.w
			continue
		case i > 0 && subWords[t.w] && !(t.w == "so" && i+1 < len(toks) && toks[i+1].w == "that"):
			flush(i, false)
			start = i
		}
		if t.sep && !(i+1 < len(toks) && toks[i+1].w == "not") && !modifierComma(toks, i) { // "X, not Y" is one clause
			flush(i+1, true)
			start = i + 1
		}
	}
	flush(len(toks), false)
	merged := spans[:0]
	for i := 0; i < len(spans); i++ {
		sp := spans[i]
		if len(merged) > 0 && onlyFillers(toks[sp.a:sp.b]) {
			merged[len(merged)-1].b = sp.b
			continue
		}
		if i+1 < len(spans) && sp.b-sp.a >= 2 && (toks[sp.a].w == "instead" && toks[sp.a+1].w == "of" ||
			toks[sp.a].w == "rather" && toks[sp.a+1].w == "than") {
			sp.b = spans[i+1].b
			i++
		}
		merged = append(merged, sp)
	}
	out := make([]clause, len(merged))
	for i, sp := range merged {
		out[i] = clause{toks: toks[sp.a:sp.b:sp.b], coord: sp.coord, conj: sp.conj}
	}
	return out
}

// modifierComma reports a comma after the first word of what a verb of
// taste takes when that word is a modifier and another follows: "I only
// use vegan, cruelty-free beauty products", "I prefer self-directed,
// independent learning" are one noun phrase, not a list ("I like Go,
// Rust and Zig" is one).
func modifierComma(toks []token, i int) bool {
	if i < 1 || i+2 >= len(toks) || !tasteVerbs[toks[i-1].w] && !qualifierPreps[toks[i-1].w] {
		return false
	}
	w, next := toks[i].w, toks[i+1].w
	modifier := func(w string) bool {
		return adjectiveLike(w) || plainAdjectives[w] || strings.Contains(w, "-") || pastTense(w) || strings.HasSuffix(w, "an")
	}
	return modifier(w) && modifier(next) && !coordWords[next] && !finiteVerbs[next]
}

// qualifierPreps open a phrase that qualifies a noun, whose modifiers a
// comma may part as well: "vehicles with large, intrusive front grilles",
// "clothing made from organic, vegan materials".
var qualifierPreps = setOf("with", "without", "from", "of")

// plainAdjectives are common adjectives without an adjective's ending.
var plainAdjectives = setOf("large", "big", "small", "bright", "loud", "dark", "heavy", "light", "bold", "soft",
	"long", "short", "strong", "thick", "thin", "tall", "wide", "high", "low", "fast", "slow", "cheap", "warm",
	"cold", "hot", "sweet", "spicy", "quiet", "simple", "clean", "fresh", "raw", "rich", "plain", "deep",
	"old", "new", "young", "modern", "natural", "wild", "huge", "tiny", "flashy", "busy", "crowded")

// tasteVerbs take a noun phrase of the user's taste.
var tasteVerbs = setOf("prefer", "use", "like", "love", "enjoy", "wear", "eat", "buy", "avoid", "dislike", "hate",
	"want", "choose", "favor", "favour")

// fillers are dropped from the start of a clause before matching.
var fillers = setOf("please", "pls", "plz", "also", "and", "but", "so", "just", "oh", "btw", "ok", "okay",
	"well", "then", "plus", "hey", "hi", "yes", "yeah", "yep", "sure", "alright", "great", "cool", "nice",
	"thanks", "kindly", "now", "ideally", "personally", "honestly", "basically", "overall", "generally",
	"again", "hmm", "right", "anyway", "anyways", "fyi", "note", "reminder", "remember", "important",
	"seriously", "really", "and,", "or")

func onlyFillers(toks []token) bool {
	for _, t := range toks {
		if !fillers[t.w] && t.w != "thank" && t.w != "you" {
			return false
		}
	}
	return true
}

// stripFillers drops leading fillers and reports whether the clause said
// "please" anywhere.
func stripFillers(toks []token) ([]token, bool) {
	please := false
	for _, t := range toks {
		if t.w == "please" || t.w == "pls" || t.w == "plz" {
			please = true
		}
	}
	for len(toks) > 0 {
		if fillers[toks[0].w] {
			// "so that", "right now" and the like are not fillers before
			// something that needs them; keep "then" when nothing follows.
			toks = toks[1:]
			continue
		}
		// A leading scope ("in this repo, don't …", "here we use …") says
		// where, not what.
		if toks[0].w == "here" && len(toks) > 1 && !beForms[toks[1].w] {
			toks = toks[1:]
			continue
		}
		if len(toks) > 3 && (toks[0].w == "in" || toks[0].w == "for") && (toks[1].w == "this" || toks[1].w == "our") &&
			scopeNouns[toks[2].w] {
			toks = toks[3:]
			continue
		}
		break
	}
	return toks, please
}

// trimLead drops the given words from the start of toks.
func trimLead(toks []token, words ...string) []token {
	for len(toks) > 0 {
		found := false
		for _, w := range words {
			if toks[0].w == w {
				found = true
				break
			}
		}
		if !found {
			break
		}
		toks = toks[1:]
	}
	return toks
}

// conditional reports a clause that only states a condition.
func conditional(toks []token) bool {
	switch toks[0].w {
	case "if", "unless", "whether", "suppose", "assuming", "supposing", "what":
		return true
	case "in":
		return len(toks) > 1 && toks[1].w == "case"
	}
	return false
}

// clausePerson returns 'i' for a clause in the first person singular, 'w'
// for the first person plural (a team, a codebase), 'o' for a third
// person, 0 for none (an imperative, a request to "you" or a fragment,
// which inherits the previous clause's).
func clausePerson(toks []token) byte {
	for _, t := range toks {
		switch t.w {
		case "i", "i'm", "i'd", "i've", "i'll", "my", "me", "myself", "mine":
			return 'i'
		case "we", "we're", "we'd", "we've", "we'll", "our", "us", "let's", "team":
			return 'w'
		case "they", "their", "he", "she", "his", "her", "they're", "he's", "she's":
			return 'o'
		}
	}
	return 0
}

// hasGlobalMarker finds "in general", "in all my projects", "everywhere"…
func hasGlobalMarker(toks []token) bool {
	for i, t := range toks {
		switch t.w {
		case "generally", "globally", "everywhere", "universally":
			return true
		case "general":
			if i > 0 && toks[i-1].w == "in" {
				return true
			}
		case "all", "every", "any", "each", "across":
			j := i + 1
			for j < len(toks) && j <= i+2 && (toks[j].w == "my" || toks[j].w == "our" || toks[j].w == "the" ||
				toks[j].w == "of" || toks[j].w == "your") {
				j++
			}
			if j < len(toks) && scopeNouns[toks[j].w] && (t.w != "any" || i > 0 && toks[i-1].w == "in") {
				return true
			}
		}
	}
	return false
}

// hasProjectMarker finds "this repo", "our codebase", "in here"…
func hasProjectMarker(toks []token) bool {
	for i, t := range toks {
		switch t.w {
		case "this", "our", "current":
			if i+1 < len(toks) && scopeNouns[toks[i+1].w] {
				return true
			}
		case "the":
			if i+1 < len(toks) && repoNouns[toks[i+1].w] {
				return true
			}
		case "generated", "vendored":
			return true // "never edit the generated client": a part of this codebase
		case "here":
			// "in here", "use pnpm here", "here we use tabs"; not "here is
			// the log".
			if i+1 < len(toks) && beForms[toks[i+1].w] || i > 0 && (toks[i-1].w == "over" || toks[i-1].w == "from" ||
				toks[i-1].w == "come" || toks[i-1].w == "get" || toks[i-1].w == "is" || toks[i-1].w == "are") {
				continue
			}
			return true
		}
	}
	return false
}

var repoNouns = setOf("project", "repo", "repository", "codebase", "workspace", "monorepo")

var scopeNouns = setOf("project", "projects", "repo", "repos", "repository", "repositories", "codebase",
	"codebases", "code", "service", "services", "app", "apps", "application", "package", "module",
	"crate", "workspace", "monorepo", "library", "lib", "tool", "cli", "team")

var fromNowOn = [][]string{{"from", "now", "on"}, {"going", "forward"}, {"moving", "forward"},
	{"from", "here", "on"}, {"from", "now"}, {"henceforth"}, {"in", "future"}, {"in", "the", "future"}}

func fromNowOnAt(toks []token) int {
	for i := range toks {
		switch toks[i].w {
		case "from", "going", "moving", "henceforth", "in":
		default:
			continue
		}
		for _, seq := range fromNowOn {
			if i+len(seq) <= len(toks) {
				ok := true
				for k, s := range seq {
					if toks[i+k].w != s {
						ok = false
						break
					}
				}
				if ok {
					return i
				}
			}
		}
	}
	return -1
}

// withoutFromNowOn returns toks without the "from now on" phrase and
// what precedes it when it opens the sentence.
func withoutFromNowOn(toks []token) []token {
	i := fromNowOnAt(toks)
	if i < 0 {
		return toks
	}
	n := 0
	for _, seq := range fromNowOn {
		if i+len(seq) <= len(toks) {
			ok := true
			for k, s := range seq {
				if toks[i+k].w != s {
					ok = false
					break
				}
			}
			if ok {
				n = len(seq)
				break
			}
		}
	}
	if i == 0 {
		rest := toks[n:]
		if len(rest) > 0 && rest[0].w == "on" {
			rest = rest[1:]
		}
		rest, _ = stripFillers(rest)
		return rest
	}
	return toks[:i]
}

func joinTokens(text string, toks []token) string {
	if len(toks) == 0 {
		return ""
	}
	return text[toks[0].start:toks[len(toks)-1].end]
}

// isQuestion reports a sentence that asks rather than states: it ends
// with "?" or opens like a question ("should we …", "do you …"). Polite
// requests ("can you …", "could you please …") are statements.
func isQuestion(m string, a, b int, toks []token) bool {
	w0 := toks[0].w
	w1 := ""
	if len(toks) > 1 {
		w1 = toks[1].w
	}
	if w0 == "please" || (w0 == "can" || w0 == "could" || w0 == "would" || w0 == "will") && w1 == "you" {
		return false
	}
	end := b
	for end > a && (m[end-1] == ' ' || m[end-1] == '\n' || m[end-1] == '\t' || m[end-1] == '\r') {
		end--
	}
	if end > a && m[end-1] == '?' {
		return true
	}
	switch w0 {
	case "should", "shall", "is", "are", "was", "were", "does", "did", "am", "isn't", "aren't", "doesn't",
		"didn't", "shouldn't", "wouldn't", "couldn't", "why", "whether":
		return true
	case "do":
		switch w1 {
		case "you", "we", "i", "they", "it":
			return true
		}
	case "can", "could", "would", "will":
		switch w1 {
		case "we", "i", "it", "they", "this", "that", "there":
			return true
		}
	}
	return false
}

// prepare returns text lower-cased (ASCII only, so that byte offsets stay
// those of text) with code hidden: fenced blocks and block quotes become
// spaces and the inside of an inline code span becomes 'x' (one opaque
// word).
func prepare(text string) string {
	b := []byte(text)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	inFence := false
	var fence byte
	for ls := 0; ls < len(b); {
		le := ls
		for le < len(b) && b[le] != '\n' {
			le++
		}
		t := ls
		for t < le && t-ls < 4 && (b[t] == ' ' || b[t] == '\t') {
			t++
		}
		isFence := le-t >= 3 && (b[t] == '`' || b[t] == '~') && b[t+1] == b[t] && b[t+2] == b[t]
		if inFence || isFence || (t < le && b[t] == '>') {
			for k := ls; k < le; k++ {
				b[k] = ' '
			}
		}
		if isFence {
			if !inFence {
				inFence, fence = true, text[t]
			} else if text[t] == fence {
				inFence = false
			}
		}
		ls = le + 1
	}
	maskQuotes(b, text)
	for i := 0; i < len(b); i++ {
		if b[i] != '`' {
			continue
		}
		j := i + 1
		for j < len(b) && b[j] != '`' && b[j] != '\n' {
			j++
		}
		if j < len(b) && b[j] == '`' && j > i+1 {
			for k := i + 1; k < j; k++ {
				b[k] = 'x'
			}
			i = j
		}
	}
	return string(b)
}

// abbrevs end with a period that does not end a sentence.
var abbrevs = setOf("e.g", "i.e", "etc", "vs", "approx", "cf", "mr", "mrs", "ms", "dr", "eg", "ie", "resp", "incl", "esp")

// sentences splits the prepared text m into sentence ranges: at line
// breaks, at ';', and at '.', '!', '?' before a space or the end (keeping
// the mark in the sentence).
func sentences(m string) [][2]int {
	var out [][2]int
	start := 0
	push := func(end int) {
		if end > start {
			out = append(out, [2]int{start, end})
		}
		start = end
	}
	for i := 0; i < len(m); i++ {
		c := m[i]
		switch c {
		case '\n':
			push(i)
			start = i + 1
		case ';':
			push(i + 1)
		case '.', '!', '?':
			if i+1 < len(m) && m[i+1] != ' ' && m[i+1] != '\n' && m[i+1] != '\t' && m[i+1] != '\r' &&
				m[i+1] != '"' && m[i+1] != ')' && m[i+1] != '\'' {
				continue
			}
			if c == '.' {
				ws := i
				for ws > start && m[ws-1] != ' ' && m[ws-1] != '\n' && m[ws-1] != '(' {
					ws--
				}
				if abbrevs[m[ws:i]] {
					continue
				}
			}
			for i+1 < len(m) && (m[i+1] == '"' || m[i+1] == ')' || m[i+1] == '\'') {
				i++
			}
			push(i + 1)
		}
	}
	push(len(m))
	return out
}

// tokenize splits m[a:b] into words. Each word's text is taken from m
// (lower-cased), its offsets index the original text.
func tokenize(m string, text string, a, b int) []token {
	toks := make([]token, 0, (b-a)/5+1)
	i := a
	for i < b {
		for i < b && isSpace(m[i]) {
			i++
		}
		if i >= b {
			break
		}
		j := i
		for j < b && !isSpace(m[j]) {
			j++
		}
		s, e := i, j
		code := m[s] == '`'
		sep := false
		if !code {
			for s < e {
				if n := leadPunct(m[s:e]); n > 0 {
					s += n
					continue
				}
				break
			}
			for e > s {
				n, isSep := trailPunct(m[s:e])
				if n == 0 {
					break
				}
				sep = sep || isSep
				e -= n
			}
		} else {
			// `code`, possibly followed by punctuation.
			k := s + 1
			for k < e && m[k] != '`' {
				k++
			}
			if k < e {
				k++
				if strings.ContainsAny(m[k:e], ",;:") {
					sep = true
				}
				e = k
			}
		}
		if s >= e {
			// A lone dash or comma separates clauses.
			if len(toks) > 0 && isDash(m[i:j]) || len(toks) > 0 && (m[i] == ',' || m[i] == ';' || m[i] == ':') {
				toks[len(toks)-1].sep = true
			}
			i = j
			continue
		}
		w := m[s:e] // a substring: no copy
		if code {
			w = "`"
		} else if strings.Contains(w, "\u2019") {
			w = strings.ReplaceAll(w, "\u2019", "'")
		}
		toks = append(toks, token{w: contraction(w), start: s, end: e, rawStart: i, rawEnd: j, sep: sep})
		i = j
	}
	return toks
}

// contraction restores the apostrophe of common contractions typed
// without one.
func contraction(w string) string {
	switch w {
	case "dont":
		return "don't"
	case "doesnt":
		return "doesn't"
	case "didnt":
		return "didn't"
	case "isnt":
		return "isn't"
	case "arent":
		return "aren't"
	case "shouldnt":
		return "shouldn't"
	case "wouldnt":
		return "wouldn't"
	case "couldnt":
		return "couldn't"
	case "cant":
		return "can't"
	case "thats":
		return "that's"
	case "youre":
		return "you're"
	case "ive":
		return "i've"
	case "im":
		return "i'm"
	}
	return w
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v'
}

func isDash(s string) bool {
	return s == "-" || s == "--" || s == "\u2014" || s == "\u2013"
}

// leadPunct returns the length of punctuation opening b.
func leadPunct(b string) int {
	switch b[0] {
	case '(', '[', '{', '"', '\'', '*', '_', '<', ',', ';', ':', '-':
		return 1
	}
	if b[0] < utf8.RuneSelf {
		return 0
	}
	for _, q := range [...]string{"\u201c", "\u2018", "\u00ab"} {
		if strings.HasPrefix(b, q) {
			return len(q)
		}
	}
	return 0
}

// trailPunct returns the length of punctuation closing b, and whether it
// separates clauses.
func trailPunct(b string) (int, bool) {
	c := b[len(b)-1]
	switch c {
	case ',', ';', ':':
		return 1, true
	case ')', ']', '}', '"', '\'', '.', '!', '?', '*', '_', '>':
		return 1, false
	}
	if c < utf8.RuneSelf {
		return 0, false
	}
	for _, q := range [...]string{"\u201d", "\u2019", "\u00bb", "\u2026"} {
		if strings.HasSuffix(b, q) {
			return len(q), false
		}
	}
	return 0, false
}

// Subject normalisation. The same preference said in different words must
// end up with the same Subject, so normSubject:
//
//   - lower-cases, drops quotes, brackets and edge punctuation and the
//     possessive 's; an inline code span is one opaque word
//     ("`go test -race ./...`");
//   - rewrites a few aliases (golang → go, postgresql → postgres, k8s →
//     kubernetes, nodejs → node …);
//   - splits hyphenated plain words ("table-driven" → "table driven") and
//     then re-hyphenates the compound-adjective suffixes "driven", "based",
//     "first", "free", "safe", "style", "aware", "friendly", "specific",
//     "native", "agnostic", "oriented", "centric", so "table driven tests"
//     and "table-driven tests" both become "table-driven test" while
//     "pre-commit" and "pre commit" both become "pre commit";
//   - drops leading determiners, possessives, pronouns, "to" and light
//     verbs ("the", "my", "our", "use", "using", "write", "run", "add",
//     "go with", "stick with" …: "always write table driven tests" is about
//     "table-driven test"), and trailing fillers and scope phrases
//     ("please", "for now", "anymore", "instead", "by default", "in this
//     repo", "in all my projects", "last month" …), and articles anywhere
//     ("change the API" = "change API");
//   - keeps at most 6 words: the core noun phrase (an over-long subject is
//     cut first before examples — "like", "such as" —, then at its first
//     preposition, then after 6 words);
//   - singularises the head words (the last one and any before a
//     preposition) with a few safe rules and exceptions ("tests" → "test",
//     "dependencies" → "dependency", "postgres" and "redis" stay);
//   - returns "" for pronouns and fragments ("it", "that", "how you did
//     it"), which make no signal.
func normSubject(s string) string {
	return canon(stripTrailing(splitWords(s)))
}

// normSlot normalises a slot; with purpose, a "for Y" tail becomes the
// Object ("we use table-driven tests for Go").
func normSlot(s string, purpose bool) (subj, obj string) {
	words := stripTrailing(splitWords(s))
	if purpose {
		for i := 1; i < len(words)-1; i++ {
			if words[i] == "for" {
				obj = canon(words[i+1:])
				words = words[:i]
				break
			}
			if words[i] == "with" && scopeDets[words[i+1]] {
				// "ESLint with the Airbnb config": the detail goes.
				words = words[:i]
				break
			}
		}
	}
	if len(words) > 1 && (words[0] == "their" || words[0] == "his" || words[0] == "her") {
		return "", "" // someone else's: "I love their work", "his music"
	}
	return canon(words), obj
}

// maxSubjectWords and maxSubjectBytes bound a Subject or Object.
const (
	maxSubjectWords = 6
	// maxQualifiedWords bounds a subject kept whole for its "with" or
	// "without" qualifier.
	maxQualifiedWords = 9
	maxSubjectBytes   = 80
)

// splitWords lower-cases s and splits it into clean words.
func splitWords(s string) []string {
	s = strings.ToLower(s)
	if strings.ContainsAny(s, "\"*") || strings.Contains(s, "\u201c") || strings.Contains(s, "\u201d") {
		s = quoteMarks.Replace(s)
	}
	if strings.Contains(s, "\u2019") {
		s = strings.ReplaceAll(s, "\u2019", "'")
	}
	words := make([]string, 0, 8)
	if strings.Contains(s, "`") {
		// Code is one opaque word: `go test -race ./...`.
		for i, seg := range strings.Split(s, "`") {
			if i%2 == 1 {
				if code := strings.Join(strings.Fields(seg), " "); code != "" {
					words = append(words, code)
				}
				continue
			}
			words = appendWords(words, seg)
		}
		return words
	}
	return appendWords(words, s)
}

var quoteMarks = strings.NewReplacer("\"", " ", "*", " ", "\u201c", " ", "\u201d", " ")

// appendWords appends the clean words of prose s to words.
func appendWords(words []string, s string) []string {
	for _, f := range strings.Fields(s) {
		f = trimRightBytes(f, ".,;:!?)]}>'")
		f = trimLeftBytes(f, "([{<'")
		if len(f) > 4 && strings.HasSuffix(f, "'s") && f != "that's" && f != "let's" && f != "there's" && f != "what's" && f != "here's" {
			f = f[:len(f)-2] // possessive
		}
		if f == "" || f == "-" || f == "&" {
			continue
		}
		if a, ok := aliases[f]; ok {
			f = a
		}
		if plainHyphenated(f) && !prepCompound(f) {
			for _, part := range strings.Split(f, "-") {
				if part != "" {
					words = append(words, part)
				}
			}
			continue
		}
		words = append(words, f)
	}
	return words
}

// prepCompound reports a hyphenated word that opens with a preposition
// ("in-person", "off-site", "up-to-date"): split, it would read as a
// phrase of place cut from its noun ("traditional in person classroom
// settings" is about the settings, not "traditional").
func prepCompound(w string) bool {
	first, _, _ := strings.Cut(w, "-")
	switch first {
	case "in", "on", "off", "up", "out", "over", "under", "at", "by", "to":
		return true
	}
	return false
}

// plainHyphenated reports a word of letters joined by hyphens.
func plainHyphenated(w string) bool {
	if !strings.Contains(w, "-") {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if !(c >= 'a' && c <= 'z' || c == '-') {
			return false
		}
	}
	return true
}

func plainWord(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return w != ""
}

var aliases = map[string]string{
	"golang": "go", "postgresql": "postgres", "nodejs": "node", "node.js": "node", "k8s": "kubernetes",
	"reactjs": "react", "react.js": "react", "vuejs": "vue", "vue.js": "vue", "yml": "yaml",
	"e-mail": "email", "py.test": "pytest", "favourite": "favorite", "colour": "color",
}

// trailing fillers and scope phrases, removed from the end of a slot.
var trailPhrases = [][]string{
	{"please"}, {"pls"}, {"plz"}, {"thanks"}, {"thank", "you"}, {"for", "now"}, {"for", "the", "time", "being"},
	{"instead"}, {"anymore"}, {"any", "more"}, {"again"}, {"ever"}, {"at", "all"}, {"too"}, {"as", "well"},
	{"also"}, {"by", "default"}, {"if", "possible"}, {"when", "possible"}, {"whenever", "possible"},
	{"where", "possible"}, {"wherever", "possible"}, {"going", "forward"}, {"moving", "forward"},
	{"from", "now", "on"}, {"from", "here", "on"}, {"from", "here", "on", "out"}, {"in", "the", "future"},
	{"in", "future"}, {"in", "general"}, {"generally"}, {"always"}, {"everywhere"}, {"globally"}, {"here"},
	{"in", "here"}, {"ok"}, {"okay"}, {"though"}, {"either"}, {"only"}, {"all", "the", "time"},
	{"every", "time"}, {"whenever", "you", "can"}, {"if", "you", "can"}, {"then"}, {"now"}, {"right", "now"},
	{"from", "now"}, {"personally"}, {"really"}, {"please", "thanks"}, {"thx"}, {"ty"},
	{"last", "week"}, {"last", "month"}, {"last", "year"}, {"last", "time"}, {"last", "sprint"},
	{"this", "week"}, {"this", "month"}, {"this", "year"}, {"yesterday"}, {"today"}, {"recently"},
	{"a", "while", "ago"}, {"ago"}, {"lately"}, {"earlier"}, {"tonight"}, {"tomorrow"},
}

// scopePreps start a trailing scope phrase ("in this repo", "for all my
// projects", "across projects").
var (
	scopePreps = setOf("in", "for", "across", "on", "within", "throughout")
	scopeDets  = setOf("this", "the", "all", "every", "any", "each", "these", "my", "our", "your")
)

// trailByLast indexes trailPhrases by their last word.
var trailByLast = func() map[string][][]string {
	m := map[string][][]string{}
	for _, ph := range trailPhrases {
		last := ph[len(ph)-1]
		m[last] = append(m[last], ph)
	}
	for _, phs := range m {
		// Longest first: "in here" before "here".
		slices.SortStableFunc(phs, func(a, b []string) int { return len(b) - len(a) })
	}
	return m
}()

// stripTrailing removes trailing fillers and scope phrases.
func stripTrailing(words []string) []string {
	for changed := true; changed && len(words) > 0; {
		changed = false
		for _, ph := range trailByLast[words[len(words)-1]] {
			if len(ph) <= len(words) && equalWords(words[len(words)-len(ph):], ph) {
				words = words[:len(words)-len(ph)]
				changed = true
				break
			}
		}
		if changed || len(words) < 2 {
			continue
		}
		// [prep] [det…] scope-noun
		last := len(words) - 1
		if !scopeNouns[words[last]] || words[last] == "code" && last > 0 && !scopeDets[words[last-1]] {
			continue
		}
		k := last
		for k > 0 && scopeDets[words[k-1]] {
			k--
		}
		if words[k] == "the" && k+1 == last && !repoNouns[words[last]] {
			continue // "for the CLI" is a purpose, "in the repo" a scope
		}
		if k > 0 && scopePreps[words[k-1]] && k < last {
			words = words[:k-1]
			changed = true
		} else if k > 0 && scopePreps[words[k-1]] && words[last] != "code" {
			words = words[:k-1] // "in projects"
			changed = true
		}
	}
	return words
}

func equalWords(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Leading words removed from a subject: determiners, pronouns and light
// verbs, and two-word light verbs.
var (
	leadStrip = setOf("the", "a", "an", "my", "our", "your", "their", "its", "this", "that", "these",
		"those", "some", "any", "all", "more", "only", "just", "always", "also", "really", "to", "you", "we",
		"i", "ever", "please", "even", "still", "actually", "definitely", "usually", "generally", "strictly",
		"be", "use", "using", "uses", "write", "writing", "run", "running", "add", "adding", "choose",
		"choosing", "pick", "picking", "apply", "applying", "follow", "following", "prefer", "preferring",
		"include", "including", "have", "having", "adopt", "adopting", "try", "trying", "do", "doing",
		"stick", "sticking", "go", "going", "rely", "relying", "depend", "depending", "with", "on",
		"utilize", "utilise", "employ", "introduce", "introducing", "import", "importing", "install",
		"installing", "keep", "keeping", "want", "wants", "put", "putting", "create", "creating", "touch",
		"touching")
	// leadOnlyBefore are stripped only when followed by these words ("go
	// with X", "stick to X", "rely on X"); "go" alone is a language.
	leadPairs = map[string]map[string]bool{
		"go":        setOf("with", "for"),
		"going":     setOf("with", "for"),
		"stick":     setOf("with", "to"),
		"sticking":  setOf("with", "to"),
		"rely":      setOf("on"),
		"relying":   setOf("on"),
		"depend":    setOf("on"),
		"depending": setOf("on"),
		"keep":      setOf("using", "to", "with"),
		"use":       setOf("of"),
		"form":      setOf("of"),
		"forms":     setOf("of"),
		"kind":      setOf("of"),
		"kinds":     setOf("of"),
		"type":      setOf("of"),
		"types":     setOf("of"),
		"sort":      setOf("of"),
		"sorts":     setOf("of"),
		"keeping":   setOf("using", "to", "with"),
	}
)

// compoundSuffixes are re-joined to the previous word with a hyphen.
var compoundSuffixes = setOf("driven", "based", "first", "free", "safe", "style", "aware", "friendly",
	"specific", "native", "agnostic", "oriented", "centric")

// preps cut an over-long subject and mark the head word before them.
var preps = setOf("in", "on", "at", "with", "for", "from", "by", "into", "before", "after", "during",
	"without", "within", "inside", "across", "over", "under", "to", "via", "per", "when", "while")

// exampleWords introduce examples, cut first from a long subject.
var exampleWords = setOf("like", "such", "including", "e.g", "e.g.", "eg", "i.e", "i.e.", "especially", "say",
	"particularly", "notably")

// junkSubjects make no subject on their own.
var junkSubjects = setOf("it", "that", "this", "these", "those", "them", "they", "one", "ones", "something",
	"anything", "everything", "nothing", "stuff", "thing", "things", "what", "which", "who", "how", "why",
	"so", "there", "here", "same", "you", "me", "us", "him", "her", "yes", "no", "ok", "okay", "it's",
	"that's", "lot", "more", "less", "much", "many", "way", "idea", "better", "best", "good", "bad", "well",
	"sure", "fine", "again", "too", "now", "then", "not", "never", "always", "mind", "please", "thanks",
	"and", "or", "but", "to", "for", "with", "of", "in", "on", "at", "a", "an", "the", "i", "we", "me",
	"myself", "yourself", "itself", "either", "neither", "both", "other", "others", "another", "all",
	"fewer", "larger", "smaller", "bigger", "shorter", "longer", "simpler", "faster", "slower", "newer",
	"older", "different", "similar", "as", "like", "usual",
	// Verbs of perceiving, knowing and helping say no taste alone ("that's
	// what I like to hear", "I love to help"), nor does a particle.
	"hear", "see", "say", "know", "think", "help", "off", "out", "up")

// particles make a phrasal verb of the verb before them ("drop off").
var particles = setOf("off", "out", "up", "by", "over", "back", "down", "away", "in")

// timePhrases say how often or when, not what: "a job I enjoy every day".
var timePhrases = setOf("every day", "everyday", "every week", "every time", "all time", "each day", "these days",
	"daily", "sometimes", "every morning", "every night", "every weekend")

// canon turns slot words into a Subject (see normSubject).
func canon(words []string) string {
	// Leading determiners, pronouns and light verbs.
	for len(words) > 0 {
		w := words[0]
		if pair, ok := leadPairs[w]; ok {
			if len(words) > 1 && pair[words[1]] {
				words = words[2:]
				continue
			}
			if w == "go" || w == "going" || w == "keep" || w == "keeping" {
				break
			}
		}
		if !leadStrip[w] || len(words) == 1 && !junkSubjects[w] && !lightOnly[w] || len(words) > 1 && words[1] == "as" {
			break // "running as a form of exercise" is about running
		}
		words = words[1:]
	}
	words = stripTrailing(words)
	if len(words) == 0 {
		return ""
	}
	// Articles inside carry nothing ("change the API" = "change API").
	if slices.ContainsFunc(words, isArticle) {
		words = slices.DeleteFunc(slices.Clone(words), isArticle)
	}
	// Re-join compound adjectives.
	joined := words[:0:0]
	for i := 0; i < len(words); i++ {
		w := words[i]
		if i+1 < len(words) && compoundSuffixes[words[i+1]] && plainWord(w) && !preps[w] &&
			!(words[i+1] == "free" && i+2 < len(words) && (words[i+2] == "of" || words[i+2] == "from")) { // "shoes free of leather"
			w += "-" + words[i+1]
			i++
		}
		joined = append(joined, w)
	}
	words = joined
	// At most maxSubjectWords: the core noun phrase, without examples
	// ("animal-based fabrics like leather": the quote keeps them, and the
	// item alone says less than was said).
	for i := 1; i < len(words); i++ {
		if exampleWords[words[i]] && (len(words) > maxSubjectWords || i >= 2 && words[i] != "say") {
			words = words[:i]
			break
		}
	}
	if len(words) > maxSubjectWords {
		limit := maxSubjectWords
		for i := 1; i < len(words); i++ {
			if (words[i] == "with" || words[i] == "without" || i+1 < len(words) && pastTense(words[i]) && preps[words[i+1]]) &&
				len(words) <= maxQualifiedWords {
				// "movies with heavy use of special effects", "clothing
				// made from animal derived fabrics": the qualifier is what
				// is meant, "movies" alone is more.
				limit = maxQualifiedWords
				break
			}
			if preps[words[i]] {
				words = words[:i]
				break
			}
		}
		if len(words) > limit {
			words = words[:limit]
		}
	}
	for len(words) > 0 && (preps[words[len(words)-1]] || words[len(words)-1] == "and" || words[len(words)-1] == "or") {
		words = words[:len(words)-1]
	}
	if len(words) == 0 {
		return ""
	}
	// A tool's subcommand: "npm install", "yarn add" are about the tool.
	if len(words) == 2 && subcommands[words[1]] && cliTools[words[0]] {
		words = words[:1]
	}
	// Discard fragments.
	if len(words) == 1 && junkSubjects[words[0]] || timePhrases[strings.Join(words, " ")] {
		return ""
	}
	switch words[0] {
	case "how", "what", "why", "which", "who", "whether", "if", "it", "they", "he", "she", "there", "it's",
		"that's", "not", "when", "where", "here":
		return ""
	case "good", "great", "nice", "glad", "happy", "fun", "awesome", "cool":
		if len(words) > 1 && words[1] == "to" {
			return "" // "good to hear", "nice to see"
		}
	}
	switch words[len(words)-1] {
	case "it", "them", "that", "this", "so", "one":
		return ""
	}
	// Singular head words.
	out := make([]string, len(words))
	for i, w := range words {
		if i == len(words)-1 || i+1 < len(words) && preps[words[i+1]] {
			w = singular(w)
		}
		out[i] = w
	}
	return clipWords(strings.Join(out, " "), maxSubjectBytes)
}

func isArticle(w string) bool { return w == "the" || w == "a" || w == "an" }

// lightOnly are light verbs that are no subject on their own ("I prefer
// using" says nothing).
var lightOnly = setOf("use", "using", "uses", "write", "writing", "run", "running", "add", "adding",
	"have", "having", "do", "doing", "be", "try", "trying", "to", "the", "a", "an", "my", "our", "your")

var irregularPlural = map[string]string{
	"statuses": "status", "aliases": "alias", "buses": "bus", "viruses": "virus", "indices": "index",
	"indexes": "index", "caches": "cache", "children": "child", "people": "person", "criteria": "criterion",
	"analyses": "analysis", "matrices": "matrix", "vertices": "vertex", "cookies": "cookie",
	"movies": "movie", "zombies": "zombie", "lies": "lie", "ties": "tie", "pies": "pie", "dies": "die",
	"newbies": "newbie", "rookies": "rookie", "selfies": "selfie", "headaches": "headache",
	"niches": "niche", "biases": "bias", "canvases": "canvas", "atlases": "atlas", "heroes": "hero",
	"potatoes": "potato", "tomatoes": "tomato", "echoes": "echo", "vetoes": "veto", "quizzes": "quiz",
	"bonuses": "bonus", "campuses": "campus", "goes": "go", "does": "do", "avalanches": "avalanche",
	"mustaches": "mustache", "moustaches": "moustache", "synopses": "synopsis", "theses": "thesis",
	"hypotheses": "hypothesis", "parentheses": "parenthesis", "appendices": "appendix",
	"apis": "api", "clis": "cli", "uis": "ui", "guis": "gui", "tuis": "tui", "cpus": "cpu", "gpus": "gpu",
	"emojis": "emoji", "taxis": "taxi", "skus": "sku", "menus": "menu",
}

// noSingular end in "s" but are not plurals (or have no singular worth
// using).
var noSingular = setOf("postgres", "kubernetes", "jenkins", "pandas", "rails", "express", "emacs", "sass",
	"less", "series", "species", "news", "chaos", "macos", "ios", "aws", "https", "http", "always",
	"perhaps", "various", "previous", "serious", "numerous", "analytics", "physics", "mathematics",
	"statistics", "ethics", "logistics", "semantics", "graphics", "diagnostics", "metrics",
	"lots", "plus", "yes", "thanks", "redis", "nodemon", "electronics", "economics", "windows",
	"linux", "ubuntu", "centos", "debian", "nuxt", "gatsby", "cypress", "whereas", "unless",
	"css", "dns", "gcs", "gps", "ssl", "tls", "sms", "os", "vs", "vscode")

// singular returns the singular of an English plural, conservatively.
func singular(w string) string {
	if s, ok := irregularPlural[w]; ok {
		return s
	}
	if len(w) < 4 || !plainWord(w) || noSingular[w] {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"), strings.HasSuffix(w, "xes"), strings.HasSuffix(w, "shes"),
		strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "zzes"):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"):
		return w
	case strings.HasSuffix(w, "s"):
		return w[:len(w)-1]
	}
	return w
}

// specific words open a reference to one thing at hand ("use the helper",
// "this please"), not a habit or a taste.
var specific = setOf("the", "this", "that", "these", "those", "it", "them", "its", "it's", "me", "him",
	"her", "here", "there", "what", "which", "one", "some")

// taskVerbs open a request to do something now ("fix it please", "run
// tests please"), not a preference.
var taskVerbs = setOf("run", "fix", "add", "update", "check", "commit", "push", "open", "show", "try",
	"make", "do", "create", "write", "remove", "delete", "rename", "test", "build", "deploy", "merge",
	"rebase", "explain", "continue", "stop", "start", "look", "read", "review", "help", "give", "send",
	"tell", "go", "install", "restart", "revert", "undo", "move", "change", "refactor", "debug", "call",
	"wait", "retry", "proceed", "lint", "format", "print", "list", "find", "search", "get", "set", "let",
	"keep", "thanks", "thank", "yes", "ok", "okay", "sure", "no", "not", "more", "less", "again", "one")

// beDeny: "be X" that is no preference ("be sure to", "be back").
var beDeny = setOf("sure", "able", "aware", "done", "ready", "back", "there", "here", "a", "an", "the", "so",
	"too", "like", "afraid", "sorry", "surprised", "shy", "happy", "glad", "fine", "ok", "okay", "in", "on",
	"at", "used", "going", "honest", "right", "wrong", "quick", "patient", "it", "that", "this", "my",
	"your", "our", "any", "some", "more", "less")

// styleAdjs close "keep N ADJ" ("keep answers short").
var styleAdjs = setOf("short", "concise", "brief", "small", "simple", "minimal", "focused", "tight",
	"clean", "readable", "terse", "lean", "compact", "tidy", "flat", "shallow", "consistent")

// valueStops end a fact's value ("deploys to Fly.io every Friday").
var valueStops = setOf("every", "each", "on", "at", "in", "with", "via", "using", "when", "whenever",
	"after", "before", "by", "from", "for", "and", "but", "because", "since", "so", "if", "unless",
	"now", "nowadays", "today", "too", "also", "as")

// onlyScopeAfter reports that nothing but a scope phrase or a filler
// follows toks[end:] in the clause ("pnpm only in this repo").
func onlyScopeAfter(toks []token, end int) bool {
	for _, t := range toks[end:] {
		switch {
		case scopePreps[t.w], scopeDets[t.w], scopeNouns[t.w], t.w == "here", t.w == "please",
			t.w == "thanks", t.w == "always", t.w == "now":
		default:
			return false
		}
	}
	return true
}

// factName names the fact of a verb pattern from its verb and preposition:
// "deploys to Y" is the deploy target, "deploys with Y" the deploy tool,
// "is hosted on Y" the hosting, "builds with Y" the build tool, "releases
// on Y" the release day, "licensed under Y" the license.
func factName(toks []token, x, y [2]int) string {
	verb := toks[x[1]].w
	if (verb == "is" || verb == "are" || verb == "gets" || verb == "get") && x[1]+1 < y[0] {
		verb = toks[x[1]+1].w
	}
	if x[0] >= 2 && (toks[x[0]-2].w == "host" || toks[x[0]-2].w == "deploy" || toks[x[0]-2].w == "ship") {
		verb = toks[x[0]-2].w // "we host the app on Render"
	}
	prep := toks[y[0]-1].w
	head := toks[x[1]-1].w
	for k := x[0]; k < x[1]; k++ {
		if finiteVerbs[toks[k].w] || negators[toks[k].w] || hedges[toks[k].w] {
			return ""
		}
	}
	target := prep == "to" || prep == "on" || prep == "into"
	switch verb {
	case "deploys", "deploy", "deployed", "ships":
		if target {
			return "deploy target"
		}
		return "deploy tool"
	case "goes", "go", "run", "runs", "happen", "happens":
		switch head {
		case "deploy", "deploys", "deployment", "deployments", "release", "releases":
		default:
			return ""
		}
		if target {
			return "deploy target"
		}
		return "deploy tool"
	case "hosted", "host", "hosts":
		return "hosting"
	case "build", "builds", "built":
		return "build tool"
	case "release", "releases", "ship":
		return "release day"
	case "licensed":
		return "license"
	}
	return ""
}

// userFact reads "I'm X" / "I have X": the user's situation ("I'm on
// macOS", "I have a severe peanut allergy", "I'm new to Rust"), not a
// passing state ("I'm not sure", "I have a question", "I'm getting an
// error"). The value keeps its verb: "is on macOS", "has a … allergy".
func userFact(text string, toks []token, x [2]int) (string, bool) {
	if x[1]-x[0] > 6 || x[0] == 0 {
		return "", false
	}
	verb := "is"
	switch toks[x[0]-1].w {
	case "have", "got":
		verb = "has"
	}
	first := toks[x[0]].w
	if userDeny[first] && !(first == "an" && verb == "has") || negators[first] || hedges[first] || specific[first] {
		// "I'm an idiot" is a mood; "I have an egg allergy" a situation
		// (haveDeny below keeps out "an idea", "an error").
		return "", false
	}
	for k := x[0]; k < x[1] && k < x[0]+4; k++ {
		if stanceNouns[toks[k].w] {
			// "I have a strong aversion to X": a preference or an
			// avoidance of X (the patterns above), no fact about the user.
			return "", false
		}
	}
	if verb == "is" {
		if strings.HasSuffix(first, "ing") && first != "learning" && first != "studying" {
			return "", false
		}
		if !strings.Contains(first, "-") && pastTense(first) && first != "based" && first != "located" {
			return "", false
		}
		if first == "in" && x[1]-x[0] > 1 {
			// "I'm in the CET timezone", "I'm in Berlin"; not "in a meeting".
			last := toks[x[1]-1]
			if !timeWords[last.w] && !(text[last.start] >= 'A' && text[last.start] <= 'Z') {
				return "", false
			}
		}
	} else {
		if pastTense(first) || first == "to" {
			return "", false
		}
		for k := x[0]; k < x[1]; k++ {
			if haveDeny[strings.TrimSuffix(toks[k].w, "s")] {
				return "", false
			}
		}
	}
	for k := x[0]; k < x[1]; k++ {
		if finiteVerbs[toks[k].w] || toks[k].w == "`" || toks[k].w == "fan" || toks[k].w == "fans" {
			return "", false
		}
	}
	if last := toks[x[1]-1].w; x[1]-x[0] > 1 && (isArticle(last) || preps[last]) {
		return "", false // "passionate about helping people and making a": cut off
	}
	if x[1]-x[0] <= 2 && first == "as" || first == "on" && x[0]+1 < x[1] && toks[x[0]+1].w == "fire" {
		return "", false // "I'm as well", "I'm on fire": no situation
	}
	v := collapseSpace(strings.TrimRight(text[toks[x[0]].start:toks[x[1]-1].end], ".,;:!?"))
	if v == "" || verb == "has" && balance(v) {
		return "", false
	}
	return verb + " " + v, true
}

// balance reports an amount of money or points ("100 coins", "$500 to
// spend", "20 credits left"): what the user has now in a game or a
// purchase, which the next turn changes, not their situation.
func balance(v string) bool {
	f := strings.Fields(strings.ToLower(v))
	if len(f) == 0 {
		return false
	}
	if strings.ContainsAny(f[0][:1], "$€£¥") {
		return true
	}
	if !looksLikeValue(f[0]) {
		return false
	}
	for _, w := range f[1:min(len(f), 3)] {
		if balanceUnits[strings.TrimRight(w, ".,;:!?")] {
			return true
		}
	}
	return false
}

var balanceUnits = setOf("coin", "coins", "dollar", "dollars", "buck", "bucks", "euro", "euros", "pound",
	"pounds", "usd", "eur", "gbp", "point", "points", "credit", "credits", "token", "tokens", "gold", "gems",
	"chips", "lives", "gp", "cents")

var (
	userDeny = setOf("sure", "done", "going", "gonna", "confused", "stuck", "back", "ready", "fine", "ok",
		"okay", "afraid", "sorry", "happy", "glad", "so", "just", "still", "also", "about", "here", "there",
		"curious", "unable", "able", "aware", "pretty", "really", "very", "kind", "kinda", "too",
		"now", "currently", "already", "almost", "off", "out", "up", "down", "over", "at", "into", "all",
		"busy", "tired", "late", "away", "fairly", "quite", "totally", "good", "great", "lost", "fed",
		"certain", "worried", "concerned", "interested", "excited", "afk", "sick", "no", "an", "not",
		// Moods and intensifiers before them: how the user feels now.
		"super", "always", "definitely", "finally", "completely", "even", "more", "mostly", "proud",
		"grateful", "thankful", "thrilled", "nervous", "lucky", "motivated", "content", "stoked", "eager",
		"honored", "honoured", "blessed", "inspired", "determined", "relieved", "frustrated", "annoyed",
		"upset", "disappointed", "impressed", "amazed", "delighted", "overwhelmed", "anxious", "hopeful")
	haveDeny = setOf("question", "idea", "problem", "issue", "error", "bug", "concern", "suggestion",
		"request", "doubt", "feeling", "meeting", "call", "change", "pr", "branch", "file", "test",
		"minute", "time", "look", "go", "try", "thought", "update", "fix", "patch", "commit", "plan",
		"draft", "version", "copy", "list", "few", "couple", "quick", "another", "one", "other", "similar",
		"same", "lot", "bunch", "some", "no", "nothing", "everything", "something", "access", "permission",
		"deadline", "appointment", "task", "ticket")
	timeWords = setOf("timezone", "time", "utc", "gmt", "cet", "cest", "pst", "pdt", "est", "edt", "zone")
)

// beForms of "to be" after "here" make it a presentation ("here is …").
var beForms = setOf("is", "are", "was", "were", "it", "it's", "you", "we", "goes", "comes")

// anymoreWords say a habit ended: "we don't use Docker anymore".
func endedHabit(toks []token) bool {
	for i, t := range toks {
		switch t.w {
		case "anymore":
			return true
		case "any":
			if i+1 < len(toks) && toks[i+1].w == "more" {
				return true
			}
		case "longer":
			if i > 0 && toks[i-1].w == "no" {
				return true
			}
		}
	}
	return false
}

// subcommands of package managers and build tools.
var subcommands = setOf("install", "ci", "add", "exec", "dlx", "npx", "i", "run", "update", "upgrade")

// cliTools take subcommands.
var cliTools = setOf("npm", "pnpm", "yarn", "bun", "pip", "pip3", "cargo", "go", "uv", "poetry", "brew",
	"apt", "apt-get", "gem", "bundle", "composer", "mvn", "gradle", "make", "docker", "deno", "npx", "pipx",
	"conda", "dnf", "yum", "pacman", "nix")

// movePreps follow a verb of motion or placement ("deploy to", "run on").
var movePreps = setOf("to", "on", "onto", "into", "in", "with", "via", "through", "from")

// maskQuotes hides what stands between double quotes ("…" or “…”)
// on one line: quoted words are someone's words, not the user's statement
// ("the README says \"always use npm ci\""). The span becomes 'x's, one
// opaque word.
func maskQuotes(b []byte, text string) {
	for i := 0; i < len(b); i++ {
		open, n := 0, 0
		switch {
		case b[i] == '"':
			open, n = i, 1
		case strings.HasPrefix(text[i:], "\u201c"):
			open, n = i, 3
		default:
			continue
		}
		j := open + n
		for j < len(b) && b[j] != '\n' && b[j] != '"' && !strings.HasPrefix(text[j:], "\u201d") {
			j++
		}
		if j >= len(b) || b[j] == '\n' || j == open+n {
			continue
		}
		for k := open + n; k < j; k++ {
			b[k] = 'x'
		}
		if b[j] == '"' {
			i = j
		} else {
			i = j + 2
		}
	}
}

// notAfter reads "not Y" right after a preference's slot, up to the end
// of the clause: the avoidance that goes with it.
func notAfter(toks []token, end int, span func([2]int) string) (episode.Signal, bool) {
	if end >= len(toks) || toks[end].w != "not" && toks[end].w != "never" || len(toks)-end-1 > 3 || len(toks)-end-1 < 1 {
		return episode.Signal{}, false
	}
	for _, t := range toks[end+1:] {
		if finiteVerbs[t.w] || specific[t.w] || slotStops[t.w] {
			return episode.Signal{}, false
		}
	}
	subj, _ := normSlot(span([2]int{end + 1, len(toks)}), false)
	if subj == "" {
		return episode.Signal{}, false
	}
	return episode.Signal{Kind: episode.SignalAvoid, Subject: subj, Polarity: -1}, true
}

// placeVerbs put something somewhere: "add X to Y" is about X.
var placeVerbs = setOf("add", "put", "append", "insert", "include", "commit", "push", "write", "paste")
