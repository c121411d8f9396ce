package store

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/episode"
)

// recallStore holds, in insertion order: two interleaved sessions of
// project /p, one episode of project /q and one global one.
func recallStore(t *testing.T) *DB {
	t.Helper()
	db := mustOpen(t, filepath.Join(t.TempDir(), "memory.db"))
	mk := func(i int, session, scope, project, summary string, at int64) episode.Episode {
		return episode.Episode{ID: fmt.Sprintf("ep_%012d", i), Summary: summary, Context: "context of " + summary, Type: episode.TypeEvent,
			Scope: scope, ProjectPath: project, SessionID: session, ContentHash: fmt.Sprint(i), Embedder: "test",
			Embedding: []float32{1, 0}, OccurredAt: time.UnixMilli(at), CreatedAt: time.UnixMilli(at), UpdatedAt: time.UnixMilli(at),
			Importance: 0.5, Stability: 1}
	}
	eps := []episode.Episode{
		mk(1, "s1", "project", "/p", "flyctl deploy of the billing app", 1000),
		mk(2, "s2", "project", "/p", "chrony leapsecond smearing settled", 1100),
		mk(3, "s1", "project", "/p", "billing deploy failed on fly", 2000),
		mk(4, "s1", "project", "/p", "rolled back the billing deploy", 3000),
		mk(5, "s3", "project", "/q", "billing deploy of the other project", 3500),
		mk(6, "s2", "global", "", "user prefers chrony over ntpd", 4000),
		mk(7, "s1", "project", "/p", "billing deploy fixed by pinning flyctl", 5000),
	}
	if err := db.ImportEpisodes(context.Background(), eps); err != nil {
		t.Fatal(err)
	}
	return db
}

func TestSearchTerms(t *testing.T) {
	ctx := context.Background()
	db := recallStore(t)
	seqs := func(hits []TermHit) []int64 {
		var out []int64
		for _, h := range hits {
			out = append(out, h.Seq)
		}
		return out
	}
	// Terms are stemmed as the index is ("deploying" finds "deploy");
	// rows are ranked by the weights of the terms they match, then newest
	// first, and the masks say which terms.
	hits, err := db.SearchTerms(ctx, []string{"deploying", "flyctl", "chrony", "absent"}, []float64{1, 2, 1.5, 9}, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if got := seqs(hits); !slices.Equal(got, []int64{7, 1, 6, 2, 5, 4, 3}) {
		t.Errorf("ranking %v", got)
	}
	if hits[0].Score != 3 || hits[0].Mask != 0b011 || hits[2].Mask != 0b100 || hits[4].Mask != 0b001 {
		t.Errorf("scores and masks %+v", hits)
	}
	if hits, _ := db.SearchTerms(ctx, []string{"deploying", "flyctl", "chrony"}, nil, 0, 2); !slices.Equal(seqs(hits), []int64{7, 1}) {
		t.Errorf("limit 2, equal weights: %v", seqs(hits))
	}
	// A window keeps each term's newest matches only: deploy's 5 and 7.
	hits, err = db.SearchTerms(ctx, []string{"deploy"}, nil, 2, 10)
	if err != nil || !slices.Equal(seqs(hits), []int64{7, 5}) {
		t.Errorf("window 2: %v %v", seqs(hits), err)
	}
	// FTS5 syntax in a term is a phrase, never an operator.
	if _, err := db.SearchTerms(ctx, []string{`billing" OR "x`, "NEAR(a b)", "*"}, nil, 10, 10); err != nil {
		t.Errorf("quoted terms: %v", err)
	}
	if hits, err := db.SearchTerms(ctx, nil, nil, 10, 10); err != nil || hits != nil {
		t.Errorf("no terms: %v %v", hits, err)
	}
}

func TestEpisodesBySeq(t *testing.T) {
	ctx := context.Background()
	db := recallStore(t)
	got, err := db.EpisodesBySeq(ctx, []int64{7, 5, 6, 1, 99}, "/p")
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	for _, e := range got {
		seqs = append(seqs, e.Seq)
	}
	// In the order asked, without the other project's episode (5) or an
	// unknown rowid; global episodes are visible.
	if !slices.Equal(seqs, []int64{7, 6, 1}) {
		t.Fatalf("seqs %v", seqs)
	}
	e := got[0]
	if e.ID != "ep_000000000007" || e.Summary != "billing deploy fixed by pinning flyctl" || e.Context == "" ||
		e.SessionID != "s1" || e.OccurredAt.UnixMilli() != 5000 || len(e.Embedding) != 2 || e.Importance != 0.5 {
		t.Errorf("episode %+v", e)
	}
	all, err := db.EpisodesBySeq(ctx, []int64{5, 1}, "")
	if err != nil || len(all) != 2 {
		t.Errorf("every project: %d, %v", len(all), err)
	}
}

func TestSessionNeighbours(t *testing.T) {
	ctx := context.Background()
	db := recallStore(t)
	nb, err := db.SessionNeighbours(ctx, []string{"ep_000000000003", "ep_000000000001", "ep_000000000007", "ep_000000000002"}, 8)
	if err != nil {
		t.Fatal(err)
	}
	id := func(e *RecallEpisode) string {
		if e == nil {
			return "-"
		}
		return e.ID
	}
	for hit, want := range map[string][2]string{
		"ep_000000000003": {"ep_000000000001", "ep_000000000004"}, // skips s2's episode in between
		"ep_000000000001": {"-", "ep_000000000003"},
		"ep_000000000007": {"ep_000000000004", "-"}, // skips /q's and s2's
		"ep_000000000002": {"-", "ep_000000000006"},
	} {
		n := nb[hit]
		if got := [2]string{id(n.Before), id(n.After)}; got != want {
			t.Errorf("%s: before/after %v, want %v", hit, got, want)
		}
	}
	if n := nb["ep_000000000003"]; n.After == nil || n.After.Summary != "rolled back the billing deploy" {
		t.Errorf("neighbour text: %+v", n.After)
	}
	// Beyond the window, no neighbour.
	nb, err = db.SessionNeighbours(ctx, []string{"ep_000000000007"}, 2)
	if err != nil || nb["ep_000000000007"].Before != nil {
		t.Errorf("window 2: %+v %v", nb["ep_000000000007"], err)
	}
}

func TestEachTerm(t *testing.T) {
	ctx := context.Background()
	db := recallStore(t)
	docs := map[string]int{}
	total, err := db.EachTerm(ctx, func(term string, n int) error {
		docs[term] = n
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Every context starts "context of"; "billing" (stem "bill") and
	// "deploy" (stem "deploi") are in five episodes, "chrony" in two.
	if total != 7 || docs["context"] != 7 || docs["of"] != 7 || docs["bill"] != 5 || docs["deploi"] != 5 || docs["chroni"] != 2 ||
		docs["billing"] != 0 {
		t.Errorf("total %d, terms %v", total, docs)
	}
}
