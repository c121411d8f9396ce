package extract

import (
	"strings"
)

// Entities are the named things of an exchange, kept for recall: file
// paths (absolute, relative with an extension, bare file names with a
// known extension), modules and packages (github.com/x/y, @scope/pkg, the
// names in install commands), commands (the first word of each Bash
// command, with the subcommand for go, npm, git, docker … : "go test"),
// tool names (Bash, Write …), URLs, and named things (CamelCase and
// snake_case identifiers, pkg.Ident, f(), backticked terms, and
// capitalised words inside a sentence: Postgres, Docker).
//
// They are collected in the order the exchange shows them, block by
// block, deduplicated case-insensitively, at most maxEntities. Tool
// results and code blocks are noisy (listings, source code), so only
// paths, URLs and modules are taken from them. A bare file name is
// dropped when a path with that base name is already there.

// maxEntities bounds the entities of one exchange; maxEntityLen bounds one.
const (
	maxEntities  = 20
	maxEntityLen = 120
)

// entitySet collects entities in first-seen order.
type entitySet struct {
	list        []string
	seen        map[string]bool // lower-cased
	bases       map[string]bool // lower-cased base names of paths
	tried       map[string]bool // words of tool output already classified
	projectPath string          // with a trailing slash
	// projectPaths counts paths inside the project (relative ones, bare
	// file names, absolute ones under projectPath): the scope rule weighs
	// them against global preferences.
	projectPaths int
}

func newEntitySet(projectPath string) *entitySet {
	e := &entitySet{seen: map[string]bool{}, bases: map[string]bool{}, tried: map[string]bool{}}
	if p := strings.TrimRight(projectPath, "/"); p != "" {
		e.projectPath = p + "/"
	}
	return e
}

func (e *entitySet) full() bool { return len(e.list) >= maxEntities }

// result returns the entities, without the bare file names of which a
// path came later.
func (e *entitySet) result() []string {
	out := e.list[:0:0]
	for _, s := range e.list {
		if !strings.ContainsAny(s, "/ ") && e.bases[strings.ToLower(s)] {
			if _, ok := pathLike(s); ok {
				continue
			}
		}
		out = append(out, s)
	}
	return out
}

// add adds s unless it is empty, too long or already there.
func (e *entitySet) add(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > maxEntityLen || e.full() {
		return false
	}
	if e.seen[s] {
		return false
	}
	k := strings.ToLower(s)
	if k != s && e.seen[k] {
		return false
	}
	e.seen[k] = true
	e.list = append(e.list, s)
	return true
}

// addPath adds a file path.
func (e *entitySet) addPath(p string) {
	slash := strings.LastIndexByte(p, '/')
	if slash < 0 && (e.bases[p] || e.bases[strings.ToLower(p)]) {
		return
	}
	if !e.add(p) {
		return
	}
	if slash >= 0 {
		e.bases[strings.ToLower(p[slash+1:])] = true
	}
	switch {
	case strings.HasPrefix(p, "~"):
	case strings.HasPrefix(p, "/"):
		if e.projectPath != "" && strings.HasPrefix(p, e.projectPath) {
			e.projectPaths++
		}
	default:
		e.projectPaths++
	}
}

// text scans user or assistant text: every kind of entity outside code
// blocks, only paths, URLs and modules inside them.
func (e *entitySet) text(s string) {
	inFence := false
	for line := range strings.Lines(s) {
		if e.full() {
			return
		}
		t := strings.TrimLeft(line, " \t")
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			inFence = !inFence
			continue
		}
		if inFence {
			e.plain(line)
			continue
		}
		e.line(line)
	}
}

