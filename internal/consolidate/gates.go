package consolidate

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/store"
)

// gates applies the rule gates to every active belief not made or changed
// destructively in this cycle, in creation order: split, then revise, then
// archive; then merges. A belief changes destructively at most once per
// cycle, so a storm of contradictions causes one revision, not many.
func (s *cycle) gates(ctx context.Context) {
	ids := slices.Clone(s.order)
	for _, id := range ids {
		b := s.beliefs[id]
		if b.Status != belief.StatusActive || s.fresh[id] || s.frozen(b) {
			continue
		}
		s.workingBelief(id)
		pe, err := s.predictionError(ctx, b)
		if err != nil {
			s.log.Warn("belief gates skipped", "id", id, "err", err)
			continue
		}
		threshold := belief.DestabilizationThreshold(b.EvidenceCount, b.CreatedAt, s.now)
		switch {
		case SplitGate(b) && float64(pe+len(b.Partial)) > threshold:
			s.split(ctx, b)
		case ReviseGate(b) && float64(pe) > threshold:
			s.revise(ctx, b, pe, threshold)
		}
		if why, ok := ExpireGate(b, s.now, s.o.CommitmentTTL); ok && !s.fresh[id] {
			before := snapshot(b)
			b.Status = belief.StatusExpired
			b.UpdatedAt = s.now
			s.dirty[id] = true
			s.st.Expired++
			s.record(b, store.ActionExpired, "consolidate", why, before)
			s.log.Info("belief expired", "id", id, "why", why)
		}
		if b.Status == belief.StatusActive && !s.fresh[id] && ArchiveGate(b, s.now) {
			before := snapshot(b)
			b.Status = belief.StatusArchived
			b.UpdatedAt = s.now
			s.dirty[id] = true
			s.st.Archived++
			s.record(b, store.ActionArchived, "consolidate", archiveReason(b, s.now), before)
			s.log.Info("belief archived", "id", id, "confidence", b.Confidence(), "evidence", b.EvidenceCount)
		}
	}
	s.working()
	s.merges()
	s.metas(ctx)
}

// SplitGate: at least MinContradictions contradicting and MinSupports
// supporting episodes, MinPartials partial classifications and
// MinEvidence evidence. The caller also compares the prediction error with
// the destabilization threshold.
func SplitGate(b *belief.Belief) bool {
	return len(b.Contradicting) >= MinContradictions && len(b.Supporting) >= MinSupports &&
		len(b.Partial) >= MinPartials && b.EvidenceCount >= MinEvidence
}

// ReviseGate: confidence fell below ReviseBelow from a peak above
// RevisePeak, with MinContradictions contradictions and MinEvidence
// evidence.
func ReviseGate(b *belief.Belief) bool {
	return b.Confidence() < ReviseBelow && b.PeakConfidence > RevisePeak &&
		len(b.Contradicting) >= MinContradictions && b.EvidenceCount >= MinEvidence
}

// ArchiveGate: confidence below ArchiveConfidence, or not reinforced for
// StaleAfter with less than StaleEvidence evidence.
func ArchiveGate(b *belief.Belief, now time.Time) bool {
	if b.Confidence() < ArchiveConfidence {
		return true
	}
	last := b.LastReinforcedAt
	if last.IsZero() {
		last = b.CreatedAt
	}
	return now.Sub(last) > StaleAfter && b.EvidenceCount < StaleEvidence
}

// MergeGate: two active beliefs of the same scope and project, both above
// MergeConfidence, neither updated within MergeQuiet of now, whose
// similarity exceeds MergeSimilarity.
func MergeGate(a, b *belief.Belief, sim float64, now time.Time) bool {
	return a.Status == belief.StatusActive && b.Status == belief.StatusActive && a.Scope == b.Scope &&
		partPath(a.Scope, a.ProjectPath) == partPath(b.Scope, b.ProjectPath) &&
		a.Confidence() > MergeConfidence && b.Confidence() > MergeConfidence &&
		now.Sub(a.UpdatedAt) >= MergeQuiet && now.Sub(b.UpdatedAt) >= MergeQuiet && sim > MergeSimilarity
}

// predictionError is a belief's contradiction streak: its contradicting
// episodes that occurred after its latest supporting one. Old,
// well-evidenced beliefs change only when it exceeds their
// destabilization threshold.
func (s *cycle) predictionError(ctx context.Context, b *belief.Belief) (int, error) {
	if len(b.Contradicting) == 0 {
		return 0, nil
	}
	eps, err := s.episodes(ctx, slices.Concat(b.Supporting, b.Contradicting))
	if err != nil {
		return 0, err
	}
	when := map[string]time.Time{}
	for _, e := range eps {
		when[e.ID] = e.OccurredAt
	}
	var lastSupport time.Time
	for _, id := range b.Supporting {
		if t, ok := when[id]; ok && t.After(lastSupport) {
			lastSupport = t
		}
	}
	n := 0
	for _, id := range b.Contradicting {
		if t, ok := when[id]; ok && t.After(lastSupport) {
			n++
		}
	}
	return n, nil
}

