package e2e

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/anthropicstub"
)

// correction is one of the three corrections a user made in use: the
// value stated in one session, corrected in a later one, then asked about
// in a new session.
type correction struct {
	name       string
	project    string
	files      map[string]string
	look       string // the first session's first prompt (a tool call answers it)
	lookTool   func(dir string) anthropicstub.Reply
	lookReply  string
	state      string // the statement of the old value, with a task
	stateTool  func(dir string) anthropicstub.Reply
	stateReply string
	change     string // the correction, with a task
	changeTool func(dir string) anthropicstub.Reply
	changeDone string
	question   string   // the later session's prompt
	old, new   []string // spellings of the old and the new value
}

var corrections = []correction{
	{
		name: "deploy_fly_render", project: "billing-api",
		files: map[string]string{
			"fly.toml":  "app = \"billing-api\"\n[http_service]\n  internal_port = 8000\n",
			"app.py":    "from fastapi import FastAPI\n\napp = FastAPI()\n\n@app.get(\"/healthz\")\ndef healthz():\n    return {\"ok\": True}\n",
			"README.md": "# billing-api\n",
		},
		look:      "what does app.py serve? keep it short",
		lookTool:  func(dir string) anthropicstub.Reply { return read(filepath.Join(dir, "app.py")) },
		lookReply: "A FastAPI app with one route, /healthz.",
		state:     "add a /version route to app.py. This service deploys to Fly.io, the config is in fly.toml",
		stateTool: func(dir string) anthropicstub.Reply {
			return anthropicstub.Write(filepath.Join(dir, "version.py"), "VERSION = \"1.4.0\"\n")
		},
		stateReply: "Added version.py; app.py can serve it at /version.",
		change:     "we moved off Fly.io, this service deploys to Render now. delete fly.toml please",
		changeTool: func(dir string) anthropicstub.Reply {
			return anthropicstub.Bash("git rm -q fly.toml && git -c user.name=dev -c user.email=dev@example.invalid commit -q -m 'drop fly.toml'", "Remove fly.toml")
		},
		changeDone: "Removed fly.toml.",
		question:   "where does this get deployed?",
		old:        []string{"fly.io"},
		new:        []string{"render"},
	},
	{
		name: "tests_jest_vitest", project: "webapp-ts",
		files: map[string]string{
			"package.json": `{"name": "webapp", "private": true, "scripts": {"test": "jest"}}` + "\n",
			"src/date.ts":  "export function formatDate(d: Date): string {\n  return d.toISOString().slice(0, 10);\n}\n",
		},
		look:      "check package.json, how are the scripts set up?",
		lookTool:  func(dir string) anthropicstub.Reply { return read(filepath.Join(dir, "package.json")) },
		lookReply: "There is one script, test.",
		state:     "add a unit test for formatDate in src/date.ts, our tests use Jest; run them with pnpm test",
		stateTool: func(dir string) anthropicstub.Reply {
			return anthropicstub.Write(filepath.Join(dir, "src", "date.test.ts"),
				"import { formatDate } from './date';\n\ntest('formatDate', () => {\n  expect(formatDate(new Date('2024-03-05T10:00:00Z'))).toBe('2024-03-05');\n});\n")
		},
		stateReply: "Added src/date.test.ts.",
		change:     "heads up: we switched from Jest to Vitest last week, so use vitest from now on. update the test script in package.json",
		changeTool: func(dir string) anthropicstub.Reply {
			return anthropicstub.Write(filepath.Join(dir, "package.json"), `{"name": "webapp", "private": true, "scripts": {"test": "vitest run"}}`+"\n")
		},
		changeDone: "The test script runs vitest run now.",
		question:   "how do I run the tests?",
		old:        []string{"jest"},
		new:        []string{"vitest"},
	},
	{
		name: "db_postgres_16_17", project: "ledger-go",
		files: map[string]string{
			"go.mod":             "module example.com/ledger\n\ngo 1.22\n",
			"docker-compose.yml": "services:\n  db:\n    image: postgres:16\n",
			"store/users.sql":    "SELECT id, email FROM users;\n",
		},
		look:      "which image does docker-compose.yml use for the database?",
		lookTool:  func(dir string) anthropicstub.Reply { return read(filepath.Join(dir, "docker-compose.yml")) },
		lookReply: "The db service runs postgres:16.",
		state:     "write the upsert for the users table in store/users.sql. We're on Postgres 16, so feel free to use MERGE",
		stateTool: func(dir string) anthropicstub.Reply {
			return anthropicstub.Write(filepath.Join(dir, "store", "users.sql"),
				"MERGE INTO users u USING (VALUES ($1::bigint, $2::text)) AS v(id, email) ON u.id = v.id\nWHEN MATCHED THEN UPDATE SET email = v.email\nWHEN NOT MATCHED THEN INSERT (id, email) VALUES (v.id, v.email);\n")
		},
		stateReply: "store/users.sql holds a MERGE upsert.",
		change:     "we upgraded the database to Postgres 17 yesterday, bump the image in docker-compose.yml",
		changeTool: func(dir string) anthropicstub.Reply {
			return anthropicstub.Write(filepath.Join(dir, "docker-compose.yml"), "services:\n  db:\n    image: postgres:17\n")
		},
		changeDone: "docker-compose.yml runs postgres:17 now.",
		question:   "which Postgres features can I rely on here?",
		old:        []string{"postgres 16", "postgres:16", "postgresql 16"},
		new:        []string{"postgres 17", "postgres:17", "postgresql 17"},
	},
}

func read(path string) anthropicstub.Reply {
	return anthropicstub.Call("Read", map[string]string{"file_path": path})
}

