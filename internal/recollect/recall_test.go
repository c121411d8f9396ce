package recollect

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/recall"
	"github.com/engram-memory/engram/internal/store"
)

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func ids(cs []recall.Candidate) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

// seedStore makes a store with episodes of two projects and global scope,
// written through the real store and recollection build.
func seedStore(t *testing.T) (*store.DB, string) {
	t.Helper()
	ctx := context.Background()
	home := t.TempDir()
	db := openStore(t, home)
	local := embed.NewLocal()
	mk := func(id, summary, scope, project string, age time.Duration, importance float64) episode.Episode {
		return episode.Episode{ID: id, Summary: summary, Context: summary, Type: episode.TypeEvent, Scope: scope,
			Project: filepath.Base(project), ProjectPath: project, ContentHash: id, Importance: importance,
			Embedding: local.EmbedText(summary), Embedder: local.Name(), Extractor: "local",
			OccurredAt: now.Add(-age), CreatedAt: now.Add(-age), UpdatedAt: now.Add(-age), Stability: 1}
	}
	eps := []episode.Episode{
		mk("ep_000000000001", "The billing service deploys to Fly with flyctl deploy from the ci workflow", "project", "/src/billing", 72*time.Hour, 0.6),
		mk("ep_000000000002", "Postgres migrations for the invoices table live in db/migrations", "project", "/src/billing", 48*time.Hour, 0.5),
		mk("ep_000000000003", "The frontend uses Vite and React Query for data fetching", "project", "/src/web", 24*time.Hour, 0.5),
		mk("ep_000000000004", "User prefers table-driven tests and never uses testify", "global", "", 96*time.Hour, 0.9),
	}
	for i := 5; i < 40; i++ {
		eps = append(eps, mk("ep_"+strings.Repeat("0", 10)+string(rune('a'+i/26))+string(rune('a'+i%26)),
			"routine refactor of handler code number "+strings.Repeat("x", i%5), "project", "/src/billing", time.Duration(i)*time.Hour, 0.1))
	}
	if err := db.ImportEpisodes(ctx, eps); err != nil {
		t.Fatal(err)
	}
	if _, err := Build(ctx, db, home, BuildOptions{}, now); err != nil {
		t.Fatal(err)
	}
	return db, home
}

func TestRecallRanksAndScopes(t *testing.T) {
	_, home := seedStore(t)
	r := recall.New(home, recall.OpenIndex(home))
	ctx := context.Background()

	res := r.Recall(ctx, recall.Query{Text: "how do we deploy billing to fly?", ProjectPath: "/src/billing", Now: now})
	if len(res.Episodes) == 0 || res.Episodes[0].ID != "ep_000000000001" {
		t.Fatalf("deploy query: %+v", ids(res.Episodes))
	}
	// Another project's memories stay out; global ones come in.
	res = r.Recall(ctx, recall.Query{Text: "vite react query data fetching", ProjectPath: "/src/billing", Now: now})
	for _, c := range res.Episodes {
		if c.ID == "ep_000000000003" {
			t.Errorf("memory of /src/web surfaced in /src/billing")
		}
	}
	res = r.Recall(ctx, recall.Query{Text: "should I use testify for these tests?", ProjectPath: "/src/web", Now: now})
	if len(res.Episodes) == 0 || res.Episodes[0].ID != "ep_000000000004" {
		t.Errorf("global preference not recalled: %v", ids(res.Episodes))
	}
	// Unrelated prompts recall nothing.
	res = r.Recall(ctx, recall.Query{Text: "translate this poem into French", ProjectPath: "/src/billing", Now: now})
	if len(res.Episodes) != 0 {
		t.Errorf("unrelated prompt recalled %v", ids(res.Episodes))
	}
	// Excluded ids (already injected) are not returned.
	res = r.Recall(ctx, recall.Query{Text: "deploy billing fly", ProjectPath: "/src/billing", Now: now,
		Exclude: map[string]bool{"ep_000000000001": true}})
	for _, c := range res.Episodes {
		if c.ID == "ep_000000000001" {
			t.Error("excluded id returned")
		}
	}
}

