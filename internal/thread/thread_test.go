package thread

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/store"
)

var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

func openDB(t *testing.T) (*store.DB, string) {
	t.Helper()
	home := t.TempDir()
	db, err := store.Open(context.Background(), filepath.Join(home, "memory.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, home
}

// vec is a unit vector of dimension 4 at angle a (radians) in the first
// plane: the cosine of vec(a) and vec(b) is cos(a-b).
func vec(a float64) []float32 {
	return []float32{float32(math.Cos(a)), float32(math.Sin(a)), 0, 0}
}

var seq int

// ep makes an episode of project /p at t0+min minutes with vector v.
func ep(min float64, v []float32, entities ...string) episode.Episode {
	seq++
	at := t0.Add(time.Duration(min * float64(time.Minute)))
	return episode.Episode{ID: fmt.Sprintf("ep_%012x", seq), Summary: "episode " + strings.Join(entities, " "), Entities: entities,
		Importance: 0.5, Type: episode.TypeEvent, Scope: episode.ScopeProject, Project: "p", ProjectPath: "/p",
		SessionID: fmt.Sprintf("s%d", int(min)/1000), ContentHash: fmt.Sprintf("h%d", seq), Embedding: v, Embedder: "test",
		OccurredAt: at, CreatedAt: at, UpdatedAt: at}
}

func add(t *testing.T, db *store.DB, eps ...episode.Episode) {
	t.Helper()
	if err := db.ImportEpisodes(context.Background(), eps); err != nil {
		t.Fatal(err)
	}
}

func build(t *testing.T, db *store.DB, home string, now time.Time) Stats {
	t.Helper()
	st, err := Build(context.Background(), db, home, now)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func boxes(t *testing.T, db *store.DB) []store.Box {
	t.Helper()
	bs, err := db.AllBoxes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return bs
}

// angle is the angle whose cosine is c.
func angle(c float64) float64 { return math.Acos(c) }

// TestSealTopic: an episode whose cosine with the open box's centroid is
// at TopicShift joins it; one just under seals it and opens the next.
func TestSealTopic(t *testing.T) {
	db, home := openDB(t)
	add(t, db, ep(0, vec(0)), ep(1, vec(angle(TopicShift)-1e-3)))
	build(t, db, home, t0.Add(2*time.Minute))
	if bs := boxes(t, db); len(bs) != 1 || bs[0].Members != 2 || bs[0].Sealed() {
		t.Fatalf("at the threshold: want one open box of 2, got %+v", bs)
	}
	// The centroid is now halfway between the two; an episode at a cosine
	// just under TopicShift from it seals the box.
	c := boxes(t, db)[0].Centroid
	mid := math.Atan2(float64(c[1]), float64(c[0]))
	add(t, db, ep(2, vec(mid+angle(TopicShift)+1e-3)))
	st := build(t, db, home, t0.Add(3*time.Minute))
	bs := boxes(t, db)
	if len(bs) != 2 || st.Sealed != 1 || st.Opened != 1 {
		t.Fatalf("past the threshold: want 2 boxes, one sealed now: %+v %+v", bs, st)
	}
	if !bs[0].Sealed() || bs[0].SealReason != "topic" || !bs[0].SealedAt.Equal(t0.Add(2*time.Minute)) || bs[1].Sealed() {
		t.Fatalf("the first box sealed by the topic when the third came: %+v", bs)
	}
	if bs[0].TraceID == "" {
		t.Fatal("a sealed box has a trace")
	}
}

// TestSealIdle: an episode exactly TimeGap after the last joins the box;
// one more than TimeGap after seals it, at last+TimeGap; and a box with no
// episode for more than TimeGap before now seals at the end of the run.
func TestSealIdle(t *testing.T) {
	db, home := openDB(t)
	add(t, db, ep(0, vec(0)), ep(30, vec(0)))
	build(t, db, home, t0.Add(31*time.Minute))
	if bs := boxes(t, db); len(bs) != 1 || bs[0].Members != 2 || bs[0].Sealed() {
		t.Fatalf("TimeGap apart: one open box of 2, got %+v", bs)
	}
	add(t, db, ep(60.001, vec(0)))
	build(t, db, home, t0.Add(61*time.Minute))
	bs := boxes(t, db)
	if len(bs) != 2 || bs[0].SealReason != "idle" || !bs[0].SealedAt.Equal(t0.Add(60*time.Minute)) {
		t.Fatalf("more than TimeGap apart: the first box sealed idle at last+gap: %+v", bs)
	}
	// No new episode: at exactly TimeGap after its last the box stays open,
	// past it the run seals it.
	last := bs[1].LastAt
	build(t, db, home, last.Add(TimeGap))
	if bs := boxes(t, db); bs[1].Sealed() {
		t.Fatalf("sealed at exactly TimeGap: %+v", bs[1])
	}
	st := build(t, db, home, last.Add(TimeGap+time.Second))
	if bs := boxes(t, db); !bs[1].Sealed() || bs[1].SealReason != "idle" || st.Sealed != 1 {
		t.Fatalf("past TimeGap with no episode: sealed idle: %+v %+v", bs[1], st)
	}
	// Both boxes are the same topic: the second joins the first's trace.
	if bs := boxes(t, db); bs[0].TraceID != bs[1].TraceID {
		t.Fatalf("same topic, two boxes: one trace, got %s and %s", bs[0].TraceID, bs[1].TraceID)
	}
}

// TestSealFull: a box holds MaxMemories; the next episode opens another.
func TestSealFull(t *testing.T) {
	db, home := openDB(t)
	var eps []episode.Episode
	for i := range MaxMemories + 1 {
		eps = append(eps, ep(float64(i)*0.1, vec(0)))
	}
	add(t, db, eps...)
	build(t, db, home, t0.Add(10*time.Minute))
	bs := boxes(t, db)
	if len(bs) != 2 || bs[0].Members != MaxMemories || bs[0].SealReason != "full" || bs[1].Members != 1 || bs[1].Sealed() {
		t.Fatalf("want a full sealed box of %d and an open one of 1, got %+v", MaxMemories, bs)
	}
}

// TestWeave: a sealed box joins the trace of the earlier box it overlaps
// most (at least TraceOverlap), and starts its own otherwise.
func TestWeave(t *testing.T) {
	a := store.Box{ID: "bx_a", TraceID: "tr_a", OpenedAt: t0, Centroid: vec(0), Embedder: "test"}
	b := store.Box{ID: "bx_b", TraceID: "tr_b", OpenedAt: t0.Add(time.Hour), Centroid: vec(-1.2), Embedder: "test"}
	at := func(c float64) store.Box {
		return store.Box{ID: "bx_new", OpenedAt: t0.Add(2 * time.Hour), Centroid: vec(angle(c)), Embedder: "test"}
	}
	if tr, o := DefaultPolicy.Weave(at(TraceOverlap+1e-3), []store.Box{a, b}); tr != "tr_a" || o < TraceOverlap {
		t.Fatalf("just over TraceOverlap with a: got %q %v", tr, o)
	}
	if tr, _ := DefaultPolicy.Weave(at(TraceOverlap-1e-3), []store.Box{a}); tr != "" {
		t.Fatalf("just under TraceOverlap: a trace of its own, got %q", tr)
	}
	// Nearer b than a: b's trace.
	near := store.Box{ID: "bx_new", OpenedAt: t0.Add(2 * time.Hour), Centroid: vec(-1.1), Embedder: "test"}
	if tr, _ := DefaultPolicy.Weave(near, []store.Box{a, b}); tr != "tr_b" {
		t.Fatalf("nearest is b: got %q", tr)
	}
	// A box of another embedder compares key terms (Jaccard).
	x := store.Box{ID: "bx_x", TraceID: "tr_x", OpenedAt: t0, Terms: []string{"cache", "redis", "ttl"}, Embedder: "other", Centroid: vec(0)}
	y := store.Box{ID: "bx_y", OpenedAt: t0.Add(time.Hour), Terms: []string{"cache", "redis", "ttl", "eviction"}, Embedder: "test", Centroid: vec(0)}
	if got := BoxOverlap(x, y); math.Abs(got-0.75) > 1e-9 {
		t.Fatalf("term overlap: want 3/4, got %v", got)
	}
	if tr, _ := DefaultPolicy.Weave(y, []store.Box{x}); tr != "tr_x" {
		t.Fatalf("term overlap 0.75: joins x, got %q", tr)
	}
}

// TestTraceAcrossSessions: the same topic on two days, another topic
// between: two traces, the first of two boxes and two sessions; the
// timeline shows both boxes and the files are written, dated, 0600.
func TestTraceAcrossSessions(t *testing.T) {
	db, home := openDB(t)
	add(t, db, ep(0, vec(0), "cache", "redis"), ep(5, vec(0.05), "redis", "ttl"),
		ep(10, vec(1.5), "parser"), ep(15, vec(1.52), "parser", "flaky"),
		ep(1000*1+0, vec(0.02), "cache", "redis", "eviction"), ep(1000*1+3, vec(0.03), "redis"))
	build(t, db, home, t0.Add(48*time.Hour))
	bs := boxes(t, db)
	if len(bs) != 3 {
		t.Fatalf("want 3 boxes (cache, parser, cache again), got %+v", bs)
	}
	if bs[0].TraceID != bs[2].TraceID || bs[1].TraceID == bs[0].TraceID {
		t.Fatalf("traces: want cache boxes woven, parser apart: %s %s %s", bs[0].TraceID, bs[1].TraceID, bs[2].TraceID)
	}
	ctx := context.Background()
	tr, err := Find(ctx, db, "redis eviction", "")
	if err != nil {
		t.Fatal(err)
	}
	if tr.ID != bs[0].TraceID || len(tr.Boxes) != 2 || tr.Sessions != 2 || tr.Memories != 4 {
		t.Fatalf("trace by topic: %+v", tr)
	}
	var out bytes.Buffer
	WriteTimeline(&out, tr)
	for _, want := range []string{bs[0].ID, bs[2].ID, "redis", "2 boxes, 2 sessions, 4 memories"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("timeline lacks %q:\n%s", want, out.String())
		}
	}
	for _, q := range []string{tr.ID, bs[2].ID, tr.Boxes[0].Key[0].ID} {
		if got, err := Find(ctx, db, q, "/p"); err != nil || got.ID != tr.ID {
			t.Fatalf("Find(%q) = %q, %v", q, got.ID, err)
		}
	}
	if _, err := Find(ctx, db, tr.ID, "/other"); !errors.Is(err, ErrNoTrace) {
		t.Fatalf("another project's thread: %v", err)
	}
	if _, err := Find(ctx, db, "redis", "/other"); !errors.Is(err, ErrNoTrace) {
		t.Fatalf("another project's topic: %v", err)
	}
	if _, err := Find(ctx, db, "kubernetes", ""); !errors.Is(err, ErrNoTrace) {
		t.Fatalf("a topic nothing is about: %v", err)
	}
	for _, b := range bs {
		fi, err := os.Stat(FilePath(home, b))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("box file %s: %v %v", FilePath(home, b), fi, err)
		}
	}
	if fi, err := os.Stat(Dir(home)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("boxes dir: %v %v", fi, err)
	}
	if !strings.Contains(FilePath(home, bs[2]), "2026-03-03") {
		t.Fatalf("dated by the day it opened: %s", FilePath(home, bs[2]))
	}
}

// TestForgetLeavesBox: a forgotten episode leaves its box; the box's terms
// and file lose its words; a box left empty goes with its file.
func TestForgetLeavesBox(t *testing.T) {
	db, home := openDB(t)
	ctx := context.Background()
	a, b, c := ep(0, vec(0), "alpha"), ep(1, vec(0), "secretproject"), ep(100, vec(0), "gamma")
	add(t, db, a, b, c)
	build(t, db, home, t0.Add(200*time.Minute))
	bs := boxes(t, db)
	if len(bs) != 2 || bs[0].Members != 2 {
		t.Fatalf("boxes: %+v", bs)
	}
	file := FilePath(home, bs[0])
	if data, _ := os.ReadFile(file); !strings.Contains(string(data), "secretproject") {
		t.Fatalf("box file before: %s", data)
	}
	if err := db.Forget(ctx, []string{b.ID, c.ID}, nil); err != nil {
		t.Fatal(err)
	}
	// At once, the store holds none of its words in the box.
	if got, _ := db.GetBox(ctx, bs[0].ID); strings.Contains(strings.Join(got.Terms, " "), "secretproject") {
		t.Fatalf("terms after forget: %v", got.Terms)
	}
	st := build(t, db, home, t0.Add(300*time.Minute))
	if st.Refreshed != 1 || st.Dropped != 1 {
		t.Fatalf("stats: %+v", st)
	}
	bs2 := boxes(t, db)
	if len(bs2) != 1 || bs2[0].Members != 1 || strings.Join(bs2[0].Terms, " ") != "alpha" {
		t.Fatalf("after forget: %+v", bs2)
	}
	if data, _ := os.ReadFile(file); strings.Contains(string(data), "secretproject") || !strings.Contains(string(data), "alpha") {
		t.Fatalf("box file after forget: %s", data)
	}
	if _, err := os.Stat(FilePath(home, bs[1])); !os.IsNotExist(err) {
		t.Fatalf("the emptied box's file stays: %v", err)
	}
}

// TestLateEpisodes: episodes older than the open box (an import) go into
// boxes of their own, sealed "late", and leave the open box alone.
func TestLateEpisodes(t *testing.T) {
	db, home := openDB(t)
	add(t, db, ep(1000, vec(0)))
	build(t, db, home, t0.Add(1001*time.Minute))
	add(t, db, ep(0, vec(0)), ep(2, vec(0)))
	st := build(t, db, home, t0.Add(1002*time.Minute))
	bs := boxes(t, db)
	if len(bs) != 2 || st.Boxed != 2 {
		t.Fatalf("%+v %+v", bs, st)
	}
	if bs[0].SealReason != "late" || bs[0].Members != 2 || bs[1].Sealed() || bs[1].Members != 1 {
		t.Fatalf("late box: %+v", bs)
	}
}

// TestBuildIdempotent: a second run at the same time changes nothing.
func TestBuildIdempotent(t *testing.T) {
	db, home := openDB(t)
	add(t, db, ep(0, vec(0)), ep(5, vec(1.5)), ep(100, vec(0)))
	now := t0.Add(200 * time.Minute)
	build(t, db, home, now)
	before := boxes(t, db)
	st := build(t, db, home, now)
	if st != (Stats{}) {
		t.Fatalf("second run did something: %+v", st)
	}
	after := boxes(t, db)
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Fatalf("boxes changed:\n%+v\n%+v", before, after)
	}
}

