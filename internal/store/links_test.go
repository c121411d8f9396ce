package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/belief"
)

// TestLinkGraphStaysConsistent is a property test: random sequences of
// form, merge, split, revise, archive and forget, made the way
// consolidation and forget make them, never leave a link without its
// reverse, a link to itself, or a link to a belief that is gone or not
// active; and a merge hands the merged belief's links to its survivor.
func TestLinkGraphStaysConsistent(t *testing.T) {
	ctx := context.Background()
	for seed := range uint64(8) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			db := mustOpen(t, filepath.Join(t.TempDir(), "memory.db"))
			rng := rand.New(rand.NewPCG(seed, 42))
			at := time.UnixMilli(1_800_000_000_000)
			n := 0
			var active []string
			all := map[string]*belief.Belief{}
			newBelief := func(parent string) *belief.Belief {
				n++
				b := &belief.Belief{ID: fmt.Sprintf("bl_%012x", n), Statement: fmt.Sprintf("belief %d", n), Alpha: 4, Beta: 1,
					Scope: "global", Status: belief.StatusActive, Timeframe: belief.TimeCurrent, ParentID: parent, CreatedAt: at, UpdatedAt: at}
				all[b.ID] = b
				return b
			}
			pick := func() string { return active[rng.IntN(len(active))] }
			remove := func(id string) { active = slices.DeleteFunc(active, func(x string) bool { return x == id }) }
			// form inserts b and links it to up to 3 random active beliefs.
			form := func(t *BeliefTx, b *belief.Belief) error {
				if err := t.Insert(b); err != nil {
					return err
				}
				for range rng.IntN(4) {
					if len(active) > 0 {
						if err := t.Link(b.ID, pick(), 0.4+0.4*rng.Float64(), at); err != nil {
							return err
						}
					}
				}
				active = append(active, b.ID)
				return nil
			}
			end := func(t *BeliefTx, id, status string, children ...string) error {
				b := all[id]
				b.Status, b.Children, b.UpdatedAt = status, children, at
				remove(id)
				return t.UpdateEvidence(b)
			}
			var ops []string
			for step := range 120 {
				at = at.Add(time.Minute)
				op := "form"
				if len(active) >= 2 {
					op = []string{"form", "form", "merge", "split", "revise", "archive", "forget"}[rng.IntN(7)]
				}
				ops = append(ops, op)
				var before []Link
				var keep, gone string
				err := func() error {
					switch op {
					case "forget":
						id := pick()
						remove(id)
						return db.Forget(ctx, nil, []string{id})
					case "merge":
						keep, gone = pick(), pick()
						if keep == gone {
							return nil
						}
						before, _ = db.Links(ctx, gone)
						return db.Beliefs(ctx, func(t *BeliefTx) error { return end(t, gone, belief.StatusMerged, keep) })
					}
					return db.Beliefs(ctx, func(t *BeliefTx) error {
						switch op {
						case "form":
							return form(t, newBelief(""))
						case "split":
							p := pick()
							a, c := newBelief(p), newBelief(p)
							if err := end(t, p, belief.StatusSplit, a.ID, c.ID); err != nil {
								return err
							}
							if err := form(t, a); err != nil {
								return err
							}
							return form(t, c)
						case "revise":
							p := pick()
							c := newBelief(p)
							if err := end(t, p, belief.StatusRevised, c.ID); err != nil {
								return err
							}
							return form(t, c)
						case "archive":
							return end(t, pick(), belief.StatusArchived)
						}
						return nil
					})
				}()
				if err != nil {
					t.Fatalf("step %d (%s): %v", step, op, err)
				}
				probs, err := db.LinkProblems(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if len(probs) > 0 {
					t.Fatalf("after %v: %v", ops, probs)
				}
				if op == "merge" && keep != gone {
					got, _ := db.Links(ctx, keep)
					for _, l := range before {
						if l.To == keep || !slices.Contains(active, l.To) {
							continue
						}
						if !slices.ContainsFunc(got, func(g Link) bool { return g.To == l.To }) {
							t.Fatalf("step %d: the merged %s's link to %s did not pass to %s: %+v", step, gone, l.To, keep, got)
						}
					}
				}
			}
			links, _ := db.AllLinks(ctx)
			if len(links) == 0 {
				t.Fatalf("no links after %v: the test shows nothing", ops)
			}
		})
	}
}
