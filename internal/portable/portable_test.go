package portable

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/edge"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/store"
)

func openDB(t testing.TB) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "memory.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func sample(i int) episode.Episode {
	return episode.Episode{
		ID: fmt.Sprintf("ep_%012x", i), Summary: fmt.Sprintf("summary %d with ünïcode & <html>", i), Context: "ctx\nline",
		Entities: []string{"a.go", "github.com/x/y"}, Importance: 0.25, Type: episode.TypeDecision, Scope: episode.ScopeGlobal,
		Project: "p", ProjectPath: "/p", SessionID: "s", SessionIDs: []string{"s", "t"}, ContentHash: fmt.Sprintf("h%d", i),
		Signals:   []episode.Signal{{Kind: episode.SignalAvoid, Text: "never testify", Subject: "testify", Polarity: -1, Global: true}},
		Embedding: []float32{0.1, -0.2, 0.30000001}, Embedder: "local-v1", Extractor: "local",
		OccurredAt: time.UnixMilli(1700000000123), CreatedAt: time.UnixMilli(1700000001000), UpdatedAt: time.UnixMilli(1700000002000),
		AccessCount: 3, LastAccessedAt: time.UnixMilli(1700000003000), Stability: 1.7,
	}
}

func sampleBelief(i int) belief.Belief {
	return belief.Belief{ID: fmt.Sprintf("bl_%012x", i), Statement: "User prefers table-driven tests", Subject: "user",
		Predicate: "prefers", Context: "go tests", Timeframe: belief.TimeCurrent, Alpha: 7, Beta: 2, Scope: episode.ScopeGlobal,
		Supporting: []string{"ep_000000000001"}, Contradicting: []string{}, Partial: []string{},
		Revisions: []belief.Revision{{Timestamp: time.UnixMilli(1700000000000), OldStatement: "old", OldConfidence: 0.6, Reason: "revised"}},
		ParentID:  "bl_00000000000f", Children: []string{}, Embedding: []float32{0.5, 0.5}, Embedder: "local-v1",
		Status: belief.StatusActive, EvidenceCount: 8, Stability: 2.5, PeakConfidence: 0.8,
		CreatedAt: time.UnixMilli(1700000000000), UpdatedAt: time.UnixMilli(1700000100000),
		LastReinforcedAt: time.UnixMilli(1700000200000), PromotedAt: time.UnixMilli(1700000300000)}
}

func TestRoundTripIsExact(t *testing.T) {
	ctx := context.Background()
	src := openDB(t)
	var eps []episode.Episode
	for i := 1; i <= 20; i++ {
		e := sample(i)
		if i%2 == 0 {
			e.Embedding, e.Embedder, e.LastAccessedAt, e.Signals, e.Entities = nil, "", time.Time{}, nil, nil
		}
		eps = append(eps, e)
	}
	bs := []belief.Belief{sampleBelief(1), sampleBelief(2)}
	bs[1].Revisions, bs[1].Embedding, bs[1].Embedder, bs[1].Status = nil, nil, "", belief.StatusArchived
	if err := src.Import(ctx, eps, bs); err != nil {
		t.Fatal(err)
	}
	var first bytes.Buffer
	if n, err := Export(ctx, src, &first); err != nil || n != 22 {
		t.Fatalf("Export n=%d err=%v", n, err)
	}
	dst := openDB(t)
	if res, err := Import(ctx, dst, bytes.NewReader(first.Bytes())); err != nil || res.Total() != (Counts{Added: 22}) {
		t.Fatalf("Import %+v err=%v", res, err)
	}
	var second bytes.Buffer
	Export(ctx, dst, &second)
	if first.String() != second.String() {
		t.Errorf("export after import differs:\n%s\n---\n%s", first.String(), second.String())
	}
}

