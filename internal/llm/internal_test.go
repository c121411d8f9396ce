package llm

import (
	"net/http"
	"testing"
	"time"
)

func TestRetryAfterHeader(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{}, 0},
		{http.Header{"Retry-After": {"2"}}, 2 * time.Second},
		{http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond},
		{http.Header{"Retry-After": {"-3"}}, 0},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{"Retry-After": {now.Add(7 * time.Second).Format(http.TimeFormat)}}, 7 * time.Second},
		{http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, 0},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond},
		{http.Header{"Retry-After": {"1e300"}}, 86400 * time.Second},
	} {
		if got := retryAfter(tc.h, now); got != tc.want {
			t.Errorf("retryAfter(%v)=%v, want %v", tc.h, got, tc.want)
		}
	}
}

func TestBackoff(t *testing.T) {
	c := New(Config{BackoffBase: 100 * time.Millisecond})
	for n, base := range []time.Duration{100, 200, 400, 800} {
		base *= time.Millisecond
		for range 50 {
			if d := c.backoff(n); d < base/2 || d > base {
				t.Fatalf("backoff(%d)=%v, want in [%v, %v]", n, d, base/2, base)
			}
		}
	}
	if d := c.backoff(40); d > maxBackoff || d < maxBackoff/2 {
		t.Errorf("backoff(40)=%v, want capped at %v", d, maxBackoff)
	}
}

func TestStripFence(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":1}`:                 `{"a":1}`,
		"```json\n{\"a\":1}\n```": `{"a":1}`,
		"```\n{\"a\":1}\n```":     `{"a":1}`,
		"```{\"a\":1}```":         `{"a":1}`,
		"  {\"a\":1}\n":           `{"a":1}`,
	} {
		if got := stripFence(in); got != want {
			t.Errorf("stripFence(%q)=%q, want %q", in, got, want)
		}
	}
}

func TestSchemaName(t *testing.T) {
	for in, want := range map[string]string{"": "reply", "episode extraction!": "episode_extraction_", "ok-1_a": "ok-1_a"} {
		if got := schemaName(in); got != want {
			t.Errorf("schemaName(%q)=%q, want %q", in, got, want)
		}
	}
}
