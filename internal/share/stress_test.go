package share_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/extract"
	"github.com/engram-memory/engram/internal/gitroot"
	"github.com/engram-memory/engram/internal/ingest"
	"github.com/engram-memory/engram/internal/store"
)

// stressTurns is the number of turns each machine makes in TestStress:
// ENGRAM_SHARE_STRESS_TURNS, 300 by default. The figure is 2,000
// (ENGRAM_SHARE_STRESS_TURNS=2000: 3 × 2,000 turns).
func stressTurns(t *testing.T) int {
	if v := os.Getenv("ENGRAM_SHARE_STRESS_TURNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 10 {
			t.Fatalf("ENGRAM_SHARE_STRESS_TURNS=%q: want a number of at least 10", v)
		}
		return n
	}
	return 300
}

// buildWorker builds engram-worker for the test.
func buildWorker(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "engram-worker")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/engram-memory/engram/cmd/worker")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

type stressMachine struct {
	*machine
	root, private string
	env           []string
	mu            sync.Mutex
	made          []string // shared-project episodes made here
	forgotten     []string // ids forgotten here (own or pulled)
	kept          []string // global and private-project episodes: never leave
}

// TestStress: three machines make turns concurrently while their workers
// run cycles and syncs, which are SIGKILLed at random moments; the server
// is restarted once in the middle; machines forget their own and each
// other's memories along the way. Afterwards every machine holds the same
// shared set: every shared episode made and not forgotten, each once,
// nothing forgotten, nothing private; the server agrees, with no text in
// its tombstones.
func TestStress(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode")
	}
	turns := stressTurns(t)
	bin := buildWorker(t)
	srv, url := startServer(t)
	remotes := []string{"git@github.com:acme/api.git", "https://github.com/acme/api", "ssh://git@github.com/Acme/api/"}
	var ms []*stressMachine
	for i, remote := range remotes {
		m := &stressMachine{machine: newMachine(t, fmt.Sprint("m", i), url, false)}
		m.root = m.repo(fmt.Sprintf("dir%d/api", i), remote)
		m.private = m.repo(fmt.Sprintf("dir%d/private", i), fmt.Sprintf("git@github.com:acme/private%d.git", i))
		home := filepath.Dir(m.cfg.Home)
		m.env = append(os.Environ(), "HOME="+home, "ENGRAM_HOME="+m.cfg.Home, "CLAUDE_CONFIG_DIR="+m.cfg.ClaudeConfigDir,
			"ENGRAM_SHARE_URL="+url, "ENGRAM_SENTENCE_EMBEDDER=false", "ENGRAM_SELF_SCHEDULE=false")
		cmd := exec.Command(bin, "share", "enable", m.root)
		cmd.Env = m.env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("share enable: %v\n%s", err, out)
		}
		ms = append(ms, m)
	}

	var writing atomic.Bool
	writing.Store(true)
	var kills, cycles, failedCycles atomic.Int64
	var failMu sync.Mutex
	failures := map[string]int{} // why a worker process not killed failed
	half := make(chan struct{})
	var halfOnce sync.Once
	var wg sync.WaitGroup
	// Workers: cycles and syncs one after another, some killed.
	for i, m := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(i), 7))
			for k := 0; writing.Load(); k++ {
				args := []string{"run", "--quiet"}
				if k%2 == 1 {
					args = []string{"share", "sync"}
				}
				cmd := exec.Command(bin, args...)
				cmd.Env = m.env
				var stderr strings.Builder
				cmd.Stderr = &stderr
				if err := cmd.Start(); err != nil {
					t.Error(err)
					return
				}
				killed := false
				if r.IntN(3) == 0 {
					time.Sleep(time.Duration(20+r.IntN(400)) * time.Millisecond)
					if cmd.Process.Signal(syscall.SIGKILL) == nil {
						kills.Add(1)
						killed = true
					}
				}
				if err := cmd.Wait(); err != nil && !(killed && strings.Contains(err.Error(), "killed")) {
					failedCycles.Add(1)
					why := stderr.String()
					if i := strings.IndexAny(why, ":\n"); i > 0 && strings.HasPrefix(why, "engram-worker") {
						why = why[:min(len(why), i+60)]
					}
					failMu.Lock()
					failures[strings.TrimSpace(why)]++
					failMu.Unlock()
				}
				cycles.Add(1)
			}
		}()
	}
	// Writers: turns, some global or in a private project, and forgets.
	var writers sync.WaitGroup
	for i, m := range ms {
		writers.Add(1)
		go func() {
			defer writers.Done()
			r := rand.New(rand.NewPCG(uint64(i), 11))
			for n := 0; n < turns; {
				batch := min(25, turns-n)
				eps := make([]episode.Episode, 0, batch)
				for j := range batch {
					eps = append(eps, m.turn(r, n+j))
				}
				if err := m.db.ImportEpisodes(context.Background(), eps); err != nil {
					t.Errorf("%s: import: %v", m.name, err)
					return
				}
				m.mu.Lock()
				for _, e := range eps {
					if e.Scope == episode.ScopeProject && e.ProjectPath == m.root {
						m.made = append(m.made, e.ID)
					} else {
						m.kept = append(m.kept, e.ID)
					}
				}
				m.mu.Unlock()
				n += batch
				if i == 0 && n >= turns/2 {
					halfOnce.Do(func() { close(half) })
				}
				if n%100 == 0 || n == turns {
					m.forgetSome(t, bin, r)
				}
				time.Sleep(time.Duration(r.IntN(30)) * time.Millisecond)
			}
		}()
	}
	<-half
	srv.Stop(t)
	time.Sleep(500 * time.Millisecond)
	srv.Restart(t)
	writers.Wait()
	writing.Store(false)
	wg.Wait()
	t.Logf("%d turns per machine; %d worker processes, %d SIGKILLed, %d others failed", turns, cycles.Load(), kills.Load(), failedCycles.Load())
	for why, n := range failures {
		t.Logf("  %d× %s", n, why)
	}
	if kills.Load() == 0 {
		t.Error("no worker was killed: the test proved nothing about kills")
	}

	// Quiet now: two rounds of syncs bring everyone level.
	for range 2 {
		for _, m := range ms {
			cmd := exec.Command(bin, "share", "sync")
			cmd.Env = m.env
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: final sync: %v\n%s", m.name, err, out)
			}
		}
	}

	want := map[string]bool{}
	forgotten := map[string]bool{}
	var kept []string
	for _, m := range ms {
		for _, id := range m.made {
			want[id] = true
		}
		for _, id := range m.forgotten {
			forgotten[id] = true
		}
		kept = append(kept, m.kept...)
	}
	for id := range forgotten {
		delete(want, id)
	}
	t.Logf("%d shared episodes expected, %d forgotten, %d never leave", len(want), len(forgotten), len(kept))
	var beliefSets []string
	for _, m := range ms {
		got := map[string]bool{}
		hashes := map[string]bool{}
		for id, e := range m.episodes() {
			if e.ProjectPath == m.root {
				got[id] = true
				if hashes[e.ContentHash] {
					t.Errorf("%s: content %s twice", m.name, e.ContentHash)
				}
				hashes[e.ContentHash] = true
			}
			if forgotten[id] {
				t.Errorf("%s still holds forgotten %s", m.name, id)
			}
		}
		for id := range want {
			if !got[id] {
				t.Errorf("%s lacks shared episode %s", m.name, id)
			}
		}
		for id := range got {
			if !want[id] {
				t.Errorf("%s holds %s, which no machine shared or which was forgotten", m.name, id)
			}
		}
		var bs []string
		for id, b := range m.beliefs() {
			if b.ProjectPath == m.root {
				bs = append(bs, fmt.Sprintf("%s %s α=%v β=%v", id, b.Status, b.Alpha, b.Beta))
			}
		}
		sortStrings(bs)
		beliefSets = append(beliefSets, strings.Join(bs, "\n"))
		if n, _ := m.db.PendingShareChanges(context.Background()); n != 0 {
			t.Errorf("%s: %d changes still queued", m.name, n)
		}
	}
	for i := 1; i < len(beliefSets); i++ {
		if beliefSets[i] != beliefSets[0] {
			t.Errorf("the machines' shared beliefs differ:\n%s\n---\n%s", beliefSets[0], beliefSets[i])
		}
	}

	// The server: each shared episode once, alive; each forgotten one a
	// tombstone without text; nothing private.
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SELECT id, deleted, body IS NULL FROM engram_items WHERE kind = 'episode'")
	if err != nil {
		t.Fatal(err)
	}
	alive := 0
	for rows.Next() {
		var id string
		var deleted, empty bool
		if err := rows.Scan(&id, &deleted, &empty); err != nil {
			t.Fatal(err)
		}
		switch {
		case deleted && !empty:
			t.Errorf("server: tombstone %s still has its text", id)
		case deleted && !forgotten[id]:
			t.Errorf("server: %s is a tombstone but was not forgotten", id)
		case !deleted && !want[id]:
			t.Errorf("server: %s is alive but was not shared or was forgotten", id)
		case !deleted:
			alive++
		}
	}
	rows.Close()
	if alive != len(want) {
		t.Errorf("server: %d shared episodes alive, want %d", alive, len(want))
	}
	var private int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM engram_items WHERE id = ANY($1)", kept).Scan(&private); err != nil || private != 0 {
		t.Errorf("server: %d private episodes (%v)", private, err)
	}
}