func TestBadLineStoresNothing(t *testing.T) {
	ctx := context.Background()
	var good bytes.Buffer
	src := openDB(t)
	src.ImportEpisodes(ctx, []episode.Episode{sample(1), sample(2), sample(3)})
	Export(ctx, src, &good)
	lines := strings.Split(strings.TrimSuffix(good.String(), "\n"), "\n")
	for _, tt := range []struct {
		name, bad, want string
	}{
		{"not json", `{"kind":"episode",`, "line 2: not a JSON object"},
		{"unknown kind", `{"kind":"belief?"}`, `line 2: unknown kind "belief?"`},
		{"bad id", strings.Replace(lines[1], "ep_000000000002", "ep_XYZ", 1), `line 2: id "ep_XYZ"`},
		{"importance", strings.Replace(lines[1], `"importance":0.25`, `"importance":7`, 1), "line 2: episode ep_000000000002: importance 7"},
		{"unknown field", strings.Replace(lines[1], `"kind":"episode"`, `"kind":"episode","colour":"red"`, 1), `line 2: json: unknown field "colour"`},
		{"repeated id", lines[0], "line 2: id ep_000000000001 repeats line 1"},
		{"scope", strings.Replace(lines[1], `"scope":"global"`, `"scope":"team"`, 1), `scope "team"`},
		{"bad belief", `{"kind":"belief","id":"bl_000000000001","statement":"x","status":"active","timeframe":"current","scope":"global","confidence_alpha":0,"confidence_beta":1,"created_at":"2026-01-01T00:00:00Z"}`, "confidence_alpha 0"},
		{"event action", `{"kind":"event","at":"2026-01-01T00:00:00Z","memory_id":"ep_000000000002","action":"renamed"}`, `action "renamed" is not one of formed`},
		{"event id", `{"kind":"event","at":"2026-01-01T00:00:00Z","memory_id":"../x","action":"formed"}`, `memory_id "../x"`},
		{"event time", `{"kind":"event","memory_id":"ep_000000000002","action":"formed"}`, "missing at"},
		{"link id", `{"kind":"link","from":"bl_000000000001","to":"ep_000000000002","similarity":0.5,"at":"2026-01-01T00:00:00Z"}`, "want two belief ids"},
		{"link similarity", `{"kind":"link","from":"bl_000000000001","to":"bl_000000000002","similarity":7,"at":"2026-01-01T00:00:00Z"}`, "similarity 7"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dst := openDB(t)
			in := lines[0] + "\n" + tt.bad + "\n" + lines[2] + "\n"
			_, err := Import(ctx, dst, strings.NewReader(in))
			var le *LineError
			if !errors.As(err, &le) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Import err=%v, want a line error containing %q", err, tt.want)
			}
			if n, _ := dst.EpisodeCount(ctx); n != 0 {
				t.Errorf("%d episodes stored from a bad file", n)
			}
		})
	}
}

func BenchmarkImport100k(b *testing.B) {
	ctx := context.Background()
	var buf bytes.Buffer
	src := openDB(b)
	const n = 100_000
	eps := make([]episode.Episode, 0, n)
	for i := 0; i < n; i++ {
		e := sample(i)
		e.Summary = fmt.Sprintf("episode %d about service%d and file%d.go with deploy steps", i, i%97, i%1013)
		e.Embedding = make([]float32, 256)
		e.Embedding[i%256] = 1
		eps = append(eps, e)
	}
	if err := src.ImportEpisodes(ctx, eps); err != nil {
		b.Fatal(err)
	}
	Export(ctx, src, &buf)
	b.SetBytes(int64(buf.Len()))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dst := openDB(b)
		b.StartTimer()
		if _, err := Import(ctx, dst, bytes.NewReader(buf.Bytes())); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "episodes/s")
}