// TestSymlinkedBoxesDir: a boxes directory that is a symbolic link out of
// home is refused, and nothing is written through it.
func TestSymlinkedBoxesDir(t *testing.T) {
	db, home := openDB(t)
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, Dir(home)); err != nil {
		t.Fatal(err)
	}
	add(t, db, ep(0, vec(0)))
	if _, err := Build(context.Background(), db, home, t0.Add(time.Hour)); err == nil {
		t.Fatal("a symlinked boxes dir: want an error")
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
		t.Fatalf("written through the link: %v", ents)
	}
}

// TestTerms: entities by frequency, then first seen; summary words when
// an episode has none.
func TestTerms(t *testing.T) {
	eps := []episode.Episode{{Entities: []string{"Redis", "cache"}}, {Entities: []string{"redis", "ttl"}}, {Summary: "the eviction policy of the cache"}}
	if got := strings.Join(Terms(eps, 3), ","); got != "redis,cache,ttl" {
		t.Fatalf("terms: %s", got)
	}
}

// TestWeaveCentred: boxes that share only what every box of the project
// shares are not one thread once centred; uncentred, they are.
func TestWeaveCentred(t *testing.T) {
	a := store.Box{ID: "bx_a", TraceID: "tr_a", OpenedAt: t0, Centroid: []float32{1, 0.3, 0}, Embedder: "test"}
	b := store.Box{ID: "bx_b", TraceID: "tr_b", OpenedAt: t0.Add(time.Hour), Centroid: []float32{1, -0.3, 0}, Embedder: "test"}
	n := store.Box{ID: "bx_n", OpenedAt: t0.Add(2 * time.Hour), Centroid: []float32{1, 0, 0.3}, Embedder: "test"}
	raw := DefaultPolicy
	raw.Center = false
	if tr, _ := raw.Weave(n, []store.Box{a, b}); tr == "" {
		t.Fatal("uncentred: the new box joins a trace")
	}
	if tr, o := DefaultPolicy.Weave(n, []store.Box{a, b}); tr != "" {
		t.Fatalf("centred: a trace of its own, got %q (%v)", tr, o)
	}
	// Like a once centred: a's trace.
	m := store.Box{ID: "bx_m", OpenedAt: t0.Add(2 * time.Hour), Centroid: []float32{1, 0.25, 0.05}, Embedder: "test"}
	if tr, _ := DefaultPolicy.Weave(m, []store.Box{a, b}); tr != "tr_a" {
		t.Fatalf("centred, like a: got %q", tr)
	}
}

