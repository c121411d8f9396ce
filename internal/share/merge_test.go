package share

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/belief"
)

// The belief join is a semilattice join: every grouping and order of the
// same versions gives the same result, so machines that exchange versions
// in any order end equal.
func TestJoinBeliefsConverges(t *testing.T) {
	base := time.UnixMilli(1_700_000_000_000).UTC()
	vs := []sharedBelief{
		{ID: "bl_1", Statement: "Deploys to fly.io.", Status: belief.StatusActive, Timeframe: belief.TimeCurrent, UpdatedAt: 10, CreatedAt: 5,
			Children: []string{}, Revisions: []belief.Revision{}},
		{ID: "bl_1", Statement: "Deploys to fly.io.", Status: belief.StatusActive, Timeframe: belief.TimeCurrent, UpdatedAt: 30, CreatedAt: 5,
			LastReinforced: 30, Children: []string{}, Revisions: []belief.Revision{}},
		{ID: "bl_1", Statement: "Deploys to fly.io.", Status: belief.StatusRevised, Timeframe: belief.TimePast, UpdatedAt: 20, CreatedAt: 5,
			Children: []string{"bl_2"}, Revisions: []belief.Revision{{Timestamp: base, OldStatement: "Deploys to fly.io.", Reason: "corrected"}}},
		{ID: "bl_1", Statement: "Deploys to fly.io.", Status: belief.StatusArchived, Timeframe: belief.TimeCurrent, UpdatedAt: 40, CreatedAt: 4,
			Children: []string{"bl_3"}, Revisions: []belief.Revision{{Timestamp: base.Add(time.Hour), OldStatement: "x", Reason: "y"}}},
	}
	var want []byte
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		order := r.Perm(len(vs))
		acc := vs[order[0]]
		for _, i := range order[1:] {
			if r.IntN(2) == 0 {
				acc = joinBeliefs(acc, vs[i])
			} else {
				acc = joinBeliefs(vs[i], acc)
			}
		}
		acc = joinBeliefs(acc, vs[order[r.IntN(len(vs))]]) // idempotent
		got := mustJSON(acc)
		if trial == 0 {
			want = got
			continue
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("order %v gave\n%s\nwant\n%s", order, got, want)
		}
	}
	acc := vs[0]
	for _, v := range vs[1:] {
		acc = joinBeliefs(acc, v)
	}
	if acc.Status != belief.StatusRevised || len(acc.Children) != 2 || len(acc.Revisions) != 2 || acc.CreatedAt != 4 || acc.LastReinforced != 30 {
		t.Errorf("join: %+v", acc)
	}
}

// α and β are a function of the set of evidence records: the same records
// in any order, with repeats, give the same confidence; a record pushed
// from a machine carries what it counted there.
func TestEvidenceRule(t *testing.T) {
	ev := []Evidence{{"ep_a", 1, 3}, {"ep_b", 1, 1}, {"ep_c", -1, 3}, {"ep_d", 0, 1}}
	want := beliefFrom(sharedBelief{ID: "bl_1", Status: belief.StatusActive}, ev, nil, "api", "/p")
	if want.Alpha != 5 || want.Beta != 4 || want.EvidenceCount != 8 {
		t.Fatalf("α %v β %v evidence %d, want 5, 4, 8", want.Alpha, want.Beta, want.EvidenceCount)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 50 {
		shuffled := append([]Evidence(nil), ev...)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		shuffled = append(shuffled, shuffled[r.IntN(len(shuffled))])
		got := beliefFrom(sharedBelief{ID: "bl_1", Status: belief.StatusActive}, shuffled, nil, "api", "/p")
		if got.Alpha != want.Alpha || got.Beta != want.Beta || got.EvidenceCount != want.EvidenceCount {
			t.Fatalf("order %v: α %v β %v", shuffled, got.Alpha, got.Beta)
		}
	}
	// A local belief formed by one statement (Beta(4, 1)) and reinforced by
	// an inferred mention: the records carry 3 and 1.
	b := &belief.Belief{Alpha: 5, Beta: 1, Supporting: []string{"ep_s", "ep_i"}}
	got := localEvidence(b, nil)
	if len(got) != 2 || got[0].Weight != 3 || got[1].Weight != 1 {
		t.Errorf("local evidence %+v", got)
	}
	// The server already holds ep_s with weight 3; a statement here added
	// ep_n: it carries 3.
	b = &belief.Belief{Alpha: 7, Beta: 1, Supporting: []string{"ep_s", "ep_n"}}
	got = localEvidence(b, map[string]Evidence{"ep_s": {"ep_s", 1, 3}})
	if len(got) != 1 || got[0].Episode != "ep_n" || got[0].Weight != 3 {
		t.Errorf("new evidence %+v", got)
	}
	round := beliefFrom(sharedBelief{ID: "bl_1"}, append([]Evidence{{"ep_s", 1, 3}}, got...), nil, "", "")
	if round.Alpha != b.Alpha || round.Beta != b.Beta {
		t.Errorf("round trip α %v β %v, want %v %v", round.Alpha, round.Beta, b.Alpha, b.Beta)
	}
}
