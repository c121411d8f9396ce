package redact

import "strings"

// maxKeyLen bounds key names, which keeps the scan linear on long runs of
// identifier characters.
const maxKeyLen = 128

// classifyLen bounds how much of an unquoted value is inspected to decide
// whether it looks like code (the whole value is still redacted).
const classifyLen = 256

// findKeyValues finds secrets in key/value pairs: KEY=value, KEY: value,
// "key": "value", key = 'value', export KEY="value", --password=value,
// ?token=value. It starts from each '=' and ':' and looks back for the key.
// Depending on the key it yields
//   - aws-secret for a 40-byte value of an aws_secret_access_key-style key,
//   - bearer-token for the credentials of an Authorization header,
//   - env-secret for keys whose name says they hold a secret.
//
// The key stays; the value is redacted. See the package comment for how
// code is told apart from configuration.
func findKeyValues(t *text, spans []span) []span {
	s := t.s
	var stops stopMemo
	var lines lineMemo
	cursor := 0 // everything before cursor has been decided
	eq, co := nextIndexByte(s, 0, '='), nextIndexByte(s, 0, ':')
	for eq >= 0 || co >= 0 {
		var q int
		if co < 0 || (eq >= 0 && eq < co) {
			q, eq = eq, nextIndexByte(s, eq+1, '=')
		} else {
			q, co = co, nextIndexByte(s, co+1, ':')
		}
		if q < cursor {
			continue
		}
		r := q
		for r > cursor && (s[r-1] == ' ' || s[r-1] == '\t') {
			r--
		}
		if r > cursor && (s[r-1] == '"' || s[r-1] == '\'') {
			r--
		}
		l := r
		for l > cursor && r-l <= maxKeyLen && isKeyChar(s[l-1]) {
			l--
		}
		if l == r || r-l > maxKeyLen {
			continue
		}
		if l >= 1 && s[l-1] == ':' && strings.HasSuffix(s[:l-1], "[REDACTED") {
			continue // the type inside a placeholder
		}
		key := s[l:r]
		trig := secretTriggers(key)
		if trig == 0 {
			continue
		}
		var (
			sp   span
			next int
			ok   bool
		)
		switch {
		case trig&trigSecret != 0 && isAWSSecretKey(key):
			sp, next, ok = awsSecretValue(s, r)
			if !ok {
				sp, next, ok = envValue(s, l, r, &stops, &lines)
				ok = ok && keyIsSecret(key, strings.ToLower(key))
			}
		case trig&trigAuth != 0 && hasSuffixFold(key, "authorization"):
			v, sep, ok2 := afterSeparator(s, r)
			if ok2 && (sep == ":" || sep == "=") {
				sp, next, ok = authHeaderValue(s, v)
			}
		default:
			// the value test is cheaper and rejects most code
			sp, next, ok = envValue(s, l, r, &stops, &lines)
			ok = ok && keyIsSecret(key, strings.ToLower(key)) // key is ASCII
		}
		if ok {
			spans = append(spans, sp)
			cursor = next
		}
	}
	return spans
}

// nextIndexByte returns the index of c in s at or after from, or -1.
func nextIndexByte(s string, from int, c byte) int {
	if from >= len(s) {
		return -1
	}
	if j := strings.IndexByte(s[from:], c); j >= 0 {
		return from + j
	}
	return -1
}

// isAWSSecretKey reports key names of AWS secret access keys
// (aws_secret_access_key, AWS_SECRET_ACCESS_KEY, SecretAccessKey, aws_secret).
func isAWSSecretKey(key string) bool {
	kl := strings.ToLower(key)
	for _, l := range []string{"secret_access_key", "secretaccesskey", "secret-access-key", "aws_secret"} {
		if strings.Contains(kl, l) {
			return true
		}
	}
	return false
}

// hasSuffixFold reports whether s ends with the lowercase ASCII suffix,
// ignoring ASCII case.
func hasSuffixFold(s, suffix string) bool {
	return len(s) >= len(suffix) && hasPrefixFold(s[len(s)-len(suffix):], suffix)
}

