package setup

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
)

// ErrEnvFileMode is wrapped by LoadEnvFile's error for an env file other
// users can read or write.
var ErrEnvFileMode = errors.New("is accessible to other users")

// EnvFileResult says what LoadEnvFile did with each name in the file.
type EnvFileResult struct {
	Set     []string // set from the file
	Kept    []string // already set in the environment: left as they were
	Ignored []string // not a name engram reads: left alone
}

// envFileMax bounds the file read: it holds a handful of lines.
const envFileMax = 1 << 20

// LoadEnvFile reads ENGRAM_HOME/env, the settings of the worker, and sets
// the variables it names that are not set already (a variable set by the
// caller, systemd's Environment= or a shell always wins). launchd and cron
// cannot read such a file, so the worker calls this at start; under systemd
// EnvironmentFile= has usually set them already.
//
// Format, a subset of what both sh and systemd accept: KEY=value lines;
// blank lines and lines starting with # or ; are ignored; an optional
// "export " prefix; a value may be in double quotes (\" \\ \n \t \$ \`
// escapes) or single quotes (literal), or bare (a " #" starts a comment,
// surrounding blanks are trimmed). Only ENGRAM_*, OPENAI_API_KEY and
// CLAUDE_CONFIG_DIR are read; other names are reported in Ignored.
//
// A missing file is not an error. The file may hold an API key: one that
// group or others can access (mode & 0077) is refused, and errors never
// quote a value.
func LoadEnvFile(path string) (EnvFileResult, error) {
	return loadEnvFile(path, os.LookupEnv, os.Setenv)
}

func loadEnvFile(path string, lookup func(string) (string, bool), setenv func(string, string) error) (EnvFileResult, error) {
	var res EnvFileResult
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return res, nil
	}
	if err != nil {
		return res, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return res, err
	}
	if !fi.Mode().IsRegular() {
		return res, fmt.Errorf("%s: not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return res, fmt.Errorf("%s %w (mode %04o) and may hold an API key: run chmod 600 %s", path, ErrEnvFileMode, perm, path)
	}
	data, err := io.ReadAll(io.LimitReader(f, envFileMax+1))
	if err != nil {
		return res, err
	}
	if len(data) > envFileMax {
		return res, fmt.Errorf("%s: larger than %d bytes", path, envFileMax)
	}
	kvs, err := parseEnv(string(data))
	if err != nil {
		return res, fmt.Errorf("%s: %w", path, err)
	}
	last := map[string]string{}
	var order []string
	for _, kv := range kvs {
		if _, seen := last[kv[0]]; !seen {
			order = append(order, kv[0])
		}
		last[kv[0]] = kv[1] // the last assignment wins, as in sh and systemd
	}
	for _, k := range order {
		switch {
		case !envAllowed(k):
			res.Ignored = append(res.Ignored, k)
		case isSet(lookup, k):
			res.Kept = append(res.Kept, k)
		default:
			if err := setenv(k, last[k]); err != nil {
				return res, fmt.Errorf("%s: setting %s: %w", path, k, err)
			}
			res.Set = append(res.Set, k)
		}
	}
	return res, nil
}

func isSet(lookup func(string) (string, bool), k string) bool {
	_, ok := lookup(k)
	return ok
}

func envAllowed(k string) bool {
	return strings.HasPrefix(k, "ENGRAM_") || k == "OPENAI_API_KEY" || k == "CLAUDE_CONFIG_DIR"
}

// parseEnv returns the file's assignments in order. Errors name the line,
// never its value.
func parseEnv(data string) ([][2]string, error) {
	var out [][2]string
	for n, line := range strings.Split(data, "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "export"); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
			line = strings.TrimSpace(rest)
		}
		k, raw, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || !isEnvName(k) {
			return nil, fmt.Errorf("line %d: want NAME=value", n+1)
		}
		v, err := envValue(raw)
		if err != nil {
			return nil, fmt.Errorf("line %d (%s): %w", n+1, k, err)
		}
		out = append(out, [2]string{k, v})
	}
	return out, nil
}

func envValue(raw string) (string, error) {
	s := strings.TrimLeft(raw, " \t")
	var v strings.Builder
	var rest string
	switch {
	case strings.HasPrefix(s, `"`):
		i := 1
		for ; i < len(s) && s[i] != '"'; i++ {
			if s[i] == '\\' && i+1 < len(s) {
				i++
				switch c := s[i]; c {
				case 'n':
					v.WriteByte('\n')
				case 't':
					v.WriteByte('\t')
				case '"', '\\', '$', '`':
					v.WriteByte(c)
				default: // not an escape: keep the backslash
					v.WriteByte('\\')
					v.WriteByte(c)
				}
				continue
			}
			v.WriteByte(s[i])
		}
		if i >= len(s) {
			return "", errors.New("unterminated double quote")
		}
		rest = s[i+1:]
	case strings.HasPrefix(s, "'"):
		j := strings.IndexByte(s[1:], '\'')
		if j < 0 {
			return "", errors.New("unterminated single quote")
		}
		v.WriteString(s[1 : 1+j])
		rest = s[j+2:]
	default:
		for i := 0; i < len(raw); i++ {
			if raw[i] == '#' && i > 0 && (raw[i-1] == ' ' || raw[i-1] == '\t') {
				raw = raw[:i]
				break
			}
		}
		return strings.TrimSpace(raw), nil
	}
	if rest = strings.TrimSpace(rest); rest != "" && rest[0] != '#' {
		return "", errors.New("text after the closing quote")
	}
	return v.String(), nil
}

// envTemplate is the env file setup creates when there is none: every line
// a comment, so it changes nothing until the user edits it.
const envTemplate = `# engram worker settings: read by engram-worker at start and by its systemd
# unit (EnvironmentFile=). NAME=value lines; only ENGRAM_*, OPENAI_API_KEY and
# CLAUDE_CONFIG_DIR are read, and a variable already set in the environment
# wins. Keep this file mode 0600: it may hold an API key.
#
# An OpenAI-compatible endpoint for extraction (without one, engram stays
# offline), e.g. Ollama:
#ENGRAM_LLM_BASE_URL=http://127.0.0.1:11434/v1
#ENGRAM_LLM_MODEL=qwen2.5:7b
#ENGRAM_LLM_API_KEY=
`