// Which MEMORY.md shows a memory is a fact about one machine's files: an
// export leaves it out, and an import (of an older export that has it)
// drops it, so that the next cycle writes every file the memories call for.
func TestMemoryFileStateStaysOnItsMachine(t *testing.T) {
	ctx := context.Background()
	src := openDB(t)
	e := sample(1)
	e.GraduatedAt = time.UnixMilli(1700000400000)
	b := sampleBelief(2)
	b.DemotedAt = time.UnixMilli(1700000500000)
	if err := src.Import(ctx, []episode.Episode{e}, []belief.Belief{b}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := Export(ctx, src, &out); err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"graduated_at", "promoted_at", "demoted_at"} {
		if strings.Contains(out.String(), field) {
			t.Errorf("the export holds %s:\n%s", field, out.String())
		}
	}
	// An export written before: the fields are there; import drops them.
	eb, _ := json.Marshal(episodeRecord{Kind: KindEpisode, Episode: e})
	bb, _ := json.Marshal(beliefRecord{Kind: KindBelief, Belief: b})
	for _, f := range []string{"graduated_at", "promoted_at", "demoted_at"} {
		if !strings.Contains(string(eb)+string(bb), f) {
			t.Fatalf("the old-style records lack %s", f)
		}
	}
	dst := openDB(t)
	if _, err := Import(ctx, dst, strings.NewReader(string(eb)+"\n"+string(bb)+"\n")); err != nil {
		t.Fatal(err)
	}
	got, err := dst.GetEpisode(ctx, e.ID)
	if err != nil || !got.GraduatedAt.IsZero() {
		t.Errorf("imported episode: graduated_at %v, %v", got.GraduatedAt, err)
	}
	gb, err := dst.GetBelief(ctx, b.ID)
	if err != nil || !gb.PromotedAt.IsZero() || !gb.DemotedAt.IsZero() {
		t.Errorf("imported belief: promoted_at %v demoted_at %v, %v", gb.PromotedAt, gb.DemotedAt, err)
	}
}

// TestHistoryTravels: an export carries every memory's history, the
// 'forgotten' events included, and an import restores it as it was.
func TestHistoryTravels(t *testing.T) {
	ctx := context.Background()
	src := openDB(t)
	at := time.UnixMilli(1700000000000)
	b := sampleBelief(1)
	evs := []store.Event{
		{At: at, MemoryID: b.ID, Action: store.ActionFormed, Cause: "ep_000000000001", Detail: "stated by the user",
			After: map[string]any{"statement": b.Statement, "confidence": 0.8, "evidence": float64(3)}},
		{At: at.Add(time.Hour), MemoryID: b.ID, Action: store.ActionReinforced, Cause: "ep_000000000002",
			Before: map[string]any{"confidence": 0.8}, After: map[string]any{"confidence": 0.875}},
	}
	if err := src.Import(ctx, []episode.Episode{sample(1), sample(2)}, []belief.Belief{b}, evs...); err != nil {
		t.Fatal(err)
	}
	if err := src.Forget(ctx, []string{"ep_000000000002"}, nil); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if n, err := Export(ctx, src, &out); err != nil || n != 1+1+3 {
		t.Fatalf("Export n=%d err=%v\n%s", n, err, out.String())
	}
	dst := openDB(t)
	if res, err := Import(ctx, dst, bytes.NewReader(out.Bytes())); err != nil || res.Total() != (Counts{Added: 5}) {
		t.Fatalf("Import %+v err=%v", res, err)
	}
	for _, id := range []string{b.ID, "ep_000000000002"} {
		want, _ := src.History(ctx, id)
		got, err := dst.History(ctx, id)
		if err != nil || len(got) != len(want) || len(got) == 0 {
			t.Fatalf("history of %s: %+v %v, want %+v", id, got, err, want)
		}
		for i := range got {
			g, w := got[i], want[i]
			if !g.At.Equal(w.At) || g.Action != w.Action || g.Cause != w.Cause || g.Detail != w.Detail ||
				fmt.Sprint(g.Before) != fmt.Sprint(w.Before) || fmt.Sprint(g.After) != fmt.Sprint(w.After) {
				t.Fatalf("event %d of %s: %+v, want %+v", i, id, g, w)
			}
		}
	}
	var again bytes.Buffer
	Export(ctx, dst, &again)
	if again.String() != out.String() {
		t.Errorf("export after import differs:\n%s\n---\n%s", out.String(), again.String())
	}
}