// awsSecretValue returns the 40-byte AWS secret access key after the key
// ending at s[r:]. Without such a label a 40-byte base64 string is
// indistinguishable from a hash, so it is not redacted on its own.
func awsSecretValue(s string, r int) (span, int, bool) {
	v, _, ok := afterSeparator(s, r)
	if !ok {
		return span{}, 0, false
	}
	if v < len(s) && (s[v] == '"' || s[v] == '\'') {
		v++
	}
	e := runEnd(s, v, isAWSSecretChar)
	if e-v != 40 || (e < len(s) && s[e] == '=') {
		return span{}, 0, false
	}
	return span{v, e, typeAWSSecret}, e, true
}

func isAWSSecretChar(c byte) bool { return isAlnum(c) || c == '/' || c == '+' }

// envValue parses the separator and value after the key s[l:r] and returns
// the value's span and where the scan continues, or ok=false when there is
// no value worth redacting.
func envValue(s string, l, r int, stops *stopMemo, lines *lineMemo) (sp span, next int, ok bool) {
	v, sep, spaced, ok := separator(s, r)
	if !ok || v >= len(s) {
		return span{}, 0, false
	}
	// Quoted value: "…", '…', `…`, or the escaped \"…\" of JSON-in-JSON.
	open := ""
	switch {
	case s[v] == '"' || s[v] == '\'' || s[v] == '`':
		open = s[v : v+1]
	case s[v] == '\\' && v+1 < len(s) && (s[v+1] == '"' || s[v+1] == '\''):
		open = s[v : v+2]
	}
	if open != "" {
		a := v + len(open)
		if rejectedPrefix(s[a:]) || (len(open) == 1 && insideString(s, l, r, open[0], lines)) ||
			(open == "`" && sep == "=" && !spaced) { // shell command substitution
			return span{}, 0, false
		}
		e := closeQuote(s, a, open)
		val := s[a:e]
		if val == "" || isMask(val) || isReserved(val) ||
			(!isEnvStyle(s[l:r]) && namesKey(s[l:r], val)) {
			return span{}, 0, false
		}
		return span{a, e, typeEnvSecret}, e, true
	}
	// Unquoted value.
	switch {
	case sep == ":=" || sep == "=>":
		return span{}, 0, false // Go declarations, arrows: only literals count
	case sep == ":" && !spaced:
		return span{}, 0, false // "token:abc" is a name; YAML needs a blank
	case rejectedPrefix(s[v:]):
		return span{}, 0, false
	}
	e := stops.next(s, v)
	val := s[v:e]
	if val == "" || isMask(val) || isReserved(val) {
		return span{}, 0, false
	}
	key := s[l:r]
	permissive := false
	switch sep {
	case "=":
		permissive = !spaced && (isEnvStyle(key) || strings.HasPrefix(key, "--") ||
			(l > 0 && (s[l-1] == '?' || s[l-1] == '&')) || atLineStart(s, l, lines))
	case ":":
		permissive = isEnvStyle(key)
	}
	if permissive {
		if looksLikeCall(val) {
			return span{}, 0, false
		}
		return span{v, e, typeEnvSecret}, e, true
	}
	// Code or prose: a sentence's closing punctuation is not part of the
	// value ("Password: hunter2."), nor of what decides whether it is one.
	val = trimRightAny(val, ".,:")
	if !looksSecret(trimRightAny(val[:min(len(val), classifyLen)], "!?")) {
		return span{}, 0, false
	}
	return span{v, v + len(val), typeEnvSecret}, v + len(val), true
}

// namesKey reports a quoted value that is a word of its own key, as in
// const tokenKey = "token": a name, not a secret.
func namesKey(key, val string) bool {
	if len(val) < 3 || len(val) > len(key) {
		return false
	}
	for i := 0; i < len(val); i++ {
		if !isAlpha(val[i]) {
			return false
		}
	}
	return strings.Contains(strings.ToLower(key), strings.ToLower(val))
}

// closeQuote returns the end of a quoted value starting at s[a:]: the
// closing quote, the end of the line, or the end of the text. Backslash
// escapes are honoured except in single quotes.
func closeQuote(s string, a int, open string) int {
	if len(open) == 2 { // \" … \"
		for i := a; i < len(s); i++ {
			if s[i] == '\n' || strings.HasPrefix(s[i:], open) {
				return i
			}
		}
		return len(s)
	}
	q := open[0]
	for i := a; i < len(s); i++ {
		switch c := s[i]; {
		case c == q || c == '\n':
			return i
		case c == '\\' && q != '\'' && i+1 < len(s) && s[i+1] != '\n':
			i++
		}
	}
	return len(s)
}