func TestRecallDegradesWithoutIndexOrFiles(t *testing.T) {
	_, home := seedStore(t)
	ctx := context.Background()
	// Files only.
	res := recall.New(home, nil).Recall(ctx, recall.Query{Text: "deploy billing to fly", ProjectPath: "/src/billing", Now: now})
	if len(res.Episodes) == 0 || res.Episodes[0].ID != "ep_000000000001" {
		t.Errorf("files only: %v", ids(res.Episodes))
	}
	// Index only: corrupt files are reported, not fatal.
	os.WriteFile(recall.ProjectPath(home, "/src/billing"), []byte("junk"), 0o600)
	os.WriteFile(recall.GlobalPath(home), []byte("ENGRAMRC\x01\xff"), 0o600)
	res = recall.New(home, recall.OpenIndex(home)).Recall(ctx, recall.Query{Text: "deploy billing to fly", ProjectPath: "/src/billing", Now: now})
	if len(res.Problems) != 2 || len(res.Episodes) == 0 || res.Episodes[0].ID != "ep_000000000001" {
		t.Errorf("index only: %v problems=%v", ids(res.Episodes), res.Problems)
	}
}

func TestAccessLogFolds(t *testing.T) {
	db, home := seedStore(t)
	ctx := context.Background()
	if err := recall.RecordInjected(home, "s1", []string{"ep_000000000001", "ep_000000000004"}, now); err != nil {
		t.Fatal(err)
	}
	recall.RecordInjected(home, "s1", []string{"ep_000000000001"}, now.Add(48*time.Hour))
	if inj := recall.Injected(home, "s1"); !inj["ep_000000000001"] || !inj["ep_000000000004"] || len(recall.Injected(home, "s2")) != 0 {
		t.Errorf("injected=%v", inj)
	}
	n, err := FoldAccessLog(ctx, db, home)
	if err != nil || n != 3 {
		t.Fatalf("fold n=%d err=%v", n, err)
	}
	e, _ := db.GetEpisode(ctx, "ep_000000000001")
	// Second access 48 h after the first: stability 1 × (1 + 0.1 ln 3).
	if e.AccessCount != 2 || e.Stability < 1.109 || e.Stability > 1.111 || !e.LastAccessedAt.Equal(now.Add(48*time.Hour)) {
		t.Errorf("after fold: count=%d stability=%v last=%v", e.AccessCount, e.Stability, e.LastAccessedAt)
	}
	if n, _ := FoldAccessLog(ctx, db, home); n != 0 {
		t.Errorf("second fold applied %d", n)
	}
	// A file left by a crash after its commit is not applied twice.
	recall.RecordInjected(home, "", []string{"ep_000000000004"}, now)
	leftover := recall.AccessLogPath(home) + ".123.fold"
	os.Rename(recall.AccessLogPath(home), leftover)
	db.RecordAccessesOnce(ctx, nil, "access-folded:"+filepath.Base(leftover))
	FoldAccessLog(ctx, db, home)
	if e, _ := db.GetEpisode(ctx, "ep_000000000004"); e.AccessCount != 1 {
		t.Errorf("leftover applied again: count=%d", e.AccessCount)
	}
}

func TestExpandWithSessionNeighbours(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	db := openStore(t, home)
	var eps []episode.Episode
	for i, text := range []string{"Ada: where do we host the billing app?", "Bo: we deploy it to Fly with flyctl",
		"Ada: and the database?", "Bo: Postgres on Neon"} {
		id := "ep_00000000000" + string(rune('1'+i))
		eps = append(eps, episode.Episode{ID: id, Summary: text, Context: text, Type: episode.TypeEvent, Scope: "project",
			ProjectPath: "/src/billing", SessionID: "s1", ContentHash: id, OccurredAt: now.Add(time.Duration(i) * time.Minute),
			CreatedAt: now, UpdatedAt: now, Stability: 1})
	}
	if err := db.ImportEpisodes(ctx, eps); err != nil {
		t.Fatal(err)
	}
	if _, err := Build(ctx, db, home, BuildOptions{}, now); err != nil {
		t.Fatal(err)
	}
	r := recall.New(home, recall.OpenIndex(home))
	res := r.Recall(ctx, recall.Query{Text: "flyctl", ProjectPath: "/src/billing", Now: now})
	if len(res.Episodes) != 1 || res.Episodes[0].ID != "ep_000000000002" {
		t.Fatalf("recall: %v", ids(res.Episodes))
	}
	r.Expand(ctx, &res, recall.DefaultSettings.Limits.Memories)
	e := res.Episodes[0]
	// The question just before is what the memory answers; the one after
	// moves on to something the prompt does not ask about.
	if e.Before == nil || e.Before.ID != "ep_000000000001" || e.After != nil {
		t.Fatalf("neighbours: before %+v after %+v", e.Before, e.After)
	}
	text, _ := recall.Format(res, recall.DefaultSettings.Limits, now)
	if !strings.Contains(text, "where do we host the billing app?") || strings.Contains(text, "and the database?") ||
		strings.Contains(text, "Neon") {
		t.Errorf("context:\n%s", text)
	}
	// A prompt about the database too gets the exchange after as well.
	res = r.Recall(ctx, recall.Query{Text: "flyctl database", ProjectPath: "/src/billing", Now: now})
	r.Expand(ctx, &res, recall.DefaultSettings.Limits.Memories)
	for _, c := range res.Episodes {
		if c.ID == "ep_000000000002" && (c.After == nil || c.After.ID != "ep_000000000003") {
			t.Errorf("with database in the prompt: after %+v", c.After)
		}
	}
}

