package ingest

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/extract"
	"github.com/engram-memory/engram/internal/llm"
	"github.com/engram-memory/engram/internal/logx"
	"github.com/engram-memory/engram/internal/openaistub"
	"github.com/engram-memory/engram/internal/store"
)

func openDB(tb testing.TB) *store.DB {
	tb.Helper()
	db, err := store.Open(context.Background(), filepath.Join(tb.TempDir(), "memory.db"), store.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

type turn struct{ session, user, reply string }

// addTurns stores captures the way the Stop hook does, one session each.
func addTurns(tb testing.TB, db *store.DB, project string, turns []turn) {
	tb.Helper()
	bySession := map[string][]store.Capture{}
	var order []string
	for _, t := range turns {
		caps := bySession[t.session]
		start := int64(len(caps) * 1000)
		content := "User: " + t.user + "\n\nAssistant: " + t.reply
		msgs := fmt.Sprintf(`[{"role":"user","kind":"text","text":%q},{"role":"assistant","kind":"text","text":%q}]`, t.user, t.reply)
		if len(caps) == 0 {
			order = append(order, t.session)
		}
		bySession[t.session] = append(caps, store.Capture{ByteStart: start, ByteEnd: start + 1000, TurnAt: time.Now(),
			Content: content, Messages: msgs, ContentHash: content, TranscriptPath: "/t/" + t.session + ".jsonl",
			ProjectPath: project, Project: filepath.Base(project), Source: "stop"})
	}
	for _, s := range order {
		caps := bySession[s]
		if _, err := db.CommitCaptures(context.Background(), store.CaptureCommit{
			Session:  store.Session{ID: s, TranscriptPath: "/t/" + s + ".jsonl", Offset: int64(len(caps) * 1000)},
			Captures: caps}); err != nil {
			tb.Fatal(err)
		}
	}
}

func pipeline(db *store.DB, x extract.Extractor) *Pipeline {
	return &Pipeline{DB: db, Extractor: x, Fallback: extract.NewLocal(), Embedder: embed.NewLocal(), Log: logx.Discard()}
}

func episodes(t *testing.T, db *store.DB) []episode.Episode {
	t.Helper()
	var out []episode.Episode
	db.EachEpisode(context.Background(), func(e episode.Episode) error { out = append(out, e); return nil })
	return out
}

func TestOfflineIngest(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	addTurns(t, db, "/src/billing", []turn{
		{"s1", "I prefer table-driven tests and never use testify", "Noted: table-driven tests, no testify."},
		{"s1", "please add a health endpoint to internal/api/health.go", "Added internal/api/health.go with a /healthz handler."},
		{"s1", "ok", "Anything else?"},
		{"s2", "please add a health endpoint to internal/api/health.go", "Added internal/api/health.go with a /healthz handler."},
		{"s2", "Please add a health endpoint to internal/api/health.go ", "Added internal/api/health.go with a /healthz handler."},
	})
	st, err := pipeline(db, extract.NewLocal()).Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Captures != 5 || st.Episodes != 2 || st.Merged != 2 || st.Skipped != 1 {
		t.Fatalf("stats %+v", st)
	}
	eps := episodes(t, db)
	var pref, health episode.Episode
	for _, e := range eps {
		if strings.Contains(e.Summary, "testify") {
			pref = e
		} else {
			health = e
		}
	}
	if pref.Scope != episode.ScopeGlobal || pref.Type != episode.TypePreference || len(pref.Signals) == 0 {
		t.Errorf("preference episode: scope %s type %s signals %v", pref.Scope, pref.Type, pref.Signals)
	}
	if health.Scope != episode.ScopeProject || health.ProjectPath != "/src/billing" || health.Project != "billing" {
		t.Errorf("project episode: %+v", health)
	}
	// The identical exchange of session s2 merged into the s1 episode.
	if strings.Join(health.SessionIDs, ",") != "s1,s2" {
		t.Errorf("merged sessions: %v", health.SessionIDs)
	}
	if health.Embedder != embed.NewLocal().Name() || len(health.Embedding) != embed.LocalDim || !strings.HasPrefix(health.ID, "ep_") {
		t.Errorf("episode vector/id: %s %d %s", health.Embedder, len(health.Embedding), health.ID)
	}
	// A second run finds nothing to do.
	if st, _ := pipeline(db, extract.NewLocal()).Run(ctx); st.Captures != 0 {
		t.Errorf("second run: %+v", st)
	}
}

// llmReply answers the extractor's chat request with a valid record.
func llmReply(r *openaistub.Request) openaistub.Reply {
	user := r.User()
	if strings.Contains(user, "FAIL-ME") {
		return openaistub.ServerError()
	}
	if strings.Contains(user, "GARBLE") {
		return openaistub.Content("this is not json")
	}
	return openaistub.JSON(map[string]any{
		"skip": false, "summary": "LLM summary: " + strings.Fields(user)[len(strings.Fields(user))/2],
		"type": "decision", "importance": 0.7, "scope": "project",
		"entities": []string{"internal/api"}, "signals": []any{},
	})
}

// topics make test exchanges distinct enough not to be near-duplicates.
var topics = []string{"redis cache eviction policy", "postgres connection pool size", "grpc deadline propagation",
	"docker image layer caching", "kafka consumer group rebalancing", "terraform state locking", "oauth refresh token rotation",
	"prometheus histogram buckets", "s3 multipart upload retries", "websocket heartbeat interval"}

func TestLLMIngestFallsBackPerCapture(t *testing.T) {
	ctx := context.Background()
	srv := openaistub.Start(t, openaistub.Options{Chat: llmReply})
	db := openDB(t)
	var turns []turn
	for i := 0; i < 6; i++ {
		u := "decide on the " + topics[i] + " for the api"
		switch i {
		case 2:
			u += " FAIL-ME"
		case 4:
			u += " GARBLE"
		}
		turns = append(turns, turn{"s1", u, fmt.Sprintf("We will use option %d.", i)})
	}
	addTurns(t, db, "/src/api", turns)
	client := llm.New(llm.Config{BaseURL: srv.BaseURL(), Model: "gpt-4.1-mini", MaxRetries: 1, BackoffBase: time.Millisecond, Concurrency: 2})
	p := pipeline(db, extract.NewLLM(client, "gpt-4.1-mini"))
	p.Concurrency = 2
	st, err := p.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Episodes != 6 || st.Fallbacks != 2 || st.Failed != 0 {
		t.Fatalf("stats %+v", st)
	}
	by := map[string]int{}
	for _, e := range episodes(t, db) {
		by[e.Extractor]++
	}
	if by["llm:gpt-4.1-mini"] != 4 || by["local"] != 2 {
		t.Errorf("extractors used: %v", by)
	}
	if srv.MaxInFlight() > 2 {
		t.Errorf("%d requests in flight, bound is 2", srv.MaxInFlight())
	}
}

// With a budget of 3 calls, the rest of the cycle falls back to the local
// extractor; nothing is lost and nothing is retried forever.
func TestLLMBudgetRunsOutMidCycle(t *testing.T) {
	ctx := context.Background()
	srv := openaistub.Start(t, openaistub.Options{Chat: llmReply})
	db := openDB(t)
	var turns []turn
	for i := 0; i < 10; i++ {
		turns = append(turns, turn{"s1", "we decided on the " + topics[i], "Done."})
	}
	addTurns(t, db, "/src/api", turns)
	client := llm.New(llm.Config{BaseURL: srv.BaseURL(), Model: "m", MaxCalls: 3, Concurrency: 1})
	st, err := pipeline(db, extract.NewLLM(client, "m")).Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Episodes != 10 || st.Fallbacks != 7 {
		t.Errorf("stats %+v", st)
	}
	if n := len(srv.ChatRequests()); n != 3 {
		t.Errorf("%d requests reached the model, budget 3", n)
	}
}

// A capture that keeps failing (no fallback) is retried, then marked failed.
func TestFailingCaptureIsMarkedFailed(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	addTurns(t, db, "/p", []turn{{"s1", "something worth keeping about the deploy", "ok"}})
	p := &Pipeline{DB: db, Extractor: failing{}, Embedder: embed.NewLocal(), Log: logx.Discard()}
	for i := 0; i < store.MaxAttempts; i++ {
		if _, err := p.Run(ctx); err != nil {
			t.Fatal(err)
		}
	}
	counts, _ := db.CaptureCounts(ctx)
	if counts[store.CaptureFailed] != 1 {
		t.Errorf("counts %v", counts)
	}
}

type failing struct{}

func (failing) Name() string { return "failing" }
func (failing) Extract(context.Context, extract.Input) (extract.Draft, error) {
	return extract.Draft{}, fmt.Errorf("model unavailable")
}

// Continuation captures (the late tail of a turn) join the turn's episode.
func TestContinuationJoinsEpisode(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	caps := []store.Capture{
		{ByteStart: 0, ByteEnd: 100, TurnAt: time.Now(), Content: "User: migrate the users table to uuid keys\n\nAssistant: Starting the migration.",
			ContentHash: "a", TranscriptPath: "/t/s.jsonl", ProjectPath: "/p", Source: "stop"},
		{ByteStart: 100, ByteEnd: 200, TurnAt: time.Now(), Content: "Assistant used Bash: go run ./cmd/migrate\n\nTool result (Bash): migrated 120 rows",
			ContentHash: "b", TranscriptPath: "/t/s.jsonl", ProjectPath: "/p", Source: "sweep", Continuation: true},
	}
	if _, err := db.CommitCaptures(ctx, store.CaptureCommit{Session: store.Session{ID: "s", TranscriptPath: "/t/s.jsonl", Offset: 200}, Captures: caps}); err != nil {
		t.Fatal(err)
	}
	st, err := pipeline(db, extract.NewLocal()).Run(ctx)
	if err != nil || st.Episodes != 1 || st.Merged != 1 {
		t.Fatalf("stats %+v err %v", st, err)
	}
	eps := episodes(t, db)
	if !strings.Contains(eps[0].Context, "migrated 120 rows") {
		t.Errorf("continuation not joined: %q", eps[0].Context)
	}
}

// A continuation joins the nearest turn before it, also when that turn is
// still pending in the same batch and an older turn of the session is done:
// the tail of turn 2 belongs to turn 2, not to turn 1.
func TestContinuationJoinsNearestTurnInBatch(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	sess := store.Session{ID: "s", TranscriptPath: "/t/s.jsonl", Offset: 100}
	turn1 := store.Capture{ByteStart: 0, ByteEnd: 100, TurnAt: time.Now(), Content: "User: rename the billing module to invoices\n\nAssistant: Renamed it.",
		ContentHash: "a", TranscriptPath: "/t/s.jsonl", ProjectPath: "/p", Source: "stop"}
	if _, err := db.CommitCaptures(ctx, store.CaptureCommit{Session: sess, Captures: []store.Capture{turn1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := pipeline(db, extract.NewLocal()).Run(ctx); err != nil {
		t.Fatal(err)
	}
	later := []store.Capture{
		{ByteStart: 100, ByteEnd: 200, TurnAt: time.Now(), Content: "User: add a retry to the webhook sender\n\nAssistant: Added the retry.",
			ContentHash: "b", TranscriptPath: "/t/s.jsonl", ProjectPath: "/p", Source: "stop"},
		{ByteStart: 200, ByteEnd: 300, TurnAt: time.Now(), Content: "Assistant used Bash: go test ./webhook\n\nTool result (Bash): ok webhook 0.2s",
			ContentHash: "c", TranscriptPath: "/t/s.jsonl", ProjectPath: "/p", Source: "sweep", Continuation: true},
	}
	sess.Offset = 300
	if _, err := db.CommitCaptures(ctx, store.CaptureCommit{From: 100, Session: sess, Captures: later}); err != nil {
		t.Fatal(err)
	}
	if _, err := pipeline(db, extract.NewLocal()).Run(ctx); err != nil {
		t.Fatal(err)
	}
	for _, ep := range episodes(t, db) {
		if strings.Contains(ep.Context, "ok webhook") != strings.Contains(ep.Context, "webhook sender") {
			t.Errorf("the tail of the webhook turn joined the wrong episode: %q", ep.Context)
		}
	}
}

// BenchmarkIngest10k reports offline ingest throughput and peak heap for
// 10,000 captures. Target: ≥ 2,000 episodes/s.
func BenchmarkIngest10k(b *testing.B) {
	ctx := context.Background()
	const n = 10_000
	// A developer's vocabulary: a few common words and a long tail, so that
	// exchanges share words without being near-duplicates.
	words := strings.Fields(`cache router handler schema migration tenant invoice billing deploy test lint build docker
		postgres redis queue worker retry timeout config secret token session user project module package release
		kafka grpc protobuf middleware logger metrics tracing span exporter dashboard alert runbook pager oncall
		terraform helm chart ingress service account role binding namespace volume claim secretstore vault
		webhook callback signature payload serializer parser lexer token stream buffer channel mutex goroutine
		context deadline cancel select ticker timer backoff jitter circuit breaker bulkhead limiter bucket
		index btree hash partition shard replica leader follower quorum raft snapshot compaction wal checkpoint
		react vite component hook state reducer store selector query mutation cache invalidation suspense
		css flexbox grid theme token palette typography spacing breakpoint layout modal drawer tooltip
		auth oauth oidc saml jwt refresh scope consent session cookie csrf cors header preflight origin
		upload download multipart chunk resume checksum etag range compression gzip brotli zstd archive
		cron schedule job batch pipeline stage artifact cache runner matrix workflow secret environment`)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		db := openDB(b)
		var turns []turn
		for k := 0; k < n; k++ {
			w := func(j int) string { return words[(k*k*31+k*7+j*j*13+j*101)%len(words)] }
			turns = append(turns, turn{fmt.Sprintf("s%d", k/50),
				fmt.Sprintf("please update the %s %s in internal/%s/%s_%d.go so that the %s uses the %s", w(1), w(2), w(3), w(4), k, w(5), w(6)),
				fmt.Sprintf("Updated internal/%s/%s_%d.go; the %s now goes through the %s and go test ./... passes.", w(3), w(4), k, w(5), w(7))})
		}
		addTurns(b, db, "/src/app", turns)
		runtime.GC()
		var peak atomic.Uint64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // sample the live heap while ingest runs
			defer wg.Done()
			s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
			for {
				metrics.Read(s)
				if v := s[0].Value.Uint64(); v > peak.Load() {
					peak.Store(v)
				}
				select {
				case <-stop:
					return
				case <-time.After(5 * time.Millisecond):
				}
			}
		}()
		b.StartTimer()
		start, cpu0 := time.Now(), cpuTime()
		st, err := pipeline(db, extract.NewLocal()).Run(ctx)
		elapsed, cpu := time.Since(start), cpuTime()-cpu0
		b.StopTimer()
		close(stop)
		wg.Wait()
		if err != nil || st.Captures != n {
			b.Fatalf("stats %+v err %v", st, err)
		}
		b.ReportMetric(float64(st.Episodes+st.Merged)/elapsed.Seconds(), "episodes/s")
		// On a shared machine wall time measures the neighbours; CPU time
		// (user + system of this process) measures the work.
		b.ReportMetric(float64(st.Episodes+st.Merged)/cpu.Seconds(), "episodes/cpu-s")
		b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// A batching extractor handles 4 captures per call: 10 captures take 3
// calls; a capture the reply has no record for, and every capture of a
// call that fails, fall back to the local extractor one by one.
func TestBatchedExtraction(t *testing.T) {
	ctx := context.Background()
	srv := openaistub.Start(t, openaistub.Options{Chat: func(r *openaistub.Request) openaistub.Reply {
		user := r.User()
		if strings.Contains(user, "FAIL-ME") {
			return openaistub.ServerError()
		}
		var recs []any
		for n := 1; strings.Contains(user, fmt.Sprintf("Exchange %d", n)); n++ {
			if strings.Contains(user, fmt.Sprintf("Exchange %d (project api):\n<transcript>\nUser: SKIP-RECORD", n)) {
				continue
			}
			recs = append(recs, map[string]any{"exchange": n, "skip": false, "summary": fmt.Sprintf("Batched summary %d.", n),
				"type": "decision", "importance": 0.7, "scope": "project", "entities": []string{}, "signals": []any{}})
		}
		return openaistub.JSON(map[string]any{"records": recs})
	}})
	db := openDB(t)
	var turns []turn
	for i := 0; i < 10; i++ {
		u := "we decided on the " + topics[i]
		switch i {
		case 1:
			u = "SKIP-RECORD " + u
		case 9:
			u += " FAIL-ME"
		}
		turns = append(turns, turn{"s1", u, "Done."})
	}
	addTurns(t, db, "/src/api", turns)
	client := llm.New(llm.Config{BaseURL: srv.BaseURL(), Model: "m", MaxRetries: -1, Concurrency: 1})
	st, err := pipeline(db, extract.NewLLM(client, "m").WithBatch(4)).Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(srv.ChatRequests()); n != 3 {
		t.Errorf("%d calls for 10 captures in batches of 4, want 3", n)
	}
	// Item 2 has no record; items 9 and 10 were in the failed call.
	if st.Episodes != 10 || st.Fallbacks != 3 || st.Failed != 0 {
		t.Errorf("stats %+v", st)
	}
	by := map[string]int{}
	for _, e := range episodes(t, db) {
		by[e.Extractor]++
	}
	if by["llm:m"] != 7 || by["local"] != 3 {
		t.Errorf("extractors used: %v", by)
	}
}