// isValueStop ends an unquoted value at s[i].
func isValueStop(s string, i int) bool {
	switch c := s[i]; c {
	case ' ', '\t', '\n', '\r', '\v', '\f', '"', '\'', '`', ',', ';', '&', ')', '}', '>', '<':
		return true
	case '\\': // escaped newline or quote in JSON-escaped text
		if i+1 < len(s) {
			switch s[i+1] {
			case 'n', 'r', 't', '"', '\'':
				return true
			}
		}
	}
	return false
}

// stopMemo remembers the last computed value end: every position between a
// start and its stop has the same stop, so rescans of overlapping values
// (many candidate keys inside one long value) cost nothing.
type stopMemo struct{ from, at int }

func (m *stopMemo) next(s string, p int) int {
	if m.at > 0 && m.from <= p && p <= m.at {
		return m.at
	}
	i := p
	for i < len(s) && !isValueStop(s, i) {
		i++
	}
	m.from, m.at = p, i
	return i
}

// rejectedPrefix reports values that are known not to be literal secrets
// from their first bytes: placeholders, references, file paths.
func rejectedPrefix(v string) bool {
	if v == "" {
		return false
	}
	if startsWithPlaceholder(v) || isReference(v) {
		return true
	}
	for _, p := range []string{"/", "./", "../", "~/"} {
		if strings.HasPrefix(v, p) {
			return true
		}
	}
	return false
}

// isReference reports values that refer to a secret instead of holding it:
// $VAR, ${VAR}, $(cmd), {{ template }}, {placeholder}, <placeholder>, %VAR%,
// and printf verbs (%s).
func isReference(v string) bool {
	if v == "" {
		return false
	}
	switch v[0] {
	case '$':
		return len(v) > 1 && (isAlpha(v[1]) || v[1] == '_' || v[1] == '{' || v[1] == '(')
	case '{', '<':
		return true
	case '%': // %VAR%, and format verbs: %s, %v, %(name)s
		return true
	}
	return false
}

// insideString reports whether the key s[l:r] sits inside a string literal
// delimited by q, as in print("Password: "): then the q after the separator
// closes that literal instead of opening a value. A quoted key ("password":)
// does not count. Keys more than 1 KiB into a line are not examined.
func insideString(s string, l, r int, q byte, lines *lineMemo) bool {
	start := lines.start(s, l)
	if l-start > 1024 {
		return false
	}
	n := strings.Count(s[start:l], string(q))
	if l > 0 && s[l-1] == q && r < len(s) && s[r] == q {
		n--
	}
	return n%2 == 1
}

// lineMemo finds the start of the line holding a position. Queries come in
// increasing order, so each byte is examined once overall.
type lineMemo struct{ pos, lineStart int }

func (m *lineMemo) start(s string, p int) int {
	if p < m.pos {
		m.pos, m.lineStart = 0, 0
	}
	if nl := strings.LastIndexByte(s[m.pos:p], '\n'); nl >= 0 {
		m.lineStart = m.pos + nl + 1
	}
	m.pos = p
	return m.lineStart
}

// isMask reports redaction masks such as "****", "xxxx", "•••" or "...".
func isMask(v string) bool {
	if v == "" {
		return false
	}
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '*', 'x', 'X', '.', '_', '-':
		default:
			if !strings.HasPrefix(v[i:], "•") {
				return false
			}
			i += len("•") - 1
		}
	}
	return true
}

// trimRightAny trims trailing bytes found in cut (ASCII).
func trimRightAny(v, cut string) string {
	for len(v) > 0 && strings.IndexByte(cut, v[len(v)-1]) >= 0 {
		v = v[:len(v)-1]
	}
	return v
}

// isReserved reports literals that are never secrets.
func isReserved(v string) bool {
	if len(v) > 9 {
		return false
	}
	switch strings.ToLower(v) {
	case "true", "false", "null", "nil", "none", "undefined", "yes", "no", "on", "off":
		return true
	}
	return false
}

