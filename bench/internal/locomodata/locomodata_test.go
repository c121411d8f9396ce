package locomodata

import (
	"slices"
	"testing"
	"time"
)

func TestParseDate(t *testing.T) {
	for in, want := range map[string]string{
		"1:56 pm on 8 May, 2023":    "2023-05-08T13:56:00Z",
		"10:37 am on 27 June, 2023": "2023-06-27T10:37:00Z",
		"12:09 am on 1 Jan, 2024":   "2024-01-01T00:09:00Z",
		" 7:00 pm on  3 July, 2023": "2023-07-03T19:00:00Z",
	} {
		got, err := ParseDate(in)
		if err != nil || got.Format(time.RFC3339) != want {
			t.Errorf("ParseDate(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	if _, err := ParseDate("yesterday"); err == nil {
		t.Error("ParseDate accepted junk")
	}
}

func TestParseEvidence(t *testing.T) {
	for _, tc := range []struct {
		in       []string
		ids      []string
		repaired int
		skipped  int
	}{
		{[]string{"D1:3"}, []string{"D1:3"}, 0, 0},
		{[]string{"D8:6; D9:17"}, []string{"D8:6", "D9:17"}, 2, 0},
		{[]string{"D1:18", "D", "D1:20"}, []string{"D1:18", "D1:20"}, 0, 1},
		{[]string{"D:11:26", "D1:3", "D1:3"}, []string{"D11:26", "D1:3"}, 1, 0},
		{[]string{"", "x"}, nil, 0, 2},
		{nil, nil, 0, 0},
	} {
		p := ParseEvidence(tc.in)
		if !slices.Equal(p.IDs, tc.ids) || p.Repaired != tc.repaired || len(p.Skipped) != tc.skipped {
			t.Errorf("ParseEvidence(%q) = %+v; want ids %q repaired %d skipped %d", tc.in, p, tc.ids, tc.repaired, tc.skipped)
		}
	}
}