// countingDB counts the searches that reach the index.
type countingDB struct {
	recall.Searcher
	searches [][]string
}

func (c *countingDB) Search(ctx context.Context, terms []string, weights []float64, window, limit int, project string) ([]recall.Hit, error) {
	c.searches = append(c.searches, terms)
	return c.Searcher.Search(ctx, terms, weights, window, limit, project)
}

// With SkipUnknown (the hook), a prompt none of whose terms is in the
// store's vocabulary does not search, nor open the store; with some known
// term, every term is searched, since the vocabulary may be older than the
// store. Without SkipUnknown (the CLI, the MCP server), every prompt
// searches.
func TestSkipUnknown(t *testing.T) {
	db, home := seedStore(t)
	c := &countingDB{Searcher: recall.OpenIndex(home)}
	r := recall.New(home, c)
	r.SkipUnknown = true
	ctx := context.Background()
	res := r.Recall(ctx, recall.Query{Text: "write a haiku about autumn leaves", ProjectPath: "/src/billing", Now: now})
	if len(c.searches) != 0 || len(res.Episodes)+len(res.Beliefs) != 0 || res.Match != "" {
		t.Errorf("unrelated prompt: searches %v, match %q, %d recalled", c.searches, res.Match, len(res.Episodes))
	}
	res = r.Recall(ctx, recall.Query{Text: "how do we deploy the billing quasar to fly?", ProjectPath: "/src/billing", Now: now})
	if len(c.searches) != 1 || !slices.Contains(c.searches[0], "quasar") || !slices.Contains(c.searches[0], "billing") {
		t.Errorf("searches %v", c.searches)
	}
	if len(res.Episodes) == 0 || res.Episodes[0].ID != "ep_000000000001" {
		t.Errorf("recall: %v", ids(res.Episodes))
	}
	// A memory stored after the files were written, all of whose words are
	// new (memory_save syncs the index at once): found by a search, which
	// SkipUnknown leaves out until the next build.
	e := episode.Episode{ID: "ep_0000000000f1", Summary: "the gateway answers on port 8443", Context: "the gateway answers on port 8443",
		Type: episode.TypeDecision, Scope: "project", ProjectPath: "/src/billing", ContentHash: "f1", OccurredAt: now, CreatedAt: now,
		UpdatedAt: now, Stability: 1}
	if err := db.ImportEpisodes(ctx, []episode.Episode{e}); err != nil {
		t.Fatal(err)
	}
	if _, err := SyncIndex(ctx, db, home, IndexOptions{}, now); err != nil {
		t.Fatal(err)
	}
	c.Searcher = recall.OpenIndex(home)
	if res := r.Recall(ctx, recall.Query{Text: "gateway port", ProjectPath: "/src/billing", Now: now}); len(res.Episodes) != 0 {
		t.Errorf("SkipUnknown searched a prompt of unknown words: %v", ids(res.Episodes))
	}
	r.SkipUnknown = false
	if res := r.Recall(ctx, recall.Query{Text: "gateway port", ProjectPath: "/src/billing", Now: now}); len(res.Episodes) != 1 {
		t.Errorf("without SkipUnknown: %v", ids(res.Episodes))
	}
	r.SkipUnknown = true
	if _, err := Build(ctx, db, home, BuildOptions{}, now); err != nil {
		t.Fatal(err)
	}
	c.Searcher = recall.OpenIndex(home)
	if res := r.Recall(ctx, recall.Query{Text: "gateway port", ProjectPath: "/src/billing", Now: now}); len(res.Episodes) != 1 {
		t.Errorf("after the next build: %v", ids(res.Episodes))
	}
	// Without the global file (and so without a vocabulary), every prompt
	// searches.
	os.Remove(recall.GlobalPath(home))
	c.searches = nil
	r.Recall(ctx, recall.Query{Text: "write a haiku about autumn leaves", ProjectPath: "/src/billing", Now: now})
	if len(c.searches) != 1 || !slices.Contains(c.searches[0], "haiku") {
		t.Errorf("without a vocabulary: searches %v", c.searches)
	}
}