// line scans one line of prose.
func (e *entitySet) line(line string) {
	fields := strings.Fields(line)
	pkgs := installArgs(fields)
	atStart := true // at the start of a sentence
	for i := 0; i < len(fields) && !e.full(); i++ {
		f := fields[i]
		if strings.HasPrefix(f, "`") {
			// A backticked term, maybe of several words.
			j := i
			joined := f
			for !strings.HasSuffix(strings.TrimRight(joined, ".,;:!?)"), "`") || joined == "`" {
				j++
				if j >= len(fields) || j-i > 6 {
					break
				}
				joined += " " + fields[j]
			}
			term := strings.TrimRight(joined, ".,;:!?)")
			if j < len(fields) && len(term) > 2 && strings.HasSuffix(term, "`") {
				term = strings.Trim(term, "`")
				if p, ok := pathLike(term); ok && !strings.Contains(term, " ") {
					e.addPath(p)
				} else if u, ok := urlLike(term); ok {
					e.add(u)
				} else {
					e.add(term)
				}
				i = j
				atStart = endsSentence(joined)
				continue
			}
		}
		if pkgs[i] {
			e.add(pkgName(f))
			atStart = false
			continue
		}
		if name, n := properName(fields[i:], atStart); n > 0 {
			// "GitHub Actions", "Claude Code": one name.
			e.add(name)
			i += n - 1
			atStart = endsSentence(fields[i])
			continue
		}
		e.chunk(f, charFlags(f), true, atStart)
		atStart = endsSentence(f) || f == "-" || f == "*" || numberedItem(f)
	}
}

// plain scans text for paths, URLs and modules only.
//
// Only words holding a '/' or a '.' can be paths, URLs or modules, so the
// scan jumps from one such byte to the next (IndexByte is vectorised) and
// widens each to its word: most of a listing or a log is never looked at
// byte by byte.
func (e *entitySet) plain(s string) {
	done := 0 // s[:done] is scanned
	for !e.full() {
		k := nextPathByte(s, done)
		if k < 0 {
			return
		}
		i, j := k, k+1
		for i > done && byteClass[s[i-1]]&isSep == 0 {
			i--
		}
		for j < len(s) && byteClass[s[j]]&isSep == 0 {
			j++
		}
		done = j
		// Tool output repeats itself (listings, test runs): classify a
		// word once.
		if w := s[i:j]; !e.tried[w] {
			e.tried[w] = true
			e.chunk(w, charFlags(w), false, false)
		}
	}
}

// nextPathByte returns the index of the first '/' or '.' in s[from:], or -1.
func nextPathByte(s string, from int) int {
	rest := s[from:]
	d := strings.IndexByte(rest, '.')
	if d == 0 {
		return from
	}
	scope := rest
	if d > 0 {
		scope = rest[:d] // a slash, if any, must come before the dot
	}
	if sl := strings.IndexByte(scope, '/'); sl >= 0 {
		return from + sl
	}
	if d < 0 {
		return -1
	}
	return from + d
}

// Byte classes: isSep separates words of tool output; the others are what
// a word must hold to be worth classifying.
const (
	isSep = 1 << iota
	hasSlash
	hasDot
	hasParen
	hasUnder
	hasUpper
)

var byteClass = func() (t [256]uint8) {
	for _, c := range " \t\n\r\"'`,()[]{}<>|;" {
		t[c] |= isSep
	}
	t['/'] |= hasSlash
	t['.'] |= hasDot
	t['('] |= hasParen
	t['_'] |= hasUnder
	for c := 'A'; c <= 'Z'; c++ {
		t[c] |= hasUpper
	}
	return t
}()

// charFlags returns the classes of the bytes of s, separators aside.
func charFlags(s string) uint8 {
	var f uint8
	for i := 0; i < len(s); i++ {
		f |= byteClass[s[i]]
	}
	return f &^ isSep
}

// trimLeftBytes and trimRightBytes trim the ASCII bytes of set, and
// trimRightBytes a trailing ellipsis too.
func trimLeftBytes(s, set string) string {
	for len(s) > 0 && strings.IndexByte(set, s[0]) >= 0 {
		s = s[1:]
	}
	return s
}

