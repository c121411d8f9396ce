package ingest

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/engram-memory/engram/internal/embed"
)

// The signature filter must never hide a near-duplicate: every pair at or
// above the dedup threshold passes it, and most unrelated pairs do not.
func TestSignatureFilterKeepsNearDuplicates(t *testing.T) {
	l := embed.NewLocal()
	rng := rand.New(rand.NewSource(1))
	vocab := strings.Fields(`cache router handler schema migration tenant invoice billing deploy test lint build docker
		postgres redis queue worker retry timeout config secret token session user project module package release kafka
		grpc protobuf middleware logger metrics tracing span exporter dashboard alert runbook oncall terraform helm chart`)
	sentence := func(n int) []string {
		w := make([]string, n)
		for i := range w {
			w[i] = vocab[rng.Intn(len(vocab))]
		}
		return w
	}
	near, passedUnrelated, unrelated := 0, 0, 0
	for i := 0; i < 400; i++ {
		a := sentence(10 + rng.Intn(30))
		b := append([]string{}, a...)
		b[rng.Intn(len(b))] = vocab[rng.Intn(len(vocab))] // one word changed
		va, vb := l.EmbedText(strings.Join(a, " ")), l.EmbedText(strings.Join(b, " "))
		if dot(va, vb) >= 0.95 {
			near++
			if !mayBeNear(signatureOf(va), signatureOf(vb)) {
				t.Fatalf("near-duplicate (cos %.3f) filtered out:\n%s\n%s", dot(va, vb), strings.Join(a, " "), strings.Join(b, " "))
			}
		}
		vc := l.EmbedText(strings.Join(sentence(10+rng.Intn(30)), " "))
		if dot(va, vc) < 0.5 {
			unrelated++
			if mayBeNear(signatureOf(va), signatureOf(vc)) {
				passedUnrelated++
			}
		}
	}
	if near < 50 {
		t.Fatalf("only %d near-duplicate pairs generated", near)
	}
	if share := float64(passedUnrelated) / float64(unrelated); share > 0.2 {
		t.Errorf("filter lets %.0f%% of unrelated pairs through", 100*share)
	}
	t.Log(fmt.Sprintf("%d near-duplicates kept; %d/%d unrelated pairs passed the filter", near, passedUnrelated, unrelated))
}
