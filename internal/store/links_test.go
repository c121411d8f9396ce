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
	"github.com/engram-memory/engram/internal/episode"
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

// TestForgetEvidenceUnlinks: forgetting the only support of linked beliefs
// retires them, and the retired ones leave the link graph (a belief in
// other words, and a denied one in the user's words that the decision
// keeps); a linked belief with other support keeps its links. An import
// that brings the episode's tombstone forgets it the same way, so two
// machines agree on the links only if this holds.
func TestForgetEvidenceUnlinks(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t, filepath.Join(t.TempDir(), "memory.db"))
	now := time.UnixMilli(1_800_000_000_000)
	ep := func(id, text string) episode.Episode {
		return episode.Episode{ID: id, Summary: text, Context: "User: " + text, Type: "event", Scope: episode.ScopeGlobal,
			ContentHash: id, Importance: 0.5, OccurredAt: now, CreatedAt: now, UpdatedAt: now}
	}
	only, other := "ep_00000000ccc1", "ep_00000000ccc2"
	bl := func(id, statement string, sup ...string) belief.Belief {
		return belief.Belief{ID: id, Statement: statement, Subject: "deploy target", Predicate: "is", Context: "cloud run",
			Alpha: 4, Beta: 1, Scope: episode.ScopeGlobal, Status: belief.StatusActive, EvidenceCount: 3, Stability: 1,
			Supporting: sup, CreatedAt: now, UpdatedAt: now}
	}
	plain, denied, kept, hub := "bl_00000000ddd1", "bl_00000000ddd2", "bl_00000000ddd3", "bl_00000000ddd4"
	err := db.ImportAll(ctx, []episode.Episode{ep(only, "The api service deploys to Cloud Run."), ep(other, "Cloud Run, still.")},
		[]belief.Belief{
			bl(plain, "Deploy target is cloud run.", only),
			bl(denied, "The api service deploys to Cloud Run.", only),
			bl(kept, "Deploy target is cloud run.", only, other),
			bl(hub, "Deploy billing is fly.", other),
		}, nil, []Link{
			{From: plain, To: hub, Similarity: 0.4, At: now},
			{From: denied, To: hub, Similarity: 0.4, At: now},
			{From: kept, To: hub, Similarity: 0.4, At: now},
			{From: plain, To: denied, Similarity: 0.5, At: now},
		})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Decide(ctx, []Decision{{BeliefID: denied, Decision: "deny", Who: "user", At: now,
		Before: LevelPending, After: LevelDenied}}); err != nil {
		t.Fatal(err)
	}
	if links, _ := db.AllLinks(ctx); len(links) != 8 {
		t.Fatalf("before the forget: %d link rows, want 8: %+v", len(links), links)
	}
	if err := db.Forget(ctx, []string{only}, nil); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{plain, denied} {
		var b belief.Belief
		if err := db.Beliefs(ctx, func(tx *BeliefTx) error {
			var err error
			b, err = tx.Get(id)
			return err
		}); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if b.Status != belief.StatusArchived {
			t.Errorf("%s: %s, want archived", id, b.Status)
		}
		if links, _ := db.Links(ctx, id); len(links) > 0 {
			t.Errorf("the retired %s keeps its links: %+v", id, links)
		}
	}
	if links, _ := db.Links(ctx, kept); len(links) != 1 || links[0].To != hub {
		t.Errorf("the belief with other support: links %+v, want its link to %s", links, hub)
	}
	if probs, err := db.LinkProblems(ctx); err != nil || len(probs) > 0 {
		t.Errorf("link graph after the forget: %v %v", probs, err)
	}
}