var stressTopics = []string{"billing", "search", "auth", "exports", "webhooks", "caching", "queue", "reports", "uploads", "alerts"}

// turn makes one turn of machine m: mostly shared project work, some
// global, some in a private project; now and then a stated fact.
func (m *stressMachine) turn(r *rand.Rand, n int) episode.Episode {
	root, scope := m.root, episode.ScopeProject
	switch x := r.IntN(20); {
	case x == 0:
		root, scope = "", episode.ScopeGlobal
	case x == 1:
		root = m.private
	}
	topic := stressTopics[r.IntN(len(stressTopics))]
	text := fmt.Sprintf("User: turn %d on %s: change the %s module so that %s retries %d times.\nAssistant: Done: %s now retries %d times.",
		n, m.name, topic, topic, r.IntN(9)+1, topic, r.IntN(9)+1)
	if r.IntN(40) == 0 {
		text = fmt.Sprintf("User: This service uses %s for %s, turn %d on %s.", []string{"Postgres", "Redis", "SQS"}[r.IntN(3)], topic, n, m.name)
	}
	now := time.Now()
	d, _ := extract.NewLocal().Extract(context.Background(), extract.Input{Project: gitroot.Name(root), ProjectPath: root, TurnAt: now, Content: text})
	if d.Summary == "" {
		d.Summary = text
	}
	local := embed.NewLocal()
	typ := d.Type
	if typ == "" {
		typ = episode.TypeEvent
	}
	return episode.Episode{ID: store.NewID("ep_"), Summary: d.Summary, Context: d.Context, Entities: d.Entities, Signals: d.Signals,
		Importance: d.Importance, Type: typ, Scope: scope, Project: gitroot.Name(root), ProjectPath: root,
		Embedding: local.EmbedText(ingest.EmbedText(d)), Embedder: local.Name(), Extractor: "local",
		OccurredAt: now, CreatedAt: now, UpdatedAt: now, Stability: 1, ContentHash: ingest.ContentHash(scope, root, text)}
}

