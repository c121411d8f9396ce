// Package redact owns secret redaction: it is the one place that decides
// which parts of captured conversation text are credentials, private keys or
// user-marked private content, and replaces them with typed placeholders of
// the form "[REDACTED:<type>]". Everything engram captures passes through
// String before it is stored, logged, sent to an LLM or written to
// MEMORY.md.
//
// Detection works in ordered passes over the text. Each pass sees the output
// of the previous one and every detector skips placeholders, so specific
// detectors win over generic ones (GITHUB_TOKEN=ghp_… becomes
// GITHUB_TOKEN=[REDACTED:github]) and a placeholder is never re-redacted:
//
//  1. private      <private>…</private> blocks (case-insensitive, nesting
//     counted; an unterminated block runs to the end of the text)
//  2. private-key  -----BEGIN … PRIVATE KEY----- … -----END … PRIVATE KEY-----
//     (RSA, EC, DSA, OPENSSH, ENCRYPTED, PGP … BLOCK; unterminated runs to
//     the end of the text)
//  3. provider tokens with a recognisable prefix or shape: anthropic, openai,
//     github, gitlab, slack (tokens and webhook URLs), google, stripe,
//     huggingface, npm, sendgrid, twilio, aws-key, jwt
//  4. url-password the password of scheme://user:password@host URLs and of
//     `curl -u user:password`
//  5. bearer-token credentials after a standalone "Bearer <token>" or
//     "Basic <base64 of user:pass>"
//  6. key/value pairs (KEY=value, KEY: value, "key": "value", export
//     KEY="value", --key=value, ?key=value), typed by the key: aws-secret for
//     the 40-byte value of aws_secret_access_key or SecretAccessKey;
//     bearer-token for the credentials of an Authorization header, any
//     scheme; env-secret for the value of a key whose name says it holds a
//     secret (SECRET, TOKEN, PASSWORD, PASSWD, PWD, PASS, API_KEY,
//     ACCESS_KEY, PRIVATE_KEY, CREDENTIAL, AUTH, SESSION_KEY, CLIENT_SECRET …)
//
// A replacement can change what a detector sees next to it, so the passes
// are repeated until a round changes nothing; that makes String idempotent
// by construction. Text without secrets takes one round, text with secrets
// usually two.
//
// Detectors are hand-written scanners rather than regular expressions: each
// starts from a rare byte or substring found with the vectorised
// strings.IndexByte/strings.Index, so text without triggers costs a few fast
// scans, and each resumes after the region it examined or memoises what it
// measured, so the running time stays linear in the input even for
// adversarial text.
//
// Known limits (deliberate trade-offs against false positives):
//   - Secrets without a known prefix are found only next to a key name that
//     says "secret" (env-secret, aws-secret, Authorization headers). A bare
//     random string in prose, a 40-byte AWS secret without its label, or a
//     password passed as `mysql -pXXX`, `redis-cli -a XXX`, `sshpass -p XXX`,
//     `--password XXX` (blank instead of "="), a YAML `- name: TOKEN` /
//     `value: …` pair, a k8s Secret's base64 data or a PuTTY key file is not
//     recognised. Key names are ASCII.
//   - Unquoted values end at whitespace and at , ; & ) } < >: so
//     `PASSWORD=correct horse` redacts only "correct". Quoted values are
//     taken up to the closing quote on the same line.
//   - In code and prose (lowercase or camelCase keys, "key = value" with
//     blanks, "Key: value") an unquoted value is redacted only when it does
//     not look like code or a word: identifiers, member paths, slugs and
//     type names without digits (`token: string`, `password = user.password`,
//     `auth: basic-auth`), calls, indexing and references ($VAR, ${VAR},
//     $(cmd), `cmd`, %VAR%, %s, {{tmpl}}, {name}, <placeholder>) are kept,
//     and closing ".,:" stays outside the placeholder. So `password: hunter`
//     stays while `password: hunter2` is redacted. In .env/shell/YAML form
//     with SHOUTING_CASE keys (POSTGRES_PASSWORD: example, DB_PASS=postgres)
//     every value except references is redacted. A value starting with '$'
//     is taken for a reference, one starting with '/', './', '../' or '~/'
//     for a file path.
//   - Quoted values in code are redacted whatever they hold (token =
//     "Bearer " + t loses "Bearer "), except a word of the key itself
//     (const tokenKey = "token").
//   - Key names that contain a secret word but name something else are
//     kept when a part says so (TOKEN_URL, PASSWORD_FILE, AUTH_TYPE,
//     max_tokens, SECRET_NAME, CLIENT_ID …); the list is heuristic.
//   - url-password needs percent-encoding in the password as RFC 3986
//     requires; an unencoded '/', '?', '#' or whitespace ends the URL early.
//   - Prefix tokens need a non-alphanumeric byte (or a JSON escape such as
//     \n) before them, so a token glued to a preceding word is missed.
//     Publishable Stripe keys (pk_live_) and test keys are redacted too.
//   - A literal "<private>" or "-----BEGIN RSA PRIVATE KEY" mentioned in
//     prose without its closing counterpart redacts the rest of the text:
//     fail closed.
package redact

