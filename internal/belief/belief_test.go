package belief

import (
	"math"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestConfidence(t *testing.T) {
	for _, tt := range []struct{ a, b, want float64 }{
		{1, 1, 0.5}, {11, 1, 11.0 / 12}, {11, 4, 11.0 / 15}, {2, 2, 0.5}, {0, 0, 0.5},
	} {
		if got := Confidence(tt.a, tt.b); !near(got, tt.want) {
			t.Errorf("Confidence(%v,%v)=%v want %v", tt.a, tt.b, got, tt.want)
		}
	}
	b := Belief{Alpha: 3, Beta: 1}
	if b.Confidence() != 0.75 {
		t.Errorf("method: %v", b.Confidence())
	}
}

func TestRetrievalStrength(t *testing.T) {
	if RetrievalStrength(time.Time{}, 1, t0) != 0.5 {
		t.Error("never accessed is not 0.5")
	}
	if got := RetrievalStrength(t0.Add(-24*time.Hour), 1, t0); !near(got, math.Exp(-1)) {
		t.Errorf("one day, stability 1: %v", got)
	}
	if got := RetrievalStrength(t0.Add(-48*time.Hour), 2, t0); !near(got, math.Exp(-1)) {
		t.Errorf("two days, stability 2: %v", got)
	}
	if got := RetrievalStrength(t0.Add(time.Hour), 1, t0); got != 1 {
		t.Errorf("future access: %v", got)
	}
}

func TestNextStability(t *testing.T) {
	if got := NextStability(1, t0.Add(-24*time.Hour), t0); !near(got, 1+0.1*math.Log(2)) {
		t.Errorf("after a day: %v", got)
	}
	if got := NextStability(2, time.Time{}, t0); got != 2 {
		t.Errorf("first access keeps stability: %v", got)
	}
	if got := NextStability(364, t0.Add(-1000*24*time.Hour), t0); got != 365 {
		t.Errorf("cap: %v", got)
	}
	// Longer gaps give bigger gains (spaced repetition).
	if NextStability(1, t0.Add(-240*time.Hour), t0) <= NextStability(1, t0.Add(-24*time.Hour), t0) {
		t.Error("longer gap did not give a larger stability")
	}
}

func TestDestabilizationThreshold(t *testing.T) {
	if got := DestabilizationThreshold(0, t0, t0.Add(100*24*time.Hour)); got != 0 {
		t.Errorf("no evidence: %v", got)
	}
	if got := DestabilizationThreshold(10, t0, t0); got != 0 {
		t.Errorf("brand new: %v", got)
	}
	want := 0.3 * math.Log(11) * math.Log(31)
	if got := DestabilizationThreshold(10, t0, t0.Add(30*24*time.Hour)); !near(got, want) {
		t.Errorf("10 evidence, 30 days: %v want %v", got, want)
	}
}
