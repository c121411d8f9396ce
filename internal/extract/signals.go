package extract

import (
	"maps"
	"strings"

	"github.com/engram-memory/engram/internal/episode"
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
	emitPref       emitKind = iota // preference X (purpose "for Y" → Object)
	emitPrefOver                   // preference X, avoid Y ("X over Y", "X rather than Y")
	emitAvoid                      // avoid X
	emitDont                       // "don't VERB X": depends on the verb
	emitNever                      // "never X": like emitDont, and not before a past tense
	emitSwitch                     // switch X→Y, preference Y
	emitSwitchTo                   // switch →Y (X unknown), preference Y
	emitSwitchAway                 // switch away from X ("stop using X")
	emitInsteadRev                 // preference Y, avoid X ("instead of X, use Y")
	emitDecision                   // decision X (polarity from "not")
	emitDecisionNo                 // decision against X ("let's not X")
	emitFact                       // fact X = Y
	emitFactAs                     // fact NAME = Y, NAME fixed by the pattern ("deploys to Y")
	emitUser                       // fact about the user: "I'm X", "I have X"
	emitFollow                     // fact about the user: "I follow a vegan diet"
	emitPlease                     // preference X for a bare "X please"
	emitBe                         // preference X for "be X" ("be concise")
	emitKeepAdj                    // preference "ADJ N" for "keep N ADJ"
	emitFactPath                   // fact X = Y when Y is a path or URL
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
	{episode.SignalPreference, emitInsteadRev, prevStart, "instead_of|rather_than X use|go_with|prefer|choose|pick|try Y"},
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
	{episode.SignalPreference, emitPref, nil, "i'd|i_would A rather|prefer X"},
	{episode.SignalPreference, emitKeepAdj, nil, "i A like|want|prefer|keep my X"},
	{episode.SignalPreference, emitPref, nil, "i A like|enjoy X"},
	{episode.SignalPreference, emitPref, nil, "i A go_with|reach_for|tend_to_use|tend_to_go_with|stick_with|stick_to X"},
	{episode.SignalPreference, emitPref, nil, "i A learn|work|study|focus|do best|better through|with|by|in|using X"},
	{episode.SignalPreference, emitPref, nil, "i'm|i_am A [a] [big|huge] fan of X"},
	{episode.SignalPreference, emitPref, nil, "my preference is [to|for] X"},
	{episode.SignalPreference, emitPref, prevStart, "X is|are what i A prefer|like|want|use"},
	{episode.SignalPreference, emitPref, prevStart, "this|our|the project|repo|repository|codebase|service|team|app|monorepo A uses|follows|prefers|sticks_to|sticks_with X"},
	{episode.SignalPreference, emitPref, prevStart, "our|the convention|standard|rule|policy [here] is [to] X"},
	{episode.SignalPreference, emitPref, nil, "my|our go-to|go_to|favorite|favourite|default [tool|choice|option] is X"},
	{episode.SignalPreference, emitPref, prevStart, "X is|are my|our go-to|go_to|favorite|favourite|preference|default"},
	{episode.SignalPreference, emitPref, prevImp, "only use X"},
	{episode.SignalPreference, emitPref, nil, "we A use X"},
	{episode.SignalAvoid, emitAvoid, prevImp, "keep X out_of Y"},
	{episode.SignalPreference, emitKeepAdj, prevImp, "keep X"},
	{episode.SignalPreference, emitBe, prevBe, "be X"},
	{episode.SignalPreference, emitPlease, prevStart, "X please"},
	{episode.SignalPreference, emitPref, prevSure, "make sure to X"},
	{episode.SignalPreference, emitPref, prevSure, "make sure [that] you|we X"},
	{episode.SignalPreference, emitPref, prevImp, "keep using X"},
	{episode.SignalPreference, emitPrefOver, prevImp, "prefer X over|rather_than|instead_of|not|to Y"},
	{episode.SignalPreference, emitPref, prevImp, "default to X"},
	{episode.SignalPreference, emitPref, prevImp, "always X"},
	{episode.SignalPreference, emitPref, prevFirst, "only|exclusively X"},

	// Avoidance.
	{episode.SignalAvoid, emitNever, prevImp, "never X"},
	{episode.SignalPreference, emitPref, prevImp, "don't|dont|do_not forget [to] X"},
	{episode.SignalAvoid, emitDont, prevPron, "shouldn't|should_not|mustn't|must_not X"},
	{episode.SignalAvoid, emitAvoid, prevImp, "avoid X"},
	{episode.SignalAvoid, emitAvoid, prevImp, "omit|leave_out X"},
	{episode.SignalAvoid, emitAvoid, nil, "i A hate|dislike|detest|loathe|despise X"},
	{episode.SignalAvoid, emitAvoid, prevImp, "refuse to X"},
	{episode.SignalAvoid, emitAvoid, nil, "i'm|i_am A not comfortable with|around X"},
	{episode.SignalAvoid, emitAvoid, nil, "i'm|i_am A uncomfortable with|around X"},
	{episode.SignalAvoid, emitAvoid, nil, "i can't|cannot|can_not stand X"},

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
