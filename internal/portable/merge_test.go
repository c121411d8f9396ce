package portable

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/store"
)

func exportOf(t *testing.T, db *store.DB) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := Export(context.Background(), db, &b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func importInto(t *testing.T, db *store.DB, file []byte) Result {
	t.Helper()
	res, err := Import(context.Background(), db, bytes.NewReader(file))
	if err != nil {
		t.Fatalf("Import: %v", err)
	}
	return res
}

// TestImportOverlapping: a file that overlaps the store adds what is new,
// skips what the store has (by id, or the same content under another id),
// and says so; the same file again changes nothing.
func TestImportOverlapping(t *testing.T) {
	ctx := context.Background()
	src := openDB(t)
	if err := src.Import(ctx, []episode.Episode{sample(1), sample(2), sample(3)}, []belief.Belief{sampleBelief(1), sampleBelief(2)}); err != nil {
		t.Fatal(err)
	}
	file := exportOf(t, src)
	sameContent := sample(2)
	sameContent.ID = "ep_00000000abcd"
	dst := openDB(t)
	if err := dst.Import(ctx, []episode.Episode{sample(3), sameContent}, []belief.Belief{sampleBelief(2)}); err != nil {
		t.Fatal(err)
	}
	res := importInto(t, dst, file)
	if res.Episodes != (Counts{Added: 1, Skipped: 2}) || res.Beliefs != (Counts{Added: 1, Skipped: 1}) {
		t.Fatalf("first import: %+v", res)
	}
	if got, want := res.Detail(), "episodes 1 added, 2 skipped; beliefs 1 added, 1 skipped"; got != want {
		t.Errorf("Detail() = %q, want %q", got, want)
	}
	before := exportOf(t, dst)
	res = importInto(t, dst, file)
	if res.Changed() || res.Total() != (Counts{Skipped: 5}) {
		t.Fatalf("the same file again: %+v", res)
	}
	if after := exportOf(t, dst); !bytes.Equal(after, before) {
		t.Errorf("the same file again changed the store:\n%s\n---\n%s", before, after)
	}
	if _, err := dst.GetEpisode(ctx, sample(2).ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an episode whose content the store holds under another id was stored twice: %v", err)
	}
}

// TestImportMergesByTheSharingRules: a record the store holds in another
// version is merged as a pull would merge it.
func TestImportMergesByTheSharingRules(t *testing.T) {
	ctx := context.Background()
	at := func(m int) time.Time { return time.UnixMilli(1700000000000 + int64(m)*60000).UTC() }
	// The store: an episode, a later-edited one, a live one the file
	// supersedes, and a belief with evidence e1.
	local := []episode.Episode{sample(1), sample(2), sample(3)}
	local[1].Summary, local[1].UpdatedAt = "edited here, later", at(500)
	lb := sampleBelief(1)
	lb.Supporting, lb.Alpha, lb.Beta, lb.EvidenceCount = []string{"ep_000000000001"}, 2, 1, 1
	lb.Status, lb.UpdatedAt = belief.StatusActive, at(10)
	pinnedHere := sampleBelief(2)
	dst := openDB(t)
	if err := dst.Import(ctx, local, []belief.Belief{lb, pinnedHere}); err != nil {
		t.Fatal(err)
	}
	if err := dst.ImportAll(ctx, nil, nil, nil, nil, store.LevelRecord{BeliefID: pinnedHere.ID, Level: store.LevelPinned, Since: at(300)}); err != nil {
		t.Fatal(err)
	}
	// The file: the first episode edited later there, the second edited
	// earlier there, the third superseded there; the belief revised there
	// (a retirement) with a second episode as evidence; denials.
	theirs := []episode.Episode{sample(1), sample(2), sample(3)}
	theirs[0].Summary, theirs[0].UpdatedAt = "edited there, later", at(600)
	theirs[1].Summary, theirs[1].UpdatedAt = "edited there, earlier", at(400)
	theirs[2].Lifecycle = episode.LifecycleSuperseded
	tb := lb
	tb.Supporting, tb.Alpha, tb.EvidenceCount = []string{"ep_000000000001", "ep_000000000002"}, 3, 2
	tb.Status, tb.UpdatedAt = belief.StatusRevised, at(5)
	src := openDB(t)
	if err := src.Import(ctx, theirs, []belief.Belief{tb, pinnedHere}); err != nil {
		t.Fatal(err)
	}
	if err := src.ImportAll(ctx, nil, nil, nil, nil,
		store.LevelRecord{BeliefID: tb.ID, Level: store.LevelDenied, Since: at(1)},
		store.LevelRecord{BeliefID: pinnedHere.ID, Level: store.LevelDenied, Since: at(200)}); err != nil {
		t.Fatal(err)
	}
	res := importInto(t, dst, exportOf(t, src))
	if res.Episodes != (Counts{Skipped: 1, Merged: 2}) || res.Beliefs != (Counts{Skipped: 1, Merged: 1}) ||
		res.Levels != (Counts{Added: 1, Skipped: 1}) {
		t.Fatalf("import: %+v", res)
	}
	e1, _ := dst.GetEpisode(ctx, sample(1).ID)
	e2, _ := dst.GetEpisode(ctx, sample(2).ID)
	e3, _ := dst.GetEpisode(ctx, sample(3).ID)
	if e1.Summary != "edited there, later" || e2.Summary != "edited here, later" || e3.Lifecycle != episode.LifecycleSuperseded {
		t.Errorf("episodes: %q %q %q, want the later versions and the file's lifecycle", e1.Summary, e2.Summary, e3.Lifecycle)
	}
	b, _ := dst.GetBelief(ctx, lb.ID)
	if b.Status != belief.StatusRevised || !slices.Equal(b.Supporting, []string{"ep_000000000001", "ep_000000000002"}) ||
		b.Alpha != 3 || b.EvidenceCount != 2 {
		t.Errorf("belief: status %s, supporting %v, α %v, evidence %d; want revised (the stronger retirement), both episodes, 3, 2",
			b.Status, b.Supporting, b.Alpha, b.EvidenceCount)
	}
	levels := map[string]string{}
	rs, _ := dst.LevelRecords(ctx)
	for _, r := range rs {
		levels[r.BeliefID] = r.Level
	}
	if levels[lb.ID] != store.LevelDenied || levels[pinnedHere.ID] != store.LevelPinned {
		t.Errorf("levels %v: want the denial, and the later pin kept over the earlier denial", levels)
	}
	// Both ways: the file's store takes this one's versions and ends the same.
	importInto(t, src, exportOf(t, dst))
	if a, b := normalized(t, exportOf(t, src)), normalized(t, exportOf(t, dst)); a != b {
		t.Errorf("after imports both ways the stores differ:\n%s\n---\n%s", a, b)
	}
}

// TestImportTombstones: a memory forgotten where the file was made is
// forgotten here, its evidence gone from the beliefs; a memory forgotten
// here does not come back from a file that still holds it.
func TestImportTombstones(t *testing.T) {
	ctx := context.Background()
	b := sampleBelief(1)
	b.Supporting, b.Alpha, b.EvidenceCount = []string{"ep_000000000001", "ep_000000000002"}, 3, 2
	old := openDB(t) // a store made before either forget
	if err := old.Import(ctx, []episode.Episode{sample(1), sample(2), sample(3)}, []belief.Belief{b}); err != nil {
		t.Fatal(err)
	}
	stale := exportOf(t, old)
	there, here := openDB(t), openDB(t)
	importInto(t, there, stale)
	importInto(t, here, stale)
	if err := there.Forget(ctx, []string{"ep_000000000001"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := here.Forget(ctx, []string{"ep_000000000003"}, nil); err != nil {
		t.Fatal(err)
	}
	// The stale file does not bring back what was forgotten here.
	res := importInto(t, here, stale)
	if res.Changed() {
		t.Errorf("the stale file changed the store: %+v", res)
	}
	if _, err := here.GetEpisode(ctx, "ep_000000000003"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a forgotten episode came back: %v", err)
	}
	if h, _ := here.History(ctx, "ep_000000000003"); len(h) != 1 || h[0].Action != store.ActionForgotten {
		t.Errorf("history of a forgotten episode after the import: %+v", h)
	}
	// What was forgotten there is forgotten here.
	res = importInto(t, here, exportOf(t, there))
	if len(res.ForgottenEpisodes) != 1 || res.ForgottenEpisodes[0].ID != "ep_000000000001" {
		t.Fatalf("forgotten: %+v", res)
	}
	if _, err := here.GetEpisode(ctx, "ep_000000000001"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an episode forgotten there is still here: %v", err)
	}
	if got, _ := here.GetBelief(ctx, b.ID); slices.Contains(got.Supporting, "ep_000000000001") {
		t.Errorf("the belief still counts the forgotten episode: %v", got.Supporting)
	}
	// And back: both stores hold the same memories, and again nothing changes.
	importInto(t, there, exportOf(t, here))
	if a, b := normalized(t, exportOf(t, there)), normalized(t, exportOf(t, here)); a != b {
		t.Errorf("the stores differ:\n%s\n---\n%s", a, b)
	}
	for _, db := range []*store.DB{here, there} {
		other := there
		if db == there {
			other = here
		}
		if res := importInto(t, db, exportOf(t, other)); res.Changed() {
			t.Errorf("a second round changed a store: %+v", res)
		}
	}
	n, _ := here.EpisodeCount(ctx)
	if n != 1 {
		t.Errorf("%d episodes, want 1 (two forgotten, one on each side)", n)
	}
}

// TestImportSameExchangeTwice: the same exchange, said on two machines,
// is one episode under a different id on each; an exchange of exports
// stores it once on each and counts it once in each belief, and both
// stores hold the same memories.
func TestImportSameExchangeTwice(t *testing.T) {
	ctx := context.Background()
	onA, onB := sample(1), sample(1)
	onB.ID = "ep_0000000000b1"
	ba, bb := sampleBelief(1), sampleBelief(1)
	ba.Supporting, bb.Supporting = []string{onA.ID}, []string{onB.ID}
	ba.Alpha, bb.Alpha, ba.Beta, bb.Beta, ba.EvidenceCount, bb.EvidenceCount = 4, 4, 1, 1, 3, 3
	bb.Statement, bb.UpdatedAt = "User prefers table-driven tests, said on B", ba.UpdatedAt.Add(time.Minute)
	a, b := openDB(t), openDB(t)
	if err := a.Import(ctx, []episode.Episode{onA}, []belief.Belief{ba}); err != nil {
		t.Fatal(err)
	}
	if err := b.Import(ctx, []episode.Episode{onB}, []belief.Belief{bb}); err != nil {
		t.Fatal(err)
	}
	fromA, fromB := exportOf(t, a), exportOf(t, b)
	importInto(t, b, fromA)
	importInto(t, a, fromB)
	for _, db := range []*store.DB{a, b} {
		n, _ := db.EpisodeCount(ctx)
		got, _ := db.GetBelief(ctx, ba.ID)
		if n != 1 || len(got.Supporting) != 1 || got.Alpha != 4 || got.EvidenceCount != 3 || got.Statement != bb.Statement {
			t.Errorf("%d episodes; belief %q supported by %v, α %v, evidence %d; want 1 episode, counted once, B's later statement",
				n, got.Statement, got.Supporting, got.Alpha, got.EvidenceCount)
		}
	}
	if x, y := normalized(t, exportOf(t, a)), normalized(t, exportOf(t, b)); x != y {
		t.Errorf("the stores differ:\n%s\n---\n%s", x, y)
	}
	for _, pair := range [][2]*store.DB{{a, b}, {b, a}} {
		if res := importInto(t, pair[0], exportOf(t, pair[1])); res.Changed() {
			t.Errorf("a second exchange changed a store: %+v", res)
		}
	}
}

// normalized is an export with what each machine keeps for itself left
// out (accesses, stability, the project's path, the order of records and
// of evidence lists), an episode named by its content (the same exchange
// said on two machines has an id on each), one record per line, sorted.
func normalized(t *testing.T, file []byte) string {
	t.Helper()
	var recs []map[string]any
	byContent := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(file)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		if m["kind"] == KindEpisode {
			byContent[m["id"].(string)] = "content:" + m["content_hash"].(string)
			delete(m, "id")
		}
		recs = append(recs, m)
	}
	name := func(v any) any {
		if s, ok := v.(string); ok && byContent[s] != "" {
			return byContent[s]
		}
		return v
	}
	var out []string
	for _, m := range recs {
		for _, k := range []string{"access_count", "last_accessed_at", "stability", "project_path", "peak_confidence"} {
			delete(m, k)
		}
		for _, k := range []string{"memory_id", "cause"} {
			if v, ok := m[k]; ok {
				m[k] = name(v)
			}
		}
		for _, k := range []string{"supporting_episodes", "contradicting_episodes", "partial_episodes"} {
			if list, ok := m[k].([]any); ok {
				for i := range list {
					list[i] = name(list[i])
				}
				sort.Slice(list, func(i, j int) bool { return list[i].(string) < list[j].(string) })
			}
		}
		b, _ := json.Marshal(m)
		out = append(out, string(b))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}
