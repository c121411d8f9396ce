package recall

import (
	"fmt"
	"testing"
)

func TestBloom(t *testing.T) {
	const n = 20000
	b := NewBloom(n)
	for i := range n {
		b.Add(stemHash(fmt.Appendf(nil, "term%d", i)))
	}
	for i := range n {
		if !b.MayHold(stemHash(fmt.Appendf(nil, "term%d", i))) {
			t.Fatalf("term%d added but not held", i)
		}
	}
	fp := 0
	for i := range n {
		if b.MayHold(stemHash(fmt.Appendf(nil, "other%d", i))) {
			fp++
		}
	}
	want := bloomRate(b, n)
	if rate := float64(fp) / n; rate > 2*want || want > 0.02 {
		t.Errorf("false positives %.4f, expected about %.4f", rate, want)
	}
	var none *Bloom
	if !none.MayHold(1) || !mayHold(nil, 7, 1) {
		t.Error("no filter must hold everything")
	}
}