// TestIncrementalIsRebuild: episodes boxed over several runs, as they
// come, make the boxes and traces one run over all of them makes.
func TestIncrementalIsRebuild(t *testing.T) {
	var eps []episode.Episode
	for i := range 40 {
		// topics come back: angle by i mod 4, a pause every 7th
		eps = append(eps, ep(float64(i*10+(i/7)*60), vec(float64(i%4)*0.9+float64(i%3)*0.05), fmt.Sprintf("t%d", i%4)))
	}
	a, homeA := openDB(t)
	for i := 0; i < len(eps); i += 9 {
		add(t, a, eps[i:min(i+9, len(eps))]...)
		build(t, a, homeA, eps[min(i+9, len(eps))-1].OccurredAt)
	}
	build(t, a, homeA, t0.Add(100*time.Hour))
	b, homeB := openDB(t)
	add(t, b, eps...)
	build(t, b, homeB, t0.Add(100*time.Hour))
	got, want := boxes(t, a), boxes(t, b)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("incremental:\n%+v\nrebuild:\n%+v", got, want)
	}
	traces := map[string]bool{}
	for _, x := range want {
		traces[x.TraceID] = true
	}
	if len(want) < 8 || len(traces) >= len(want) {
		t.Fatalf("the case should make several boxes woven into fewer traces: %d boxes, %d traces", len(want), len(traces))
	}
}