// TestCorrectionsWithRealClient: the three corrections of the walkthrough,
// each in a project of its own with the real client. A first session
// states the value inside a task after a tool call; a worker cycle; a
// later session corrects it inside a task; a worker cycle; then a new
// session asks about it. The request that carries the question holds the
// new value (a MEMORY.md line the client loads or engram's recall), and
// nothing in it presents the old value as current: every MEMORY.md belief
// line and every recalled memory that names the old value either names
// the new one too (it reports the change) or says it is no longer true.
func TestCorrectionsWithRealClient(t *testing.T) {
	claudeBin(t)
	start := time.Now()
	model := &everydayModel{turns: map[string][]anthropicstub.Reply{}}
	e, bins := statedEnv(t, model.respond)
	defer func() { t.Logf("TestCorrectionsWithRealClient took %v", time.Since(start).Round(time.Second)) }()

	text := anthropicstub.Text
	dirs := map[string]string{}
	turns := map[string][]anthropicstub.Reply{}
	for _, c := range corrections {
		dir := e.NewProject(c.project)
		writeTree(t, dir, c.files)
		gitCommitAll(t, e, dir, c.project+" skeleton")
		dirs[c.name] = dir
		turns[c.look] = []anthropicstub.Reply{c.lookTool(dir), text(c.lookReply)}
		turns[c.state] = []anthropicstub.Reply{c.stateTool(dir), text(c.stateReply)}
		turns[c.change] = []anthropicstub.Reply{c.changeTool(dir), text(c.changeDone)}
		turns[c.question] = []anthropicstub.Reply{text("Let me check.")}
	}
	model.setTurns(turns)
	t.Logf("engram-worker run (empty store): %s", strings.TrimSpace(e.Worker(bins.Worker, "run")))

	for _, c := range corrections {
		model.session(t, e, dirs[c.name], c.look, c.state)
	}
	t.Logf("engram-worker run (after the statements):\n%s", strings.TrimSpace(e.Worker(bins.Worker, "run")))
	for _, c := range corrections {
		model.session(t, e, dirs[c.name], c.change)
	}
	t.Logf("engram-worker run (after the corrections):\n%s", strings.TrimSpace(e.Worker(bins.Worker, "run")))
	if p := model.Problems(); len(p) > 0 {
		t.Fatalf("stand-in model problems: %q\nrequests:\n%s", p, e.Stub.Summary())
	}
	t.Logf("beliefs: %s", describeBeliefs(readBeliefs(t, e)))
	t.Logf("episodes:\n%s", describeEpisodes(readEpisodes(t, e)))

	for _, c := range corrections {
		t.Run(c.name, func(t *testing.T) {
			_, reqs := e.runSession(dirs[c.name], c.question)
			turn := promptRequest(reqs, c.question)
			if turn == nil {
				t.Fatalf("no request carries %q:\n%s", c.question, e.Stub.Summary())
			}
			units := correctionUnits(*turn)
			var b strings.Builder
			for _, u := range units {
				fmt.Fprintf(&b, "\n  [%s] %s", u.where, u.text)
			}
			t.Logf("what engram put into the request for %q:%s", c.question, b.String())
			reaches := false
			for _, u := range units {
				if namesAny(u.text, c.new) && !u.former {
					reaches = true
				}
				if namesAny(u.text, c.old) && !namesAny(u.text, c.new) && !u.former {
					t.Errorf("the request for %q presents the old value as current in %s: %s", c.question, u.where, u.text)
				}
			}
			if !reaches {
				t.Errorf("the request for %q holds the new value %q nowhere engram put it:%s", c.question, c.new, b.String())
			}
		})
	}
}

// correctionUnit is one thing engram put into a request: a MEMORY.md line
// of its own, a recalled belief or a recalled exchange.
type correctionUnit struct {
	where  string
	text   string
	former bool // marked as no longer true, superseded or replaced
}

var recallBite = regexp.MustCompile(`\[(Memory|Belief)[^\]]*\]`)

// correctionUnits cuts what engram put into r into units: each line of a
// MEMORY.md the client loaded from engram's directory or the project's
// auto-memory, and each bite of engram's recall.
func correctionUnits(r anthropicstub.Request) []correctionUnit {
	var out []correctionUnit
	former := func(s string) bool {
		l := strings.ToLower(s)
		return strings.Contains(l, "no longer true") || strings.Contains(l, "superseded") || strings.Contains(l, "replaced by")
	}
	for path, f := range loadedFiles(r) {
		if !strings.HasSuffix(path, "MEMORY.md") {
			continue
		}
		for _, l := range strings.Split(f.Body, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "- ") {
				out = append(out, correctionUnit{where: path, text: strings.TrimSpace(l), former: former(l)})
			}
		}
	}
	for _, sp := range recallSpans(r) {
		locs := recallBite.FindAllStringIndex(sp.Text, -1)
		for i, loc := range locs {
			end := len(sp.Text)
			if i+1 < len(locs) {
				end = locs[i+1][0]
			}
			bite := strings.TrimSpace(strings.TrimSuffix(sp.Text[loc[0]:end], recallClose))
			out = append(out, correctionUnit{where: "recall in " + sp.Where, text: bite, former: former(sp.Text[loc[0]:loc[1]])})
		}
	}
	return out
}

// namesAny reports whether text names one of the spellings as a whole
// phrase, case aside ("postgres 17" also as "postgres-17" or "postgres17").
func namesAny(text string, spellings []string) bool {
	l := strings.ToLower(text)
	for _, s := range spellings {
		for _, v := range []string{s, strings.ReplaceAll(s, " ", "-"), strings.ReplaceAll(s, " ", "")} {
			re := regexp.MustCompile(`(^|[^a-z0-9.])` + regexp.QuoteMeta(v) + `($|[^a-z0-9])`)
			if re.MatchString(l) {
				return true
			}
		}
	}
	return false
}
