package extract

import (
	"slices"
	"strings"

	"github.com/engram-memory/engram/internal/episode"
)

// Coordination: an item joined to the previous signal ("X and Y", "X, not
// Y", "X or Y") shares its head, its modifiers or its claim.

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
	likeVerbs = setOf("like", "love", "enjoy", "prefer", "want", "fancy", "appreciate")
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