// isEnvStyle reports SHOUTING_SNAKE_CASE keys, as used by environment
// variables and .env files, where values are literals rather than code.
func isEnvStyle(key string) bool {
	key = strings.TrimLeft(key, "-")
	upper := false
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case isUpper(c):
			upper = true
		case isDigit(c) || c == '_':
		default:
			return false
		}
	}
	return upper
}

// atLineStart reports whether only blanks or a shell word such as "export"
// precede s[l] on its line (a .env or shell assignment rather than a
// keyword argument inside code).
func atLineStart(s string, l int, lines *lineMemo) bool {
	start := lines.start(s, l)
	if l-start > 64 {
		start = l - 64
	}
	line := s[start:l]
	if esc := strings.LastIndex(line, `\n`); esc >= 0 {
		line = line[esc+2:] // JSON-escaped text
	} else if start > 0 && s[start-1] != '\n' {
		return false
	}
	line = strings.TrimSpace(line)
	switch strings.ToLower(line) {
	case "", "export", "set", "setenv", "env", "arg", "declare -x", "local", "readonly", "-", "$":
		return true
	}
	return false
}

// isIdentPath reports identifiers and member paths such as cfg.Token,
// user?.password, opts!.secret, *flagPassword, &opts.Secret: identifiers
// joined by '.', '?.' or '!.', optionally behind '*', '&' or '!'.
func isIdentPath(v string) bool {
	v = strings.TrimLeft(v, "*&!")
	for {
		if v == "" || !(isAlpha(v[0]) || v[0] == '_' || v[0] == '$') {
			return false
		}
		i := 1
		for i < len(v) && (isAlnum(v[i]) || v[i] == '_' || v[i] == '$') {
			i++
		}
		if i < len(v) && (v[i] == '?' || v[i] == '!') {
			i++
		}
		switch {
		case i == len(v):
			return true
		case v[i] != '.':
			return false
		}
		v = v[i+1:]
	}
}

// looksLikeCall reports an unquoted value that is a function call, such as
// getToken() or os.environ.get(.
func looksLikeCall(v string) bool {
	i := strings.IndexByte(v, '(')
	return i > 0 && isIdentPath(v[:i])
}

// isValueCodeChar reports bytes that, right after a word, make it code
// (a call, an index, a generic type, a composite literal).
func isValueCodeChar(c byte) bool { return c == '(' || c == '[' || c == '{' || c == '<' }

// looksSecret decides, in code-like contexts, whether an unquoted value is
// a literal secret rather than an expression or a word. Identifiers, member
// paths and lowercase slugs count as code unless they carry digits
// (hunter2) or look random (long, with many upper- and lowercase letters).
func looksSecret(v string) bool {
	if len(v) < 4 || strings.ContainsAny(v, "([{<") {
		return false
	}
	if isIdentPath(v) && strings.ContainsAny(v, ".*&!?") {
		return false // member path, optional chaining, pointers
	}
	word, nu, nl, nd := true, 0, 0, 0
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case isUpper(c):
			nu++
		case isLowerAlpha(c):
			nl++
		case isDigit(c):
			nd++
		case c != '_' && c != '-' && c != '$':
			word = false
		}
	}
	switch {
	case !word:
		return true // punctuation: p@ssw0rd, a.b+c, 10.0.0.1
	case nd > 0:
		return true // hunter2, 1234, abc-123
	}
	// letters only: a word, an identifier or a type name, unless random
	return len(v) >= 16 && nu*4 >= len(v) && nl*4 >= len(v)
}

// keyIsSecret reports whether a key name says its value is a secret; kl
// is the key in lowercase.
func keyIsSecret(key, kl string) bool {
	var segBuf [16]string
	segs := splitKey(key, kl, segBuf[:0])
	if len(segs) == 0 {
		return false
	}
	if nonSecretLast[segs[len(segs)-1]] || nonSecretFirst[segs[0]] {
		return false
	}
	j := strings.Join(segs, "")
	if j == "pwd" || j == "oldpwd" {
		return false // the shell's working directory
	}
	for _, c := range secretCompounds {
		if strings.Contains(j, c) {
			return true
		}
	}
	env := isEnvStyle(key)
	for _, seg := range segs {
		switch {
		case strings.Contains(seg, "secret"), strings.Contains(seg, "passw"),
			strings.Contains(seg, "passphrase"), strings.Contains(seg, "credential"),
			strings.Contains(seg, "pwd"):
			return true
		case strings.Contains(seg, "token"):
			// max_tokens, tokenizer, tokenise are not tokens
			if !strings.HasSuffix(seg, "tokens") && !strings.Contains(seg, "tokeni") {
				return true
			}
		case secretSegments[seg]:
			return true
		case seg == "pat" && env: // GITHUB_PAT; "pat" in code is a regex
			return true
		}
	}
	return false
}