// phrase has the judge (or, failing it, the local one) state what a set of
// episodes supports about the subject of b.
func (s *cycle) phrase(ctx context.Context, b *belief.Belief, eps []episode.Episode) (Candidate, bool) {
	if len(eps) == 0 {
		return Candidate{}, false
	}
	g := Group{Scope: b.Scope, Project: b.Project, ProjectPath: b.ProjectPath, Episodes: eps}
	cands, err := s.judge.Synthesize(ctx, g)
	if err != nil {
		s.st.Fallbacks++
		s.log.Warn("belief synthesis failed; using the local judge", "belief", b.ID, "err", err)
		cands, _ = Local{}.Synthesize(ctx, g)
	}
	subj := normTerm(b.Subject)
	for _, c := range cands {
		if normTerm(c.Subject) == subj {
			return c, true
		}
	}
	if _, local := s.judge.(Local); !local && len(cands) > 0 {
		return cands[0], true
	}
	return Candidate{}, false
}

// child makes a belief descending from parent.
func (s *cycle) child(ctx context.Context, parent *belief.Belief, c Candidate, support []string, reason string) *belief.Belief {
	nb := &belief.Belief{
		ID: store.NewID("bl_"), Statement: c.Statement, Subject: c.Subject, Predicate: c.Predicate, Context: c.Context,
		Timeframe: cmp.Or(c.Timeframe, belief.TimeCurrent), Alpha: 1 + float64(len(support)), Beta: 1,
		Scope: parent.Scope, Project: parent.Project, ProjectPath: parent.ProjectPath,
		Supporting: slices.Clone(support), ParentID: parent.ID,
		Revisions: append(slices.Clone(parent.Revisions), belief.Revision{Timestamp: s.now, OldStatement: parent.Statement,
			OldConfidence: parent.Confidence(), Reason: reason}),
		Status: belief.StatusActive, EvidenceCount: len(support), Stability: 1,
		CreatedAt: s.now, UpdatedAt: s.now, LastReinforcedAt: s.now,
		Kind: parent.Kind, DueAt: parent.DueAt,
	}
	if vec := s.embed(ctx, nb.Statement); len(vec) > 0 {
		nb.Embedding, nb.Embedder = vec, s.embedderName()
	}
	nb.PeakConfidence = nb.Confidence()
	return nb
}

// revise replaces a belief the evidence turned against by a new one (a new
// id) stated from its contradicting episodes; the old one is kept as
// revised, timeframe past, with the new one as its child.
func (s *cycle) revise(ctx context.Context, b *belief.Belief, pe int, threshold float64) {
	eps, err := s.episodes(ctx, b.Contradicting)
	if err != nil {
		s.log.Warn("belief revision skipped", "id", b.ID, "err", err)
		return
	}
	c, ok := s.phrase(ctx, b, eps)
	if !ok || normTerm(c.Statement) == normTerm(b.Statement) {
		s.log.Info("belief revision found no new statement", "id", b.ID)
		return
	}
	ids := make([]string, len(eps))
	for i, e := range eps {
		ids[i] = e.ID
	}
	reason := fmt.Sprintf("confidence fell from %.2f to %.2f after %d contradicting episodes (prediction error %d > threshold %.2f)",
		b.PeakConfidence, b.Confidence(), len(b.Contradicting), pe, threshold)
	nb := s.child(ctx, b, c, ids, reason)
	s.add(nb)
	s.formed(nb, b.ID, "revision of "+b.ID)
	before := snapshot(b)
	before["statement"] = b.Statement
	b.Status, b.Timeframe, b.UpdatedAt = belief.StatusRevised, belief.TimePast, s.now
	b.Children = append(b.Children, nb.ID)
	s.record(b, store.ActionRevised, "consolidate", reason, before)
	s.events[len(s.events)-1].After["child"] = nb.ID
	s.events[len(s.events)-1].After["statement"] = b.Statement
	s.dirty[b.ID], s.fresh[b.ID] = true, true
	s.st.Revised++
	s.log.Info("belief revised", "old", b.ID, "new", nb.ID, "reason", reason)
}