// forgetSome forgets, through the command line (which waits for the
// worker's lock), one episode made here and one pulled from another
// machine, when there are such.
func (m *stressMachine) forgetSome(t *testing.T, bin string, r *rand.Rand) {
	m.mu.Lock()
	mine := map[string]bool{}
	for _, id := range m.made {
		mine[id] = true
	}
	for _, id := range m.forgotten {
		mine[id] = true // not again
	}
	var own string
	if len(m.made) > 0 {
		own = m.made[r.IntN(len(m.made))]
	}
	m.mu.Unlock()
	var pulled string
	_ = m.db.EachEpisode(context.Background(), func(e episode.Episode) error {
		if pulled == "" && e.ProjectPath == m.root && !mine[e.ID] && r.IntN(50) == 0 {
			pulled = e.ID
		}
		return nil
	})
	for _, id := range []string{own, pulled} {
		if id == "" || slicesContains(m.forgotten, id) {
			continue
		}
		cmd := exec.Command(bin, "forget", id)
		cmd.Env = m.env
		out, err := cmd.CombinedOutput()
		if err != nil {
			if strings.Contains(string(out), "no memory with id") {
				continue // forgotten elsewhere in the meantime
			}
			t.Logf("%s: forget %s: %v %s", m.name, id, err, out)
			continue
		}
		m.mu.Lock()
		m.forgotten = append(m.forgotten, id)
		m.mu.Unlock()
	}
}

func slicesContains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