func trimRightBytes(s, set string) string {
	for len(s) > 0 {
		if strings.IndexByte(set, s[len(s)-1]) >= 0 {
			s = s[:len(s)-1]
		} else if strings.HasSuffix(s, "\u2026") {
			s = s[:len(s)-len("\u2026")]
		} else {
			break
		}
	}
	return s
}

// chunk classifies one word. prose admits named things and function
// calls; atStart says the word opens a sentence.
func (e *entitySet) chunk(raw string, flags uint8, prose, atStart bool) {
	if flags == 0 || !prose && flags&(hasSlash|hasDot|hasUpper) == 0 {
		return // no path, URL, module, identifier or name can be in it
	}
	f := trimLeftBytes(raw, "([{<\"'*_")
	if prose && flags&hasParen != 0 {
		if name, ok := callLike(trimRightBytes(f, "\"'*_,;:!?.")); ok {
			e.add(name)
			return
		}
	}
	f = trimRightBytes(f, ")]}>\"'*_,;:!?.")
	if len(f) < 2 || len(f) > 400 {
		return
	}
	if flags&hasSlash != 0 {
		if u, ok := urlLike(f); ok {
			e.add(u)
			return
		}
		if m, ok := moduleLike(f); ok {
			e.add(m)
			return
		}
	}
	if p, ok := pathLike(f); ok {
		e.addPath(p)
		return
	}
	if !prose {
		return
	}
	if identLike(f) {
		e.add(f)
		return
	}
	if !atStart && properNoun(f) {
		e.add(f)
	}
}

// tool adds a tool call: the tool's name, then what its input names.
func (e *entitySet) tool(name, input string) {
	e.add(name)
	if name != "Bash" {
		e.plain(input)
		return
	}
	cmd := input
	if i := strings.Index(cmd, " \u2014 "); i >= 0 { // "ls -la — List files"
		cmd = cmd[:i]
	}
	for _, c := range commands(cmd) {
		e.add(c)
	}
	fields := strings.Fields(cmd)
	pkgs := installArgs(fields)
	for i, f := range fields {
		if pkgs[i] {
			e.add(pkgName(f))
		}
	}
	e.plain(cmd)
}

// commands returns the command of each segment of a shell command line
// (split at &&, ||, ;, | and line breaks): its first word, with the
// subcommand for tools that have them.
func commands(cmd string) []string {
	var out []string
	for _, seg := range strings.FieldsFunc(cmd, func(r rune) bool { return r == '&' || r == '|' || r == ';' || r == '\n' }) {
		words := strings.Fields(seg)
		for len(words) > 0 && (strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "-") ||
			cmdWrappers[words[0]]) {
			words = words[1:]
		}
		if len(words) == 0 {
			continue
		}
		w := strings.Trim(words[0], "()\"'`")
		if w == "" || cmdSkip[w] || strings.HasPrefix(w, "-") || strings.HasPrefix(w, "$") {
			continue
		}
		if subcommandTools[w] && len(words) > 1 {
			sub := words[1]
			if w == "python" || w == "python3" {
				if sub == "-m" && len(words) > 2 && plainCommand(words[2]) {
					w += " -m " + words[2]
				}
			} else if plainCommand(sub) {
				w += " " + sub
			}
		}
		out = append(out, w)
	}
	return out
}

func plainCommand(s string) bool {
	if s == "" || len(s) > 30 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c == '-' && i > 0 || c >= '0' && c <= '9' && i > 0) {
			return false
		}
	}
	return true
}

var (
	cmdWrappers = setOf("sudo", "time", "env", "nohup", "exec", "command", "builtin", "then", "do", "else",
		"if", "while", "until", "!", "{", "(")
	cmdSkip         = setOf("cd", "echo", "printf", "true", "false", "sleep", "export", "set", "fi", "done", "}", ")", "[", "[[", "test", "exit", "return", "local", "unset")
	subcommandTools = setOf("go", "npm", "pnpm", "yarn", "bun", "deno", "npx", "cargo", "git", "docker",
		"kubectl", "pip", "pip3", "uv", "poetry", "make", "gh", "helm", "terraform", "dotnet", "mvn",
		"gradle", "brew", "apt", "apt-get", "systemctl", "python", "python3", "rustup", "bundle", "rails",
		"mix", "composer", "podman", "nix", "just", "task", "sqlite3", "psql")
)