// split replaces a belief that holds only in some contexts by two
// children: what its supporting episodes state, and what its
// contradicting and partial ones state. Each child takes its side's
// evidence; the parent is kept as split.
func (s *cycle) split(ctx context.Context, b *belief.Belief) {
	sup, err := s.episodes(ctx, b.Supporting)
	if err != nil {
		s.log.Warn("belief split skipped", "id", b.ID, "err", err)
		return
	}
	other, err := s.episodes(ctx, slices.Concat(b.Contradicting, b.Partial))
	if err != nil {
		s.log.Warn("belief split skipped", "id", b.ID, "err", err)
		return
	}
	ca, okA := s.phrase(ctx, b, sup)
	cb, okB := s.phrase(ctx, b, other)
	if !okA || !okB || normTerm(ca.Statement) == normTerm(cb.Statement) {
		s.log.Info("belief split found no two distinct statements", "id", b.ID)
		return
	}
	reason := fmt.Sprintf("split: holds in some contexts only (%d supporting, %d contradicting, %d partial)",
		len(b.Supporting), len(b.Contradicting), len(b.Partial))
	a := s.child(ctx, b, ca, idsOf(sup), reason)
	c := s.child(ctx, b, cb, idsOf(other), reason)
	s.add(a)
	s.add(c)
	s.formed(a, b.ID, "split of "+b.ID)
	s.formed(c, b.ID, "split of "+b.ID)
	before := snapshot(b)
	b.Status, b.UpdatedAt = belief.StatusSplit, s.now
	b.Children = append(b.Children, a.ID, c.ID)
	s.record(b, store.ActionSplit, "consolidate", reason, before)
	s.events[len(s.events)-1].After["children"] = []string{a.ID, c.ID}
	s.dirty[b.ID], s.fresh[b.ID] = true, true
	s.st.Split++
	s.log.Info("belief split", "parent", b.ID, "children", []string{a.ID, c.ID})
}

func idsOf(eps []episode.Episode) []string {
	out := make([]string, len(eps))
	for i, e := range eps {
		out[i] = e.ID
	}
	return out
}

// merges folds twins together: the belief with more evidence (then the
// older) survives and takes the other's episodes it did not have; the
// other is kept as merged, the survivor as its child.
func (s *cycle) merges() {
	ids := slices.Clone(s.order)
	for i, ai := range ids {
		a := s.beliefs[ai]
		if a.Status != belief.StatusActive || s.fresh[ai] || s.frozen(a) {
			continue
		}
		for _, bi := range ids[i+1:] {
			b := s.beliefs[bi]
			if b.Status != belief.StatusActive || s.fresh[bi] || s.frozen(b) || !MergeGate(a, b, twinSimilarity(a, b), s.now) {
				continue
			}
			keep, gone := a, b
			if b.EvidenceCount > a.EvidenceCount || (b.EvidenceCount == a.EvidenceCount && b.CreatedAt.Before(a.CreatedAt)) {
				keep, gone = b, a
			}
			s.merge(keep, gone)
			if gone == a {
				break
			}
		}
	}
}

func (s *cycle) merge(keep, gone *belief.Belief) {
	keepBefore, goneBefore := snapshot(keep), snapshot(gone)
	added := 0
	for _, id := range gone.Supporting {
		if !hasEvidence(keep, id) {
			keep.Supporting = append(keep.Supporting, id)
			keep.Alpha++
			added++
		}
	}
	for _, id := range gone.Contradicting {
		if !hasEvidence(keep, id) {
			keep.Contradicting = append(keep.Contradicting, id)
			keep.Beta++
			added++
		}
	}
	for _, id := range gone.Partial {
		if !hasEvidence(keep, id) {
			keep.Partial = append(keep.Partial, id)
			added++
		}
	}
	keep.EvidenceCount += added
	keep.PeakConfidence = max(keep.PeakConfidence, keep.Confidence())
	keep.Revisions = append(keep.Revisions, belief.Revision{Timestamp: s.now, OldStatement: gone.Statement,
		OldConfidence: gone.Confidence(), Reason: "merged " + gone.ID})
	if gone.LastReinforcedAt.After(keep.LastReinforcedAt) {
		keep.LastReinforcedAt = gone.LastReinforcedAt
	}
	keep.UpdatedAt = s.now
	gone.Status, gone.UpdatedAt = belief.StatusMerged, s.now
	gone.Children = append(gone.Children, keep.ID)
	s.dirty[keep.ID], s.dirty[gone.ID] = true, true
	s.fresh[keep.ID], s.fresh[gone.ID] = true, true
	s.st.Merged++
	s.record(keep, store.ActionMerged, gone.ID, fmt.Sprintf("took %d episodes of %s", added, gone.ID), keepBefore)
	s.record(gone, store.ActionMerged, keep.ID, "merged into "+keep.ID, goneBefore)
	s.log.Info("beliefs merged", "kept", keep.ID, "merged", gone.ID, "evidence_moved", added)
}

// twinSimilarity is the cosine of two beliefs' vectors (same embedder
// only), or 1 when the local judge's fields say they make the same claim.
func twinSimilarity(a, b *belief.Belief) float64 {
	if ca, ok := beliefClaim(a); ok {
		if cb, ok := beliefClaim(b); ok && ca == cb {
			return 1
		}
	}
	if a.Embedder == "" || a.Embedder != b.Embedder || len(a.Embedding) != len(b.Embedding) || len(a.Embedding) == 0 {
		return 0
	}
	return float64(embed.Cosine(a.Embedding, b.Embedding))
}

// archiveReason says which half of the archive gate held.
func archiveReason(b *belief.Belief, now time.Time) string {
	if b.Confidence() < ArchiveConfidence {
		return fmt.Sprintf("confidence %.2f below %.2f", b.Confidence(), ArchiveConfidence)
	}
	return fmt.Sprintf("not reinforced for %d days, %d evidence", int(StaleAfter.Hours()/24), b.EvidenceCount)
}
