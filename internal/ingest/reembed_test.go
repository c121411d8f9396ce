package ingest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/extract"
)

// recordingEmbedder gives every text a fixed vector under its name and
// records the texts, in order.
type recordingEmbedder struct{ texts []string }

func (r *recordingEmbedder) Name() string { return "minilm-test-4" }
func (r *recordingEmbedder) Dim() int     { return 4 }
func (r *recordingEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	r.texts = append(r.texts, texts...)
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{0.5, 0.5, 0.5, 0.5}
	}
	return out, nil
}

// Reembed gives every episode the new embedder's vector once, newest
// first, a batch at a time.
func TestReembedEveryEpisodeOnceNewestFirst(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	local := embed.NewLocal()
	now := time.Now()
	const n = 3*ReembedBatch + 5
	var eps []episode.Episode
	for i := range n {
		s := fmt.Sprintf("episode number %d", i)
		eps = append(eps, episode.Episode{ID: fmt.Sprintf("ep_%012d", i), Summary: s, Context: s, Type: episode.TypeEvent,
			Scope: episode.ScopeGlobal, ContentHash: s, OccurredAt: now, CreatedAt: now, UpdatedAt: now, Stability: 1,
			Embedding: local.EmbedText(s), Embedder: local.Name()})
	}
	if err := db.ImportEpisodes(ctx, eps); err != nil {
		t.Fatal(err)
	}
	emb := &recordingEmbedder{}
	var batches []int
	st, err := Reembed(ctx, db, emb, 0, func(s ReembedStats) { batches = append(batches, s.Episodes) })
	if err != nil || st.Episodes != n || st.Left != 0 {
		t.Fatalf("re-embed: %+v %v", st, err)
	}
	if want := []int{ReembedBatch, 2 * ReembedBatch, 3 * ReembedBatch, n}; !slices.Equal(batches, want) {
		t.Errorf("progress %v, want %v", batches, want)
	}
	if len(emb.texts) != n {
		t.Fatalf("%d texts embedded for %d episodes", len(emb.texts), n)
	}
	for i, text := range emb.texts {
		if want := TextFor(emb.Name(), extract.Draft{Summary: eps[n-1-i].Summary, Context: eps[n-1-i].Context}); text != want {
			t.Fatalf("text %d: %q, want %q (newest first)", i, text, want)
		}
	}
	counts, _, err := db.EmbedderCounts(ctx)
	if err != nil || counts[emb.Name()] != n {
		t.Errorf("vectors by embedder: %v %v", counts, err)
	}
	// Nothing left: nothing embedded again.
	emb.texts = nil
	if st, err := Reembed(ctx, db, emb, 0, nil); err != nil || st.Episodes != 0 || len(emb.texts) != 0 {
		t.Errorf("second re-embed: %+v %v (%d texts)", st, err, len(emb.texts))
	}
}
