package setup

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// ImportLine is the CLAUDE.md line that makes Claude Code load engram's
// MEMORY.md: home-relative (@~/…) when the data directory is under the
// user's home, as the client resolves "~" itself, else absolute. The
// default data directory gives "@~/.claude-memory/MEMORY.md".
func ImportLine(engramHome, userHome string) string {
	p := filepath.Join(engramHome, "MEMORY.md")
	if userHome != "" {
		if rel, err := filepath.Rel(userHome, p); err == nil && filepath.IsLocal(rel) {
			return "@~/" + filepath.ToSlash(rel)
		}
	}
	return "@" + filepath.ToSlash(p)
}

// hasLine reports whether doc holds line as a line of its own (trailing
// white space and a CR ignored).
func hasLine(doc []byte, line string) bool {
	for l := range strings.SplitSeq(string(doc), "\n") {
		if strings.TrimRight(l, " \t\r") == line {
			return true
		}
	}
	return false
}

// addImportBytes appends line at the end of doc, after a newline if doc
// does not end with one. Deterministic: uninstall re-runs it over a backup.
func addImportBytes(doc []byte, line string) []byte {
	nl := "\n"
	if bytes.Contains(doc, []byte("\r\n")) {
		nl = "\r\n"
	}
	out := append([]byte(nil), doc...)
	if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
		out = append(out, nl...)
	}
	return append(out, line+nl...)
}

// removeImportBytes cuts the last occurrence of line (setup appends at the
// end) with its line break: the one after it, or, on a last line without
// one, the one before it. When the line opened the file or followed a
// blank line, and a blank line follows it (text added below it later, set
// off by a blank line), that blank line goes too: the file neither starts
// with a blank line nor gains two in a row.
func removeImportBytes(doc []byte, line string) []byte {
	s := string(doc)
	end := len(s)
	for end > 0 {
		start := strings.LastIndexByte(s[:end], '\n') + 1
		if start == end && end == len(s) { // the empty piece after a final newline
			end--
			continue
		}
		if strings.TrimRight(s[start:end], " \t\r") == line {
			if end < len(s) {
				rest := s[end+1:]
				if start == 0 || blankLine(s[strings.LastIndexByte(s[:start-1], '\n')+1:start]) {
					if nl := strings.IndexByte(rest, '\n'); nl >= 0 && blankLine(rest[:nl+1]) {
						rest = rest[nl+1:]
					}
				}
				return []byte(s[:start] + rest)
			}
			if start > 0 {
				cut := start - 1
				if cut > 0 && s[cut-1] == '\r' {
					cut--
				}
				return []byte(s[:cut])
			}
			return nil
		}
		end = start - 1
	}
	return doc
}

// blankLine reports whether l (with or without its line break) holds only
// blanks.
func blankLine(l string) bool { return strings.TrimSpace(l) == "" }

func checkImportLine(line string) error {
	if line == "" || strings.ContainsAny(line, "\r\n") || strings.TrimSpace(line) != line {
		return fmt.Errorf("import line %q: want one line without surrounding blanks", line)
	}
	return nil
}

// AddImport appends line (see ImportLine) to a CLAUDE.md once: nothing is
// done when the file already holds it as a line of its own. A missing file
// is created 0600; an existing one is backed up first and keeps its mode.
func AddImport(claudeMDPath, line string) (Change, error) {
	if err := checkImportLine(line); err != nil {
		return Change{Path: claudeMDPath}, err
	}
	f, err := openEditable(claudeMDPath)
	if err != nil {
		return Change{Path: claudeMDPath}, err
	}
	if hasLine(f.data, line) {
		return Change{Path: claudeMDPath}, nil
	}
	return f.commit(addImportBytes(f.data, line), []string{"added the line " + line}, true)
}

// RemoveImport takes line out of a CLAUDE.md. When the file is exactly what
// AddImport made of a backup (or of no file), that original comes back byte
// for byte; otherwise the last occurrence of the line is cut with the line
// break that came with it, after a backup.
func RemoveImport(claudeMDPath, line string) (Change, error) {
	if err := checkImportLine(line); err != nil {
		return Change{Path: claudeMDPath}, err
	}
	f, err := openEditable(claudeMDPath)
	if err != nil || !f.exists || !hasLine(f.data, line) {
		return Change{Path: claudeMDPath}, err
	}
	reproduces := func(orig []byte) bool {
		return !hasLine(orig, line) && bytes.Equal(addImportBytes(orig, line), f.data)
	}
	if ch, ok, err := f.restoreOriginal(reproduces); ok || err != nil {
		return ch, err
	}
	out := removeImportBytes(f.data, line)
	if bytes.Equal(out, f.data) {
		return Change{Path: claudeMDPath}, errors.New("internal: import line found but not removed")
	}
	return f.commit(out, []string{"removed the line " + line}, false)
}
