package redact

import "strings"

// tokenRule describes a provider token: a literal prefix followed by a body
// of min..max bytes (max 0: unbounded) from one alphabet. The whole token,
// prefix included, is redacted. The body is taken greedily and must not be
// followed by an alphanumeric byte, so a longer run of the same shape is not
// cut into a "token" and a tail.
type tokenRule struct {
	typ      string
	prefixes []string
	body     func(byte) bool
	min, max int
	// trimDots drops trailing '.' from the body (for alphabets with '.', so
	// that a sentence's full stop is kept).
	trimDots bool
	// ok, when set, validates the body.
	ok func(body string) bool
	// match, when set, replaces the prefix/body logic for shapes that need
	// more (JWT, SendGrid, Slack webhooks). It is called at the start of a
	// prefix and returns like prefixEntry.match.
	match func(s string, i int) (span, int, bool)
}

// Shapes follow the providers' published formats as encoded by public secret
// scanners (gitleaks, trufflehog), loosened where providers have changed
// lengths over time.
var tokenRules = []tokenRule{
	// sk-ant-api03-…, sk-ant-admin01-…, sk-ant-oat01-… (~100 bytes).
	{typ: typeAnthropic, prefixes: []string{"sk-ant-"}, body: isWordish, min: 32},
	// Legacy sk- + 48 alphanumerics; sk-proj-/sk-svcacct-/sk-admin- + ~150
	// base64url. The body must mix character classes so that kebab-case words
	// ("sk-learn-some-module-name") are not taken.
	{typ: typeOpenAI, prefixes: []string{"sk-"}, body: isWordish, min: 20, ok: func(b string) bool {
		if strings.HasPrefix(b, "ant-") {
			return false
		}
		l, u, d := classes(b)
		return (l && u) || (l && d) || (u && d)
	}},
	// ghp_ etc. + 36 alphanumerics; github_pat_ + 22 + "_" + 59.
	{typ: typeGitHub, prefixes: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, body: isAlnum, min: 30},
	{typ: typeGitHub, prefixes: []string{"github_pat_"}, body: isAlnumUnderscore, min: 40},
	// glpat- + 20 base64url, or the routable form with ".<9>".
	{typ: typeGitLab, prefixes: []string{
		"glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "glft-", "glimt-",
		"glagent-", "glsoat-", "gloas-", "glffct-",
	}, body: isWordishDot, min: 20, trimDots: true},
	{typ: typeGitLab, prefixes: []string{"GR1348941"}, body: isWordish, min: 20},
	// xoxb-<digits>-<digits>-<alnum> and friends; xapp-1-A…-<digits>-<hex>.
	{typ: typeSlack, prefixes: []string{
		"xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xoxo-", "xoxe-", "xapp-",
	}, body: isAlnumDash, min: 10, ok: hasDigit},
	// AIza + 35 base64url; ya29. OAuth access tokens; GOCSPX- client secrets.
	{typ: typeGoogle, prefixes: []string{"AIza"}, body: isWordish, min: 35, max: 35},
	{typ: typeGoogle, prefixes: []string{"ya29."}, body: isWordish, min: 20},
	{typ: typeGoogle, prefixes: []string{"GOCSPX-"}, body: isWordish, min: 24},
	{typ: typeStripe, prefixes: []string{
		"sk_live_", "sk_test_", "rk_live_", "rk_test_", "pk_live_", "pk_test_",
	}, body: isAlnum, min: 10},
	{typ: typeStripe, prefixes: []string{"whsec_"}, body: isAlnum, min: 24},
	{typ: typeHuggingFace, prefixes: []string{"hf_", "api_org_"}, body: isAlnum, min: 30},
	{typ: typeNPM, prefixes: []string{"npm_"}, body: isAlnum, min: 36},
	// Twilio API key SIDs: SK + 32 hex.
	{typ: typeTwilio, prefixes: []string{"SK"}, body: isHex, min: 32, max: 32},
	// AWS access key ids: 4-letter prefix + 16 base32 (A3T + 1 + 16).
	{typ: typeAWSKey, prefixes: []string{"AKIA", "ASIA", "ABIA", "ACCA"}, body: isUpperDigit, min: 16, max: 16},
	{typ: typeAWSKey, prefixes: []string{"A3T"}, body: isUpperDigit, min: 17, max: 17},
	{typ: typeJWT, prefixes: []string{"eyJ"}, match: matchJWT},
	{typ: typeSendGrid, prefixes: []string{"SG."}, match: matchSendGrid},
	{typ: typeSlack, prefixes: []string{"hooks.slack.com/"}, match: matchSlackWebhook},
}

