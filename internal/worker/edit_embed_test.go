package worker

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/consolidate"
	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/embed/minilm"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/review"
	"github.com/engram-memory/engram/internal/store"
)

const (
	editOld = "The billing service deploys to Fly.io"
	editNew = "Invoices are stored in a PostgreSQL database"
	// editParaphrase says editNew again in other words.
	editParaphrase = "We keep the invoice records in Postgres"
)

// importBelief stores one global belief with the given vector, denied
// (the level whose paraphrase matching matters most).
func importBelief(t *testing.T, db *store.DB, id, statement string, vec []float32, embedder string) {
	t.Helper()
	ctx := context.Background()
	at := time.Now().Add(-48 * time.Hour)
	b := belief.Belief{ID: id, Statement: statement, Scope: episode.ScopeGlobal, Alpha: 5, Beta: 1,
		Status: belief.StatusActive, EvidenceCount: 4, Stability: 1, PeakConfidence: 0.8, Embedding: vec, Embedder: embedder,
		CreatedAt: at, UpdatedAt: at, LastReinforcedAt: at}
	if err := db.ImportBeliefs(ctx, []belief.Belief{b}); err != nil {
		t.Fatal(err)
	}
	err := db.Decide(ctx, []store.Decision{{BeliefID: id, Decision: review.Deny, Who: review.ByUser, At: at,
		Before: store.LevelPending, After: store.LevelDenied}})
	if err != nil {
		t.Fatal(err)
	}
}

func storedVector(t *testing.T, db *store.DB, id string) (vec []float32, embedder, statement string) {
	t.Helper()
	err := db.Beliefs(context.Background(), func(tx *store.BeliefTx) error {
		b, err := tx.Get(id)
		vec, embedder, statement = b.Embedding, b.Embedder, b.Statement
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return vec, embedder, statement
}

func embedOne(t *testing.T, emb embed.Embedder, text string) []float32 {
	t.Helper()
	vs, err := emb.Embed(context.Background(), []string{text})
	if err != nil {
		t.Fatal(err)
	}
	return vs[0]
}

// TestEditReembedsStatement: a statement edited in review gets the vector
// of its new words from the configured sentence embedder at once, so that
// a paraphrase of the new statement matches the belief (and one of the
// old no longer does); an edit made without the embedder at hand leaves
// no vector, and the next cycle's re-embedding gives it the right one.
func TestEditReembedsStatement(t *testing.T) {
	src := publishedModel(t)
	cfg := testConfig(t)
	ctx := context.Background()
	if err := InstallModel(cfg, src, true); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(ctx, cfg.DBPath(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	emb, done := StatementEmbedder(cfg)
	defer done()
	if emb == nil || emb.Name() != minilm.Name {
		t.Fatalf("the review's embedder is %v, want the installed sentence embedder", emb)
	}
	const id = "bl_0000000e0001"
	oldVec := embedOne(t, emb, editOld)
	importBelief(t, db, id, editOld, oldVec, emb.Name())

	para := embedOne(t, emb, editParaphrase)
	before := embed.Cosine(para, oldVec)
	if before > consolidate.MatchSimilarity {
		t.Fatalf("the paraphrase matches the old statement already (%.3f): the test shows nothing", before)
	}
	_, err = review.DecideAndWrite(ctx, db, review.CoreOptions{Embedder: emb}, review.ByUser,
		[]review.Request{{ID: id, Action: review.Edit, Statement: editNew}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	vec, embedder, statement := storedVector(t, db, id)
	if statement != editNew || embedder != minilm.Name || !slices.Equal(vec, embedOne(t, emb, editNew)) {
		t.Fatalf("after the edit: %q embedded by %q (%d dims), want %q with the new statement's vector", statement, embedder, len(vec), editNew)
	}
	after := embed.Cosine(para, vec)
	t.Logf("cosine of %q with the belief: %.3f before the edit, %.3f after (match above %.2f)", editParaphrase, before, after,
		consolidate.MatchSimilarity)
	if after <= consolidate.MatchSimilarity {
		t.Fatalf("the paraphrase does not match the edited statement: cosine %.3f", after)
	}
	if c := embed.Cosine(embedOne(t, emb, "Deploys of the billing service go to Fly.io"), vec); c > consolidate.MatchSimilarity {
		t.Fatalf("a paraphrase of the old statement still matches the edited belief: cosine %.3f", c)
	}

	// Without the embedder (a remote one is configured): no vector is
	// kept, not the old statement's; the next cycle's re-embedding gives
	// the new one.
	_, err = review.DecideAndWrite(ctx, db, review.CoreOptions{}, review.ByUser,
		[]review.Request{{ID: id, Action: review.Edit, Statement: editOld}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if vec, embedder, _ := storedVector(t, db, id); len(vec) != 0 || embedder != "" {
		t.Fatalf("an edit without an embedder kept a vector of %q (%d dims)", embedder, len(vec))
	}
	comp, err := NewComponents(ctx, cfg, discard())
	if err != nil {
		t.Fatal(err)
	}
	defer comp.Close()
	st, err := Cycle(ctx, cfg, db, comp, discard())
	if err != nil {
		t.Fatal(err)
	}
	vec, embedder, _ = storedVector(t, db, id)
	if st.Reembed.Beliefs != 1 || embedder != minilm.Name || !slices.Equal(vec, oldVec) {
		t.Fatalf("after a cycle: %d beliefs re-embedded, vector of %q; want the statement's vector of %s", st.Reembed.Beliefs, embedder, minilm.Name)
	}
}

// TestEditEmbeddedByLexicalCycle: with the lexical embedder configured, a
// cycle gives a belief edited without a vector the lexical one.
func TestEditEmbeddedByLexicalCycle(t *testing.T) {
	cfg := testConfig(t)
	cfg.SentenceEmbedder = false
	ctx := context.Background()
	db, err := store.Open(ctx, cfg.DBPath(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	local := embed.NewLocal()
	emb, done := StatementEmbedder(cfg)
	defer done()
	if emb == nil || emb.Name() != local.Name() {
		t.Fatalf("without the sentence embedder the review's embedder is %v, want the lexical one", emb)
	}
	const id = "bl_0000000e0002"
	importBelief(t, db, id, editOld, local.EmbedText(editOld), local.Name())
	_, err = review.DecideAndWrite(ctx, db, review.CoreOptions{}, review.ByUser,
		[]review.Request{{ID: id, Action: review.Edit, Statement: editNew}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if vec, _, _ := storedVector(t, db, id); len(vec) != 0 {
		t.Fatal("the old statement's vector survived the edit")
	}
	comp, err := NewComponents(ctx, cfg, discard())
	if err != nil {
		t.Fatal(err)
	}
	defer comp.Close()
	st, err := Cycle(ctx, cfg, db, comp, discard())
	if err != nil {
		t.Fatal(err)
	}
	vec, embedder, _ := storedVector(t, db, id)
	if st.Reembed.Beliefs != 1 || embedder != local.Name() || !slices.Equal(vec, local.EmbedText(editNew)) {
		t.Fatalf("after a cycle: %d embedded, vector of %q, want the new statement's lexical vector", st.Reembed.Beliefs, embedder)
	}
	// Nothing left: the next cycle embeds nothing.
	if st, err := Cycle(ctx, cfg, db, comp, discard()); err != nil || st.Reembed.Beliefs != 0 {
		t.Fatalf("second cycle: %d embedded, %v", st.Reembed.Beliefs, err)
	}
}