// installArgs marks the package arguments of install commands in fields
// ("npm install x", "pip install y", "go get z").
func installArgs(fields []string) map[int]bool {
	var marks map[int]bool
	for i := 0; i+1 < len(fields); i++ {
		a, b := fields[i], fields[i+1]
		start := -1
		switch a {
		case "npm", "pnpm", "yarn", "bun":
			if b == "install" || b == "i" || b == "add" {
				start = i + 2
			}
		case "pip", "pip3", "pipx":
			if b == "install" {
				start = i + 2
			}
		case "uv", "poetry", "cargo", "pdm", "rye":
			if b == "add" || b == "install" {
				start = i + 2
			}
			if a == "uv" && b == "pip" && i+2 < len(fields) && fields[i+2] == "install" {
				start = i + 3
			}
		case "go":
			if b == "get" || b == "install" {
				start = i + 2
			}
		case "gem", "brew":
			if b == "install" {
				start = i + 2
			}
		case "apt", "apt-get":
			if b == "install" {
				start = i + 2
			}
		case "composer":
			if b == "require" {
				start = i + 2
			}
		}
		if start < 0 {
			continue
		}
		for j, n := start, 0; j < len(fields) && n < 5; j++ {
			f := fields[j]
			if f == "&&" || f == "||" || f == ";" || f == "|" || strings.HasPrefix(f, ">") || installStops[f] {
				break
			}
			if strings.HasPrefix(f, "-") || strings.HasPrefix(f, "`") && len(f) == 1 {
				continue
			}
			if pkgName(f) == "" {
				break
			}
			if marks == nil {
				marks = map[int]bool{}
			}
			marks[j] = true
			n++
		}
	}
	return marks
}

// installStops end the package list of an install command written in
// prose ("run npm install left-pad first").
var installStops = setOf("first", "then", "and", "to", "before", "after", "with", "in", "on", "for", "it",
	"the", "a", "an", "please", "now", "again", "instead", "too", "also", "so", "but", "or", "if", "when",
	"which", "that", "this", "from", "into", "as", "once", "here", "there")

// pkgName strips versions and extras from an install argument:
// "x==1.2" → x, "@scope/pkg@^2" → @scope/pkg, "mod@latest" → mod.
func pkgName(f string) string {
	f = strings.Trim(f, "`'\",;")
	if i := strings.IndexAny(f, "=<>~![;"); i > 0 {
		f = f[:i]
	}
	if i := strings.LastIndexByte(f, '@'); i > 0 {
		f = f[:i]
	}
	f = strings.TrimSuffix(f, "/...")
	if f == "" || f == "." || strings.HasPrefix(f, "-") || len(f) > maxEntityLen {
		return ""
	}
	for i := 0; i < len(f); i++ {
		c := f[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_./@+", c) >= 0) {
			return ""
		}
	}
	return f
}

// urlLike returns the http(s) URL in f.
func urlLike(f string) (string, bool) {
	i := strings.Index(f, "://")
	if i < 0 {
		return "", false
	}
	start := i
	for start > 0 && (f[start-1] >= 'a' && f[start-1] <= 'z' || f[start-1] >= 'A' && f[start-1] <= 'Z') {
		start--
	}
	scheme := strings.ToLower(f[start:i])
	if scheme != "http" && scheme != "https" {
		return "", false
	}
	u := strings.TrimRight(f[start:], ".,;:!?)]}>'\"`\u2026")
	if len(u) <= len(scheme)+3 {
		return "", false
	}
	return u, true
}