func isAlnumUnderscore(c byte) bool { return isAlnum(c) || c == '_' }
func isAlnumDash(c byte) bool       { return isAlnum(c) || c == '-' }
func isWordishDot(c byte) bool      { return isWordish(c) || c == '.' }
func isUpperDigit(c byte) bool      { return isUpper(c) || isDigit(c) }

func hasDigit(v string) bool {
	for i := 0; i < len(v); i++ {
		if isDigit(v[i]) {
			return true
		}
	}
	return false
}

// prefixEntry is one prefix of a tokenRule.
type prefixEntry struct {
	prefix string
	rule   *tokenRule
}

// Prefixes are found through an anchor byte instead of one substring search
// per prefix (dozens of full scans of the text). Prefixes starting with an
// uppercase letter (rare in prose) are anchored on it; the others on their
// first '-', '_' or uppercase letter, and the alphanumeric word before the
// anchor ("sk" in "sk-", "ghp" in "ghp_") selects the candidates.
var (
	upperAnchored [256][]prefixEntry
	wordAnchored  [256]*wordAnchor
	// needled are the few prefixes without a cheap anchor; they are
	// searched as substrings from a rare byte on (off into the prefix).
	needled []needleEntry
)

type needleEntry struct {
	entries []prefixEntry // the one entry, as try takes it
	off     int
}

type wordAnchor struct {
	byWord         map[string][]prefixEntry
	first          [256]bool // first bytes of the words, a cheap filter
	minLen, maxLen int
}

func init() {
	for ri := range tokenRules {
		r := &tokenRules[ri]
		for _, p := range r.prefixes {
			e := prefixEntry{p, r}
			if isUpper(p[0]) {
				upperAnchored[p[0]] = append(upperAnchored[p[0]], e)
				continue
			}
			k := strings.IndexAny(p, "-_")
			if k < 0 {
				k = strings.IndexFunc(p, func(c rune) bool { return 'A' <= c && c <= 'Z' })
			}
			if k <= 0 {
				needled = append(needled, needleEntry{[]prefixEntry{e}, max(0, strings.IndexAny(p, "kjqxzyvwb"))})
				continue
			}
			a := wordAnchored[p[k]]
			if a == nil {
				a = &wordAnchor{byWord: map[string][]prefixEntry{}, minLen: k, maxLen: k}
				wordAnchored[p[k]] = a
			}
			a.byWord[p[:k]] = append(a.byWord[p[:k]], e)
			a.first[p[0]] = true
			a.minLen, a.maxLen = min(a.minLen, k), max(a.maxLen, k)
		}
	}
}

// lookup returns the prefixes whose word before the anchor is s[w:j].
func (a *wordAnchor) lookup(s string, w, j int) []prefixEntry {
	if n := j - w; n < a.minLen || n > a.maxLen || !a.first[s[w]] {
		return nil
	}
	return a.byWord[s[w:j]]
}