import (
	"slices"
	"strings"
)

// placeholderPrefix starts every placeholder. Types consist of lowercase
// ASCII letters and '-', so a placeholder never contains a trigger of any
// detector.
const placeholderPrefix = "[REDACTED:"

// Placeholder types, the <type> in "[REDACTED:<type>]".
const (
	typePrivate     = "private"
	typePrivateKey  = "private-key"
	typeAnthropic   = "anthropic"
	typeOpenAI      = "openai"
	typeAWSKey      = "aws-key"
	typeAWSSecret   = "aws-secret"
	typeGitHub      = "github"
	typeGitLab      = "gitlab"
	typeSlack       = "slack"
	typeGoogle      = "google"
	typeStripe      = "stripe"
	typeHuggingFace = "huggingface"
	typeNPM         = "npm"
	typeSendGrid    = "sendgrid"
	typeTwilio      = "twilio"
	typeJWT         = "jwt"
	typeURLPassword = "url-password"
	typeBearer      = "bearer-token"
	typeEnvSecret   = "env-secret"
)

// placeholder returns the text that replaces a secret of type typ.
func placeholder(typ string) string { return placeholderPrefix + typ + "]" }

// span is a half-open byte range [start, end) of the current text to be
// replaced by the placeholder for typ.
type span struct {
	start, end int
	typ        string
}

// text is the state shared by the passes of one String call.
type text struct {
	s string
}

// passes run in this order; see the package comment for why order matters.
var passes = []func(*text, []span) []span{
	findPrivateBlocks,
	findPrivateKeys,
	findTokens,
	findURLPasswords,
	findBearer,
	findKeyValues,
}

// String returns s with every detected secret replaced by a typed
// placeholder "[REDACTED:<type>]", and the number of replacements made.
// It never fails: any byte sequence is accepted, bytes outside replaced
// ranges are kept as they are, and valid UTF-8 input gives valid UTF-8
// output. String(String(s)) returns the same text as String(s) with zero
// replacements. The count includes every replacement made, also one that
// a later, larger replacement swallowed (TOKEN=x-sk-… first loses the
// OpenAI key, then the whole value).
func String(s string) (string, int) {
	t := text{s: s}
	n := 0
	var spans []span
	// Replacing a secret can change what a detector sees next to it (a
	// candidate it skipped while examining a longer one, the boundary of a
	// key). Running the passes again until nothing changes makes String
	// idempotent by construction. Text without secrets takes one round,
	// text with secrets usually two; the bound only guards pathological
	// input, as every round must turn text into fewer placeholders.
	for range maxRounds {
		changed := false
		for _, find := range passes {
			spans = find(&t, spans[:0])
			if len(spans) == 0 {
				continue
			}
			spans = mergeSpans(spans)
			t.s = apply(t.s, spans)
			n += len(spans)
			changed = true
		}
		if !changed {
			break
		}
	}
	return t.s, n
}

// maxRounds bounds the rounds of passes in String.
const maxRounds = 8