// moduleLike returns a module path: host.tld/path (github.com/x/y,
// golang.org/x/sync), or an npm scoped package (@scope/pkg), versions
// stripped.
func moduleLike(f string) (string, bool) {
	if strings.HasPrefix(f, "@") {
		slash := strings.IndexByte(f, '/')
		if slash < 2 || slash == len(f)-1 {
			return "", false
		}
		name := pkgName(f)
		if name == "" || strings.Count(name, "/") != 1 {
			return "", false
		}
		return name, true
	}
	slash := strings.IndexByte(f, '/')
	if slash <= 0 {
		return "", false
	}
	host := f[:slash]
	dot := strings.LastIndexByte(host, '.')
	if dot <= 0 || dot == len(host)-1 {
		return "", false
	}
	tld := host[dot+1:]
	for i := 0; i < len(tld); i++ {
		if tld[i] < 'a' || tld[i] > 'z' {
			return "", false
		}
	}
	if len(tld) < 2 || knownExt[tld] {
		return "", false
	}
	for i := 0; i < len(host); i++ {
		c := host[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			return "", false
		}
	}
	m := f
	if i := strings.IndexByte(m, '@'); i > 0 {
		m = m[:i]
	}
	m = strings.TrimSuffix(strings.TrimSuffix(m, "/..."), "/")
	if !validPathChars(m) || !strings.Contains(m, "/") {
		return "", false
	}
	return m, true
}

// pathLike returns the file path in f (a trailing ":line:col" dropped).
func pathLike(f string) (string, bool) {
	// health.go:42:3 → health.go
	for {
		i := strings.LastIndexByte(f, ':')
		if i <= 0 || i == len(f)-1 || !allDigits(f[i+1:]) {
			break
		}
		f = f[:i]
	}
	f = trimRightBytes(f, ":.")
	if len(f) < 3 || !validPathChars(f) || strings.Contains(f, "//") {
		return "", false
	}
	if len(f) > 1 && strings.HasSuffix(f, "/") {
		f = strings.TrimRight(f, "/") // a directory
	}
	base := f[strings.LastIndexByte(f, '/')+1:]
	switch {
	case strings.HasPrefix(f, "/") || strings.HasPrefix(f, "~/"):
		segs := strings.Count(strings.Trim(strings.TrimPrefix(f, "~"), "/"), "/") + 1
		if segs >= 2 || hasKnownExt(base) {
			return f, true
		}
	case strings.HasPrefix(f, "./") || strings.HasPrefix(f, "../"):
		if len(base) > 0 && base != "..." {
			return f, true
		}
	case strings.Contains(f, "/"):
		if hasKnownExt(base) || knownFiles[base] {
			return f, true
		}
	default:
		if (hasKnownExt(f) || knownFiles[f]) && !abbrevs[strings.ToLower(strings.TrimSuffix(f, "."))] {
			return f, true
		}
	}
	return "", false
}