// TestLinksTravel: an export carries the links between beliefs, and an
// import restores them, both ways.
func TestLinksTravel(t *testing.T) {
	ctx := context.Background()
	src := openDB(t)
	bs := []belief.Belief{sampleBelief(1), sampleBelief(2), sampleBelief(3)}
	at := time.UnixMilli(1700000000000)
	links := []store.Link{{From: bs[0].ID, To: bs[1].ID, Similarity: 0.5, At: at}, {From: bs[0].ID, To: bs[2].ID, Similarity: 0.25, At: at}}
	if err := src.ImportAll(ctx, nil, bs, nil, links); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if n, err := Export(ctx, src, &out); err != nil || n != 3+4 {
		t.Fatalf("Export n=%d err=%v", n, err)
	}
	dst := openDB(t)
	// Each link is two records, one each way; the first makes both.
	if res, err := Import(ctx, dst, bytes.NewReader(out.Bytes())); err != nil || res.Records() != 7 ||
		res.Links != (Counts{Added: 2, Skipped: 2}) {
		t.Fatalf("Import %+v err=%v", res, err)
	}
	want, _ := src.AllLinks(ctx)
	got, _ := dst.AllLinks(ctx)
	if len(got) != 4 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("links after import: %+v, want %+v", got, want)
	}
	if probs, err := dst.LinkProblems(ctx); err != nil || len(probs) > 0 {
		t.Fatalf("graph: %v %v", probs, err)
	}
}

// TestLinkConfidenceTravels: an export carries each link's confidence and
// last reinforcement, and an import restores them; a link of a file
// written before links had them imports at full confidence, reinforced
// when it was made; an imported link over a local one keeps the greater
// confidence.
func TestLinkConfidenceTravels(t *testing.T) {
	ctx := context.Background()
	src := openDB(t)
	bs := []belief.Belief{sampleBelief(1), sampleBelief(2), sampleBelief(3)}
	at := time.UnixMilli(1700000000000)
	reinforced := at.Add(48 * time.Hour)
	links := []store.Link{
		{From: bs[0].ID, To: bs[1].ID, Similarity: 0.5, At: at, State: edge.State{Confidence: 0.7, ReinforcedConfidence: 0.85, ReinforcedAt: reinforced}},
		{From: bs[0].ID, To: bs[2].ID, Similarity: 0.45, At: at, State: edge.New(at)},
	}
	if err := src.ImportAll(ctx, nil, bs, nil, links); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := Export(ctx, src, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"confidence":0.7,"reinforced_confidence":0.85,"reinforced_at":"`) {
		t.Fatalf("export without the lifecycle:\n%s", out.String())
	}
	dst := openDB(t)
	if _, err := Import(ctx, dst, bytes.NewReader(out.Bytes())); err != nil {
		t.Fatal(err)
	}
	want, _ := src.AllLinks(ctx)
	got, _ := dst.AllLinks(ctx)
	if len(got) != 4 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("links after import: %+v, want %+v", got, want)
	}

	// An older export: no confidence, no reinforcement.
	var old bytes.Buffer
	for _, line := range strings.SplitAfter(out.String(), "\n") {
		if strings.Contains(line, `"kind":"link"`) {
			line = regexp.MustCompile(`,"confidence".*\}`).ReplaceAllString(line, "}")
		}
		old.WriteString(line)
	}
	if strings.Contains(old.String(), "reinforced_confidence") || strings.Contains(old.String(), `"reinforced_at"`) {
		t.Fatalf("not an old export:\n%s", old.String())
	}
	legacy := openDB(t)
	if _, err := Import(ctx, legacy, bytes.NewReader(old.Bytes())); err != nil {
		t.Fatal(err)
	}
	got, _ = legacy.AllLinks(ctx)
	for _, l := range got {
		if l.State != edge.New(at) {
			t.Fatalf("a legacy link imported as %+v, want %+v", l, edge.New(at))
		}
	}

	// Over a store that links them with less confidence: the greater
	// stays, and the import says it merged the link.
	weak := openDB(t)
	low := links[0]
	low.State = edge.State{Confidence: 0.3, ReinforcedConfidence: 0.3, ReinforcedAt: at}
	if err := weak.ImportAll(ctx, nil, bs, nil, []store.Link{low}); err != nil {
		t.Fatal(err)
	}
	res, err := Import(ctx, weak, bytes.NewReader(out.Bytes()))
	if err != nil || res.Links != (Counts{Added: 1, Merged: 1, Skipped: 2}) {
		t.Fatalf("Import %+v err=%v", res.Links, err)
	}
	got, _ = weak.AllLinks(ctx)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("links after import over weaker ones: %+v, want %+v", got, want)
	}
}
