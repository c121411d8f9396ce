package main

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/store"
	"github.com/engram-memory/engram/internal/worker"
)

var words = strings.Fields(`alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november
oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu amber birch cedar dune ember fjord
glacier harbor island jungle kestrel lagoon meadow nebula orchid prairie quartz river savanna tundra upland valley`)

// seedCaptures stores n distinct pending captures across a few sessions.
func seedCaptures(t *testing.T, db *store.DB, n int) {
	t.Helper()
	rng := rand.New(rand.NewSource(42))
	perSession := 50
	for s := 0; s*perSession < n; s++ {
		var caps []store.Capture
		for i := 0; i < perSession && s*perSession+i < n; i++ {
			k := s*perSession + i
			var b strings.Builder
			fmt.Fprintf(&b, "User: please update module%d so that handler%d uses ", k, k)
			for j := 0; j < 12; j++ {
				b.WriteString(words[rng.Intn(len(words))])
				b.WriteString(" ")
			}
			fmt.Fprintf(&b, "\n\nAssistant: Updated internal/mod%d/handler.go; the %s check passes.", k, words[rng.Intn(len(words))])
			caps = append(caps, store.Capture{ByteStart: int64(i * 100), ByteEnd: int64(i*100 + 100), TurnAt: time.Now(),
				Content: b.String(), ContentHash: fmt.Sprint(k), TranscriptPath: "/t/x.jsonl", Source: "stop",
				Messages: fmt.Sprintf(`[{"role":"user","kind":"text","text":"please update module%d"}]`, k)})
		}
		sid := fmt.Sprintf("session-%d", s)
		if _, err := db.CommitCaptures(context.Background(), store.CaptureCommit{
			Session: store.Session{ID: sid, TranscriptPath: "/t/" + sid + ".jsonl", Offset: int64(len(caps) * 100),
				LastActivity: time.Now().Add(-100 * 24 * time.Hour)}, Captures: caps}); err != nil {
			t.Fatal(err)
		}
	}
}

// A worker killed with SIGKILL at any point, then run again, turns every
// capture into exactly one episode: none lost, none doubled.
func TestKilledWorkerLosesAndDuplicatesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	const n = 2500
	h := newHome(t)
	db := h.db(t)
	seedCaptures(t, db, n)
	ctx := context.Background()
	kills := 0
	rng := rand.New(rand.NewSource(7))
	// Kill at growing, jittered delays: early ones hit start-up and the
	// first batches, later ones every stage of the ingest.
	for delay := 5 * time.Millisecond; delay < 5*time.Second; delay += time.Duration(2+rng.Intn(12)) * time.Millisecond {
		cmd := h.command("run")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay)
		cmd.Process.Signal(syscall.SIGKILL)
		err := cmd.Wait()
		if err != nil {
			kills++
		}
		counts, _ := db.CaptureCounts(ctx)
		if counts[store.CapturePending] == 0 {
			break
		}
	}
	if kills < 10 {
		t.Errorf("only %d runs were killed mid-way; the test proves little", kills)
	}
	if out, errOut, code := h.run(t, "", "run"); code != 0 {
		t.Fatalf("final run exit %d: %s %s", code, out, errOut)
	}
	caps, err := db.Captures(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	perEpisode := map[string]int{}
	for _, c := range caps {
		if c.Status != store.CaptureDone {
			t.Errorf("capture %d status %s (%s)", c.ID, c.Status, c.Error)
			continue
		}
		perEpisode[c.EpisodeID]++
	}
	episodes, _ := db.EpisodeCount(ctx)
	if episodes != n || len(perEpisode) != n {
		t.Errorf("episodes=%d, distinct episode ids on captures=%d, want %d each", episodes, len(perEpisode), n)
	}
	for id, k := range perEpisode {
		if k != 1 {
			t.Errorf("episode %s holds %d captures", id, k)
		}
		if _, err := db.GetEpisode(ctx, id); err != nil {
			t.Errorf("capture points at missing episode: %v", err)
		}
	}
	t.Logf("%d of the runs were killed before finishing", kills)
}

func TestSecondRunExitsAtOnce(t *testing.T) {
	h := newHome(t)
	h.db(t)
	lk, err := worker.Lock(h.engram)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Unlock()
	out, _, code := h.run(t, "", "run")
	if code != 0 || !strings.Contains(out, "another engram-worker run is in progress") {
		t.Errorf("second run: exit %d, stdout %q", code, out)
	}
}