func validPathChars(f string) bool {
	for i := 0; i < len(f); i++ {
		c := f[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("/._-~@+", c) >= 0) {
			return false
		}
	}
	return true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// hasKnownExt reports name.ext with a known extension and a name that is
// not only digits (a version "1.2" is no file).
func hasKnownExt(base string) bool {
	dot := strings.LastIndexByte(base, '.')
	if dot <= 0 || dot == len(base)-1 {
		return false
	}
	digits := true
	for i := 0; i < dot; i++ {
		if c := base[i]; c != '.' && (c < '0' || c > '9') {
			digits = false
			break
		}
	}
	if digits {
		return false
	}
	ext := base[dot+1:]
	if len(ext) > 10 {
		return false
	}
	if knownExt[ext] {
		return true
	}
	var buf [10]byte
	for i := 0; i < len(ext); i++ {
		c := ext[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return knownExt[string(buf[:len(ext)])]
}

var knownExt = setOf("go", "mod", "sum", "py", "pyi", "ipynb", "js", "mjs", "cjs", "ts", "tsx", "jsx",
	"rs", "java", "kt", "kts", "rb", "php", "c", "h", "cc", "cpp", "hpp", "cxx", "cs", "swift", "m", "mm",
	"sh", "bash", "zsh", "fish", "ps1", "sql", "md", "mdx", "rst", "txt", "json", "jsonl", "yaml", "yml",
	"toml", "ini", "cfg", "conf", "env", "xml", "html", "htm", "css", "scss", "sass", "less", "vue",
	"svelte", "lock", "proto", "graphql", "gql", "tf", "tfvars", "hcl", "gradle", "properties", "csv",
	"tsv", "lua", "ex", "exs", "erl", "hs", "ml", "scala", "clj", "dart", "r", "jl", "pl", "nix", "zig",
	"asm", "mk", "cmake", "bzl", "bazel", "log", "pem", "crt", "key", "png", "jpg", "jpeg", "gif", "svg",
	"pdf", "gz", "tgz", "zip", "tar", "wasm", "db", "sqlite", "service", "timer", "plist", "dockerfile",
	"tmpl", "tpl", "j2", "njk", "ejs", "hbs", "txtar", "golden", "patch", "diff", "bak", "lua", "el", "vim")

var knownFiles = setOf("Makefile", "Dockerfile", "Containerfile", "Justfile", "Gemfile", "Rakefile",
	"Procfile", "Vagrantfile", "Jenkinsfile", "CODEOWNERS", "LICENSE", "Taskfile", "Brewfile", "Caddyfile")

// callLike returns the name of a function call written as f(), a.B() or
// a.b(x): "health()" → health.
func callLike(f string) (string, bool) {
	i := strings.IndexByte(f, '(')
	if i <= 0 || !strings.HasSuffix(f, ")") {
		return "", false
	}
	name := f[:i]
	for k := 0; k < len(name); k++ {
		c := name[k]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.') {
			return "", false
		}
	}
	if name[0] >= '0' && name[0] <= '9' || name[0] == '.' {
		return "", false
	}
	if f[i:] != "()" && !strings.ContainsAny(name, "._") && strings.ToLower(name) == name {
		return "", false // "file(s)", "it(s)"
	}
	return name, true
}

// identLike reports a CamelCase or snake_case identifier, or pkg.Ident.
func identLike(f string) bool {
	if len(f) < 3 {
		return false
	}
	if dot := strings.IndexByte(f, '.'); dot > 0 {
		// pkg.Ident
		pkg, id := f[:dot], f[dot+1:]
		if id == "" || id[0] < 'A' || id[0] > 'Z' || strings.Contains(id, ".") {
			return false
		}
		for i := 0; i < len(pkg); i++ {
			if !(pkg[i] >= 'a' && pkg[i] <= 'z' || pkg[i] >= '0' && pkg[i] <= '9' && i > 0) {
				return false
			}
		}
		return wordChars(id)
	}
	if !wordChars(f) || f[0] >= '0' && f[0] <= '9' {
		return false
	}
	if strings.Contains(f, "_") {
		inner := strings.Trim(f, "_")
		return strings.Contains(inner, "_") && len(inner) >= 4 && strings.IndexFunc(inner, func(r rune) bool {
			return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		}) >= 0
	}
	// CamelCase: a lower-case letter followed by an upper-case one, or two
	// upper-case letters followed by a lower-case one (HTTPServer).
	for i := 1; i < len(f); i++ {
		a, b := f[i-1], f[i]
		if a >= 'a' && a <= 'z' && b >= 'A' && b <= 'Z' {
			return true
		}
		if i >= 2 && f[i-2] >= 'A' && f[i-2] <= 'Z' && a >= 'A' && a <= 'Z' && b >= 'a' && b <= 'z' {
			return true
		}
	}
	return false
}

func wordChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return s != ""
}

// properName joins two or three capitalised words in a row ("GitHub
// Actions") into one name; n is how many fields it took (0: none).
func properName(fields []string, atStart bool) (string, int) {
	if atStart || len(fields) < 2 || len(fields[0]) < 2 || fields[0][0] < 'A' || fields[0][0] > 'Z' ||
		len(fields[1]) < 2 || fields[1][0] < 'A' || fields[1][0] > 'Z' {
		return "", 0
	}
	words := make([]string, 0, 3)
	for k := 0; k < len(fields) && k < 3; k++ {
		w := strings.TrimLeft(fields[k], "(\"'*_")
		clean := strings.TrimRight(w, ")\"'*_,;:!?.")
		if !capitalised(clean) || commonCapitals[clean] {
			break
		}
		words = append(words, clean)
		if clean != w { // punctuation ends the name
			break
		}
	}
	if len(words) < 2 {
		return "", 0
	}
	return strings.Join(words, " "), len(words)
}

// capitalised reports a word starting with an upper-case letter, made of
// letters and digits (Postgres, GitHub, S3).
func capitalised(w string) bool {
	if len(w) < 2 || w[0] < 'A' || w[0] > 'Z' {
		return false
	}
	for i := 1; i < len(w); i++ {
		c := w[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// properNoun reports a capitalised word (Postgres, Docker, Go) that is not
// a common sentence word.
func properNoun(f string) bool {
	if len(f) < 2 || f[0] < 'A' || f[0] > 'Z' {
		return false
	}
	for i := 1; i < len(f); i++ {
		if f[i] < 'a' || f[i] > 'z' {
			return false
		}
	}
	return !commonCapitals[f]
}

var commonCapitals = setOf("I", "The", "This", "That", "These", "Those", "It", "We", "You", "He", "She",
	"They", "A", "An", "And", "But", "Or", "So", "If", "Then", "When", "What", "Why", "How", "Which", "Who",
	"Yes", "No", "Ok", "Okay", "Note", "Let", "Also", "Now", "Here", "There", "Please", "Thanks", "Done",
	"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday", "January", "February",
	"March", "April", "May", "June", "July", "August", "September", "October", "November", "December",
	"Jan", "Feb", "Mar", "Apr", "Jun", "Jul", "Aug", "Sep", "Sept", "Oct", "Nov", "Dec", "Mon", "Tue", "Wed",
	"Thu", "Fri", "Sat", "Sun", "Error", "Warning", "True", "False", "None", "Null", "Nil", "User",
	"Assistant", "Tool", "Step", "Summary", "Result", "Results", "Update", "Updated", "Added", "Fixed",
	"Created", "Changes", "Next", "First", "Second", "Finally", "Great", "Sure", "Perfect", "Good", "Nice",
	"Noted", "Got", "Is", "Are", "Was", "Were", "Do", "Does", "Did", "Can", "Could", "Should", "Would",
	"Will", "My", "Our", "Your", "Its", "Their", "To", "In", "On", "At", "For", "With", "From", "By", "Of",
	"As", "Not", "All", "Some", "Any", "Each", "Every", "Both", "One", "Two", "Three", "Use", "See", "Run",
	"Add", "Make", "Sorry", "Hi", "Hello", "Hey", "Well", "Actually", "Instead", "Otherwise", "However",
	"Because", "Since", "After", "Before", "While", "Where", "There's", "Let's", "I'm", "I'll", "I've",
	"I'd", "It's", "That's", "Don't", "Only", "Just", "Still", "Even", "Already", "Again", "Maybe")

func endsSentence(f string) bool {
	f = trimRightBytes(f, ")\"'*`")
	return strings.HasSuffix(f, ".") || strings.HasSuffix(f, "!") || strings.HasSuffix(f, "?") ||
		strings.HasSuffix(f, ":")
}

func numberedItem(f string) bool {
	return len(f) >= 2 && (f[len(f)-1] == '.' || f[len(f)-1] == ')') && allDigits(f[:len(f)-1])
}
