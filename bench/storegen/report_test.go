package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPercentile(t *testing.T) {
	xs := make([]float64, 200)
	for i := range xs {
		xs[i] = float64(200 - i) // 200 .. 1, unsorted input
	}
	if got := percentile(xs, 0.99); got != 198 {
		t.Errorf("p99 of 1..200 = %v, want 198 (nearest rank)", got)
	}
	if got := percentile(xs, 0.5); got != 100 {
		t.Errorf("p50 of 1..200 = %v, want 100", got)
	}
	if got := percentile([]float64{7}, 0.99); got != 7 {
		t.Errorf("one value: %v", got)
	}
	if got := percentile(nil, 0.99); got != 0 {
		t.Errorf("none: %v", got)
	}
}

// The report's p99 pools every run of a case over the rounds and compares
// it with the baseline's median; the verdict follows -p99-target.
func TestReportP99(t *testing.T) {
	raw := t.TempDir()
	write := func(name string, ms ...float64) {
		var b strings.Builder
		for _, m := range ms {
			fmt.Fprintf(&b, "%d\n", int64(m*1e6))
		}
		if err := os.WriteFile(filepath.Join(raw, name), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for r := 1; r <= 2; r++ {
		if err := os.MkdirAll(filepath.Join(raw, fmt.Sprintf("round%d", r)), 0o755); err != nil {
			t.Fatal(err)
		}
		hook := make([]float64, 100)
		for i := range hook {
			hook[i] = 10
		}
		if r == 2 {
			hook[99], hook[98], hook[97] = 50, 40, 35 // the slow tail, in one round
		}
		write(fmt.Sprintf("round%d/1k.rare.txt", r), hook...)
		write(fmt.Sprintf("round%d/1k.rare.baseline.txt", r), 1, 1, 1)
	}
	out := filepath.Join(t.TempDir(), "report.json")
	stdout := os.Stdout
	devnull, _ := os.Open(os.DevNull)
	os.Stdout = devnull
	err := report([]string{"-raw", raw, "-out", out, "-sizes", "1k", "-kinds", "rare", "-p99-target", "30"})
	os.Stdout = stdout
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Rows []struct {
			MedianMS float64 `json:"median_ms"`
			P99MS    float64 `json:"p99_ms"`
			P99Ratio float64 `json:"p99_ratio_to_baseline"`
		} `json:"rows"`
		Verdicts []struct {
			P99Met *bool `json:"p99_met"`
		} `json:"verdicts"`
	}
	if err := json.Unmarshal(b, &rep); err != nil || len(rep.Rows) != 1 || len(rep.Verdicts) != 1 {
		t.Fatalf("report %s: %v", b, err)
	}
	// 200 runs: the 198th smallest is 35 ms, against a 1 ms baseline.
	r := rep.Rows[0]
	if r.MedianMS < 9.99 || r.MedianMS > 10.01 || r.P99MS < 34.99 || r.P99MS > 35.01 || r.P99Ratio < 34.9 || r.P99Ratio > 35.1 {
		t.Errorf("median %.3f ms, p99 %.3f ms (%.2fx), want 10, 35 (35x)", r.MedianMS, r.P99MS, r.P99Ratio)
	}
	if v := rep.Verdicts[0].P99Met; v == nil || *v {
		t.Errorf("p99 35x against a 30x target: met %v", v)
	}
}