// mergeSpans sorts spans and merges overlapping ones, keeping the type of
// the first, so that a secret partly covered by two detections is redacted
// as a whole.
func mergeSpans(spans []span) []span {
	if len(spans) == 1 {
		return spans
	}
	slices.SortFunc(spans, func(a, b span) int {
		if a.start != b.start {
			return a.start - b.start
		}
		return b.end - a.end
	})
	out := spans[:1]
	for _, sp := range spans[1:] {
		last := &out[len(out)-1]
		if sp.start < last.end {
			last.end = max(last.end, sp.end)
			continue
		}
		out = append(out, sp)
	}
	return out
}

// apply replaces the sorted, non-overlapping spans of s.
func apply(s string, spans []span) string {
	var b strings.Builder
	b.Grow(len(s) + 24*len(spans))
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp.start])
		b.WriteString(placeholderPrefix)
		b.WriteString(sp.typ)
		b.WriteByte(']')
		last = sp.end
	}
	b.WriteString(s[last:])
	return b.String()
}

// placeholderLen returns the length of the placeholder starting at s[i:],
// or 0 if there is none.
func placeholderLen(s string, i int) int {
	if !strings.HasPrefix(s[i:], placeholderPrefix) {
		return 0
	}
	j := i + len(placeholderPrefix)
	k := j
	for k < len(s) && k-j <= 32 && (isLowerAlpha(s[k]) || s[k] == '-') {
		k++
	}
	if k == j || k >= len(s) || s[k] != ']' {
		return 0
	}
	return k + 1 - i
}

// startsWithPlaceholder reports whether v begins with a placeholder.
func startsWithPlaceholder(v string) bool { return placeholderLen(v, 0) > 0 }

func isUpper(c byte) bool      { return 'A' <= c && c <= 'Z' }
func isLowerAlpha(c byte) bool { return 'a' <= c && c <= 'z' }
func isDigit(c byte) bool      { return '0' <= c && c <= '9' }
func isAlpha(c byte) bool      { return isUpper(c) || isLowerAlpha(c) }
func isHex(c byte) bool {
	return isDigit(c) || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

// Character classes of the hot loops, as a table.
const (
	clAlnum   = 1 << iota
	clWordish // alnum, '_', '-': base64url-like token bodies
	clKey     // wordish and '.': key names
)

var charClass = func() (t [256]uint8) {
	for c := range 256 {
		b := byte(c)
		if isAlpha(b) || isDigit(b) {
			t[c] |= clAlnum | clWordish | clKey
		}
	}
	for _, b := range []byte("_-") {
		t[b] |= clWordish | clKey
	}
	t['.'] |= clKey
	return t
}()

func isAlnum(c byte) bool   { return charClass[c]&clAlnum != 0 }
func isWordish(c byte) bool { return charClass[c]&clWordish != 0 }
func isKeyChar(c byte) bool { return charClass[c]&clKey != 0 }

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// leftBoundary reports whether a token may start at s[i]: the byte before
// it is not alphanumeric, or it is the letter of a JSON/C escape such as
// "\n", as found in escaped log lines.
func leftBoundary(s string, i int) bool {
	if i == 0 {
		return true
	}
	c := s[i-1]
	if !isAlnum(c) {
		return true
	}
	return i >= 2 && s[i-2] == '\\' && (c == 'n' || c == 't' || c == 'r')
}

// runEnd returns the end of the run of bytes satisfying in, starting at i.
func runEnd(s string, i int, in func(byte) bool) int {
	for i < len(s) && in(s[i]) {
		i++
	}
	return i
}

// classes counts which of lowercase, uppercase and digit occur in v.
func classes(v string) (lower, upper, digit bool) {
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case isLowerAlpha(c):
			lower = true
		case isUpper(c):
			upper = true
		case isDigit(c):
			digit = true
		}
	}
	return
}

// indexAll calls f for every occurrence of needle in s at or after from;
// f returns where to continue searching (at least one past the match).
func indexAll(s, needle string, from int, f func(i int) int) {
	for from <= len(s) {
		j := strings.Index(s[from:], needle)
		if j < 0 {
			return
		}
		i := from + j
		next := f(i)
		from = max(next, i+1)
	}
}