// Bits of secretTriggers.
const (
	trigSecret = 1 << iota
	trigAuth
	trigOther
)

// secretTriggers is a quick filter on a key name, ignoring ASCII case:
// every name that keyIsSecret, isAWSSecretKey or an Authorization header
// accepts contains "secret", "auth", or one of "pass", "pw", "token",
// "cred", "pat", "key". It reports which of the three groups occur.
func secretTriggers(key string) int {
	t := 0
	for i := 0; i+1 < len(key); i++ {
		switch key[i] | 0x20 {
		case 's':
			if hasPrefixFold(key[i:], "secret") {
				t |= trigSecret
			}
		case 'a':
			if hasPrefixFold(key[i:], "auth") {
				t |= trigAuth
			}
		case 'p':
			if hasPrefixFold(key[i:], "pass") || hasPrefixFold(key[i:], "pw") || hasPrefixFold(key[i:], "pat") {
				t |= trigOther
			}
		case 't':
			if hasPrefixFold(key[i:], "token") {
				t |= trigOther
			}
		case 'c':
			if hasPrefixFold(key[i:], "cred") {
				t |= trigOther
			}
		case 'k':
			if hasPrefixFold(key[i:], "key") {
				t |= trigOther
			}
		}
	}
	return t
}

// secretCompounds are secret names that span two segments (API_KEY,
// apiKey, x-api-key …), matched in the joined lowercase segments.
var secretCompounds = []string{
	"apikey", "accesskey", "privatekey", "secretkey", "sessionkey", "authkey",
	"encryptionkey", "signingkey", "masterkey", "licensekey", "appkey", "clientkey",
}

// secretSegments are whole segments that name a secret.
var secretSegments = map[string]bool{
	"auth": true, "pass": true, "pw": true, "creds": true, "cred": true, "passcode": true,
}

// nonSecretFirst are leading segments of names that count or limit tokens.
var nonSecretFirst = map[string]bool{"max": true, "min": true, "num": true, "total": true}

// nonSecretLast are trailing segments that make a secret-sounding name refer
// to something else: TOKEN_URL, PASSWORD_FILE, AUTH_TYPE, SECRET_NAME …
var nonSecretLast = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`
		url uri urls endpoint endpoints host hostname domain port server service api
		file files path paths dir directory folder location store storage cache
		ttl expiry expires expiration exp in at on by lifetime duration timeout
		interval period window age rotation
		type types kind method methods mode modes scheme strategy flow grant provider providers
		scope scopes issuer audience aud iss alg algorithm algo
		header headers prefix suffix format field fields param params parameter
		name names id ids label description desc hint help prompt placeholder
		message msg error err text title
		user username users login email
		version ver env environment var variable vars level policy rule rules
		regex pattern validator validation class handler helper manager middleware
		module plugin command cmd script callback redirect
		count counter num number index idx len length size limit max min budget usage
		enabled enable disabled disable required optional allowed
		changed updated created`) {
		nonSecretLast[w] = true
	}
}

// splitKey splits a key name into lowercase segments at non-alphanumeric
// bytes and camelCase boundaries: "dbPassword" → db password, "DBPass" →
// db pass, "x-api-key" → x api key. kl is key in lowercase; the segments are
// substrings of kl appended to segs.
func splitKey(key, low string, segs []string) []string {
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			segs = append(segs, low[start:end])
		}
		start = -1
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !isAlnum(c) {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		prev := key[i-1]
		if isUpper(c) && (isLowerAlpha(prev) || isDigit(prev) ||
			(isUpper(prev) && i+1 < len(key) && isLowerAlpha(key[i+1]))) {
			flush(i)
			start = i
		}
	}
	flush(len(key))
	return segs
}
