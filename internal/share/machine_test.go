package share_test

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/config"
	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/extract"
	"github.com/engram-memory/engram/internal/gitroot"
	"github.com/engram-memory/engram/internal/ingest"
	"github.com/engram-memory/engram/internal/pgtest"
	"github.com/engram-memory/engram/internal/share"
	"github.com/engram-memory/engram/internal/store"
	"github.com/engram-memory/engram/internal/worker"
)

// machine is one engram home: its own store, configuration and project
// checkouts, as on another computer.
type machine struct {
	t    testing.TB
	name string
	cfg  config.Config
	db   *store.DB
	comp worker.Components
	log  *slog.Logger
}

func newMachine(t testing.TB, name, url string, personal bool) *machine {
	t.Helper()
	base := t.TempDir()
	t.Setenv("ENGRAM_HOME", filepath.Join(base, "engram"))
	t.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(base, "claude"))
	t.Setenv("ENGRAM_SENTENCE_EMBEDDER", "false")
	cfg, err := config.Load()
	if err != nil {
		t.Fatal(err)
	}
	cfg.ShareURL, cfg.SharePersonal = url, personal
	db, err := store.Open(context.Background(), cfg.DBPath(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	log := slog.New(slog.DiscardHandler)
	comp, err := worker.NewComponents(context.Background(), cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	comp.ForceConsolidation = true
	return &machine{t: t, name: name, cfg: cfg, db: db, comp: comp, log: log}
}

// repo makes a git checkout at dir (under the machine's own directory)
// with the given origin, and returns its root.
func (m *machine) repo(dir, remote string) string {
	m.t.Helper()
	root := filepath.Join(filepath.Dir(m.cfg.Home), dir)
	if err := os.MkdirAll(root, 0o755); err != nil {
		m.t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"remote", "add", "origin", remote}} {
		if out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
			m.t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return root
}

// enable shares the project at root, as `share enable` does there.
func (m *machine) enable(root string) {
	m.t.Helper()
	remote, err := share.RemoteOf(root)
	if err != nil {
		m.t.Fatal(err)
	}
	key, err := share.ProjectKey(remote)
	if err != nil {
		m.t.Fatal(err)
	}
	if _, err := m.db.EnableShareProject(context.Background(), root, key); err != nil {
		m.t.Fatal(err)
	}
}

// say stores what the user said in a session in root ("" for none) as
// the extractor makes it an episode, the way a captured turn becomes one.
func (m *machine) say(root, text string) episode.Episode {
	m.t.Helper()
	ctx := context.Background()
	now := time.Now()
	content := "User: " + text
	d, err := extract.NewLocal().Extract(ctx, extract.Input{Project: gitroot.Name(root), ProjectPath: root, TurnAt: now, Content: content})
	if err != nil || d.Skip {
		m.t.Fatalf("extract %q: %v (skip %v)", text, err, d.Skip)
	}
	scope := d.Scope
	if root == "" {
		scope = episode.ScopeGlobal
	}
	if scope != episode.ScopeGlobal {
		scope = episode.ScopeProject
	}
	local := embed.NewLocal()
	e := episode.Episode{ID: store.NewID("ep_"), Summary: d.Summary, Context: d.Context, Entities: d.Entities, Signals: d.Signals,
		Importance: d.Importance, Type: d.Type, Scope: scope, Project: gitroot.Name(root), ProjectPath: root,
		Embedding: local.EmbedText(ingest.EmbedText(d)), Embedder: local.Name(), Extractor: "local",
		OccurredAt: now, CreatedAt: now, UpdatedAt: now, Stability: 1, ContentHash: ingest.ContentHash(scope, root, content)}
	if e.Type == "" {
		e.Type = episode.TypeFact
	}
	if err := m.db.ImportEpisodes(ctx, []episode.Episode{e}); err != nil {
		m.t.Fatal(err)
	}
	return e
}

// cycle runs one worker cycle (which syncs); it fails the test when the
// sync failed.
func (m *machine) cycle() worker.Stats {
	m.t.Helper()
	st, err := worker.Cycle(context.Background(), m.cfg, m.db, m.comp, m.log)
	if err != nil {
		m.t.Fatalf("%s: cycle: %v", m.name, err)
	}
	if st.ShareError != "" {
		m.t.Fatalf("%s: sync: %s", m.name, st.ShareError)
	}
	return st
}

func (m *machine) episodes() map[string]episode.Episode {
	m.t.Helper()
	out := map[string]episode.Episode{}
	if err := m.db.EachEpisode(context.Background(), func(e episode.Episode) error { out[e.ID] = e; return nil }); err != nil {
		m.t.Fatal(err)
	}
	return out
}

func (m *machine) beliefs() map[string]belief.Belief {
	m.t.Helper()
	out := map[string]belief.Belief{}
	if err := m.db.EachBelief(context.Background(), func(b belief.Belief) error { out[b.ID] = b; return nil }); err != nil {
		m.t.Fatal(err)
	}
	return out
}

// startServer starts PostgreSQL and creates engram's schema in a new
// database, as `share init` does.
func startServer(t testing.TB) (*pgtest.Server, string) {
	t.Helper()
	srv := pgtest.Start(t)
	url := srv.NewDB(t)
	conn, err := share.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, _, err := share.Init(context.Background(), conn); err != nil {
		t.Fatal(err)
	}
	return srv, url
}

// serverText returns every text the server's tables hold, one string.
func serverText(t testing.TB, url string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var b strings.Builder
	for _, q := range []string{
		"SELECT coalesce(string_agg(id || ' ' || space || ' ' || coalesce(body::text, ''), E'\\n'), '') FROM engram_items",
		"SELECT coalesce(string_agg(belief_id || ' ' || episode_id, E'\\n'), '') FROM engram_evidence",
	} {
		var s string
		if err := conn.QueryRow(ctx, q).Scan(&s); err != nil {
			t.Fatal(err)
		}
		b.WriteString(s + "\n")
	}
	return b.String()
}
