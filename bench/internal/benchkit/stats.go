package benchkit

import (
	"math"
	"sort"
)

// Dist summarises a sample of values.
type Dist struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	Max  float64 `json:"max"`
}

// NewDist summarises v (the zero Dist when v is empty).
func NewDist(v []float64) Dist {
	if len(v) == 0 {
		return Dist{}
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return Dist{Mean: Mean(s), P50: Percentile(s, 0.50), P95: Percentile(s, 0.95), Max: s[len(s)-1]}
}

// Mean of v (0 when empty).
func Mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	t := 0.0
	for _, x := range v {
		t += x
	}
	return t / float64(len(v))
}

// Percentile of sorted values, nearest rank.
func Percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// Share is n/d (0 when d is 0).
func Share(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}
