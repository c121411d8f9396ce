package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// Labels: a person labels bites of what was injected. The unit is one bite
// (one "[Memory …]" or "[Belief …]" line of an injection), one JSON object
// per line:
//
//	{"id":"12.1","time":"…","session":"…","prompt":"…","bite":"…","label":""}
//
// with label one of useful, noise or stale ("" or absent: not labelled yet;
// anything else is counted as other).
const (
	LabelUseful = "useful"
	LabelNoise  = "noise"
	LabelStale  = "stale"
)

// LabelItem is one bite to label.
type LabelItem struct {
	ID      string    `json:"id"` // <injection n>.<bite, 1-based>
	Time    time.Time `json:"time"`
	Session string    `json:"session"`
	Prompt  string    `json:"prompt"`
	Bite    string    `json:"bite"`
	Label   string    `json:"label"`
	Note    string    `json:"note,omitempty"`
}

// SampleBites draws n bites (all when n <= 0 or fewer exist) of the
// injections, reproducibly for one seed, in the replay's order.
func SampleBites(injections []Injection, n int, seed uint64) []LabelItem {
	var all []LabelItem
	for _, inj := range injections {
		bites := inj.Bites
		if len(bites) == 0 && inj.Context != "" {
			bites = []string{inj.Context} // a context without bite lines is labelled whole
		}
		for i, b := range bites {
			all = append(all, LabelItem{ID: fmt.Sprintf("%d.%d", inj.N, i+1), Time: inj.Time, Session: inj.Session,
				Prompt: inj.Prompt, Bite: b})
		}
	}
	if n <= 0 || n >= len(all) {
		return all
	}
	rng := rand.New(rand.NewPCG(seed, 0x656e6772616d))
	idx := rng.Perm(len(all))[:n]
	slices.Sort(idx)
	out := make([]LabelItem, 0, n)
	for _, i := range idx {
		out = append(out, all[i])
	}
	return out
}

// ReadInjections reads an injections file the replay wrote.
func ReadInjections(r io.Reader) ([]Injection, error) {
	var out []Injection
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var inj Injection
		if err := json.Unmarshal(sc.Bytes(), &inj); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		out = append(out, inj)
	}
	return out, sc.Err()
}

// LabelSummary is the share of each label among the labelled bites.
type LabelSummary struct {
	Bites       int            `json:"bites"`    // lines read
	Labelled    int            `json:"labelled"` // with a label
	Counts      map[string]int `json:"counts"`
	ShareUseful float64        `json:"share_useful"`
	ShareNoise  float64        `json:"share_noise"`
	ShareStale  float64        `json:"share_stale"`
	ShareOther  float64        `json:"share_other"`
	// Prompts with at least one labelled bite, and how many of them got at
	// least one useful one.
	Prompts       int `json:"prompts"`
	PromptsUseful int `json:"prompts_with_a_useful_bite"`
}

// SummariseLabels reads a label file (see LabelItem).
func SummariseLabels(r io.Reader) (LabelSummary, error) {
	s := LabelSummary{Counts: map[string]int{}}
	useful := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var it LabelItem
		if err := json.Unmarshal(sc.Bytes(), &it); err != nil {
			return s, fmt.Errorf("line %d: %w", n, err)
		}
		s.Bites++
		label := strings.ToLower(strings.TrimSpace(it.Label))
		if label == "" {
			continue
		}
		s.Labelled++
		switch label {
		case LabelUseful, LabelNoise, LabelStale:
		default:
			label = "other"
		}
		s.Counts[label]++
		prompt, _, _ := strings.Cut(it.ID, ".")
		if prompt == "" || prompt == it.ID {
			prompt = it.Session + "\x00" + it.Prompt
		}
		useful[prompt] = useful[prompt] || label == LabelUseful
	}
	if err := sc.Err(); err != nil {
		return s, err
	}
	share := func(k string) float64 {
		if s.Labelled == 0 {
			return 0
		}
		return float64(s.Counts[k]) / float64(s.Labelled)
	}
	s.ShareUseful, s.ShareNoise, s.ShareStale, s.ShareOther = share(LabelUseful), share(LabelNoise), share(LabelStale), share("other")
	s.Prompts = len(useful)
	for _, u := range useful {
		if u {
			s.PromptsUseful++
		}
	}
	return s, nil
}

// Print writes the summary for a person.
func (s LabelSummary) Print(w io.Writer) {
	fmt.Fprintf(w, "labelled bites: %d of %d\n", s.Labelled, s.Bites)
	fmt.Fprintf(w, "useful %.1f%% (%d), noise %.1f%% (%d), stale %.1f%% (%d), other %.1f%% (%d)\n",
		100*s.ShareUseful, s.Counts[LabelUseful], 100*s.ShareNoise, s.Counts[LabelNoise],
		100*s.ShareStale, s.Counts[LabelStale], 100*s.ShareOther, s.Counts["other"])
	fmt.Fprintf(w, "prompts with a labelled bite: %d, with at least one useful: %d\n", s.Prompts, s.PromptsUseful)
}
