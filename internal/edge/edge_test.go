package edge

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestDecayed(t *testing.T) {
	tests := []struct {
		name  string
		base  float64
		after time.Duration
		want  float64
	}{
		{"fresh", 0.9, 0, 0.9},
		{"inside the grace", 0.9, Grace - time.Millisecond, 0.9},
		{"at the grace boundary", 0.9, Grace, 0.9},
		{"just past the grace", 0.9, Grace + time.Millisecond, 0.8},
		{"one window past the grace", 0.9, Grace + Window, 0.8},
		{"just past one window", 0.9, Grace + Window + time.Millisecond, 0.7},
		{"eight windows past: 0.2 exactly, still followed", 1, Grace + 8*Window, 0.2},
		{"many windows: the floor", 1, Grace + 100*Window, Floor},
		{"under the floor already: not raised", 0.05, Grace + 3*Window, 0.05},
		{"a clock gone back: no decay", 0.9, -time.Hour, 0.9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Decayed(tt.base, t0, t0.Add(tt.after))
			if got != tt.want {
				t.Fatalf("Decayed(%v, +%v)=%v, want %v", tt.base, tt.after, got, tt.want)
			}
			if again := Decayed(tt.base, t0, t0.Add(tt.after)); again != got {
				t.Fatalf("twice at the same time: %v then %v", got, again)
			}
		})
	}
	if !Followed(Decayed(1, t0, t0.Add(Grace+8*Window))) || Followed(Decayed(1, t0, t0.Add(Grace+8*Window+time.Millisecond))) {
		t.Fatal("an edge is followed through 8 decay steps and not after the 9th")
	}
}

func TestReinforce(t *testing.T) {
	tests := []struct {
		name  string
		base  float64
		after time.Duration
		want  float64
	}{
		{"capped at 1", 1, time.Hour, 1},
		{"capped at 1 from 0.97", 0.97, time.Hour, 1},
		{"adds the delta", 0.5, time.Hour, 0.55},
		{"adds to the decayed confidence", 0.9, Grace + Window, 0.85},
		{"a floored edge gains the delta", 1, Grace + 100*Window, 0.15},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := State{Confidence: tt.base, ReinforcedConfidence: tt.base, ReinforcedAt: t0}
			now := t0.Add(tt.after)
			got := s.Reinforce(now)
			if want := (State{tt.want, tt.want, now}); got != want {
				t.Fatalf("Reinforce(%v, +%v)=%+v, want %+v", tt.base, tt.after, got, want)
			}
		})
	}
	// A late observation keeps the later reinforcement time.
	late := State{0.5, 0.5, t0.Add(time.Hour)}.Reinforce(t0)
	if late != (State{0.55, 0.55, t0.Add(time.Hour)}) {
		t.Fatalf("late observation: %+v", late)
	}
}

func TestMerge(t *testing.T) {
	weak, strong := State{0.3, 0.9, t0}, State{0.9, 0.9, t0.Add(-Window)}
	if Merge(weak, strong) != strong || Merge(strong, weak) != strong {
		t.Fatal("a merge keeps the edge of greater confidence")
	}
	later := State{0.3, 0.3, t0.Add(time.Hour)}
	if Merge(State{0.3, 0.3, t0}, later) != later {
		t.Fatal("a tie keeps the later reinforced")
	}
	if got := Merge(State{Confidence: 2, ReinforcedConfidence: 2}, weak); got.Confidence != 1 || got.ReinforcedConfidence != 1 {
		t.Fatalf("confidences are clamped: %+v", got)
	}
}