// findTokens finds provider tokens.
func findTokens(t *text, spans []span) []span {
	s := t.s
	try := func(i int, entries []prefixEntry) int {
		next := i + 1
		for _, e := range entries {
			if !strings.HasPrefix(s[i:], e.prefix) {
				continue
			}
			sp, n, ok := e.match(s, i)
			next = max(next, n)
			if ok {
				spans = append(spans, sp)
				break
			}
		}
		return next
	}
	for c := range 256 {
		if entries := upperAnchored[c]; entries != nil {
			indexByteAll(s, byte(c), func(i int) int { return try(i, entries) })
		}
		if a := wordAnchored[c]; a != nil {
			indexByteAll(s, byte(c), func(j int) int {
				w := j
				for w > 0 && j-w <= a.maxLen && isAlnum(s[w-1]) {
					w--
				}
				entries := a.lookup(s, w, j)
				if entries == nil && w >= 1 && s[w-1] == '\\' && j-w > 1 {
					w++ // "\nghp_…" in escaped text: the word is "ghp"
					entries = a.lookup(s, w, j)
				}
				if entries == nil {
					return j + 1
				}
				return try(w, entries)
			})
		}
	}
	for _, n := range needled {
		indexAll(s, n.entries[0].prefix[n.off:], n.off, func(j int) int {
			return try(j-n.off, n.entries)
		})
	}
	return spans
}

// match checks the token of e's rule at s[i:], which starts with e.prefix.
// It returns the token's span and, matched or not, where the scan
// continues: after the examined body, so that a long run of prefixes is not
// rescanned from each of them.
func (e prefixEntry) match(s string, i int) (span, int, bool) {
	r := e.rule
	if !leftBoundary(s, i) {
		return span{}, i + len(e.prefix), false
	}
	if r.match != nil {
		return r.match(s, i)
	}
	b := i + len(e.prefix)
	end := runEnd(s, b, r.body)
	e2 := end
	if r.trimDots {
		e2 = trimDots(s, b, end)
	}
	n := e2 - b
	if n < r.min || (r.max > 0 && n > r.max) ||
		(e2 < len(s) && isAlnum(s[e2])) ||
		(r.ok != nil && !r.ok(s[b:e2])) {
		return span{}, end, false
	}
	return span{i, e2, r.typ}, end, true
}

// indexByteAll calls f for every occurrence of c in s; f returns where to
// continue (at least one past the occurrence).
func indexByteAll(s string, c byte, f func(i int) int) {
	from := 0
	for from < len(s) {
		j := strings.IndexByte(s[from:], c)
		if j < 0 {
			return
		}
		i := from + j
		from = max(f(i), i+1)
	}
}

// matchJWT matches a JSON Web Token at s[i:] ("eyJ", base64url of `{"`):
// a header, a payload starting "ey", and a possibly empty signature.
func matchJWT(s string, i int) (span, int, bool) {
	h := runEnd(s, i, isWordish)
	if h-i < 12 || h >= len(s) || s[h] != '.' {
		return span{}, h, false
	}
	p := runEnd(s, h+1, isWordish)
	if p-(h+1) < 12 || !strings.HasPrefix(s[h+1:], "ey") || p >= len(s) || s[p] != '.' {
		return span{}, p, false
	}
	sig := runEnd(s, p+1, isWordish)
	return span{i, sig, typeJWT}, sig, true
}

// matchSendGrid matches a SendGrid key at s[i:]: SG.<22>.<43> (base64url).
func matchSendGrid(s string, i int) (span, int, bool) {
	a := runEnd(s, i+3, isWordish)
	if a-(i+3) < 16 || a >= len(s) || s[a] != '.' {
		return span{}, a, false
	}
	b := runEnd(s, a+1, isWordish)
	if b-(a+1) < 30 || (b < len(s) && isAlnum(s[b])) {
		return span{}, b, false
	}
	return span{i, b, typeSendGrid}, b, true
}

// matchSlackWebhook matches the secret path of a Slack incoming webhook or
// workflow trigger URL at s[i:] ("hooks.slack.com/…"); the host stays
// readable.
func matchSlackWebhook(s string, i int) (span, int, bool) {
	b := i + len("hooks.slack.com/")
	for _, kind := range []string{"services/", "workflows/", "triggers/"} {
		if strings.HasPrefix(s[b:], kind) {
			b += len(kind)
			e := runEnd(s, b, func(c byte) bool { return isWordish(c) || c == '/' })
			if e-b < 20 {
				return span{}, e, false
			}
			return span{b, e, typeSlack}, e, true
		}
	}
	return span{}, b, false
}
