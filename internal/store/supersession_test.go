package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/episode"
)

// Supersessions says when and by which exchange an episode was
// superseded; once that exchange is forgotten nothing of its words is
// left, and the search index is told to write the superseded episode anew.
func TestSupersessions(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t, filepath.Join(t.TempDir(), "memory.db"))
	said := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	now := said.Add(48 * time.Hour)
	mk := func(id, text string, at time.Time) episode.Episode {
		return episode.Episode{ID: id, Summary: text, Context: "User: " + text, Type: "fact", Scope: episode.ScopeProject,
			ProjectPath: "/src/agent", ContentHash: id, Importance: 0.5, OccurredAt: at, CreatedAt: at, UpdatedAt: at}
	}
	old, cur, late, live := "ep_0000000000a1", "ep_0000000000a2", "ep_0000000000a3", "ep_0000000000a4"
	err := db.Import(ctx, []episode.Episode{mk(old, "docker builds the image, cargo the agent", said.Add(-720*time.Hour)),
		mk(cur, "not docker anymore, it's podman", said), mk(late, "docker again", said.Add(-700*time.Hour)),
		mk(live, "cargo builds it", said)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.EndEpisodes(ctx, []LifecycleChange{{ID: old, State: episode.LifecycleSuperseded, By: cur},
		{ID: late, State: episode.LifecycleSuperseded}}, now); err != nil {
		t.Fatal(err)
	}
	for _, ids := range [][]string{nil, {old, late, live}} {
		got, err := db.Supersessions(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 {
			t.Fatalf("Supersessions(%v) = %+v, want the two superseded episodes", ids, got)
		}
		if s := got[old]; s.By != cur || s.Context != "User: not docker anymore, it's podman" || !s.At.Equal(said) {
			t.Errorf("the corrected episode's supersession = %+v, want by %s at %v with its words", s, cur, said)
		}
		if s := got[late]; s.By != "" || s.Context != "" || !s.At.Equal(now) {
			t.Errorf("a supersession known by its time only = %+v, want at %v", s, now)
		}
	}
	last, _, _, err := db.EpisodeChanges(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Forget(ctx, []string{cur}, nil); err != nil {
		t.Fatal(err)
	}
	got, err := db.Supersessions(ctx, []string{old})
	if err != nil {
		t.Fatal(err)
	}
	if s := got[old]; s.By != cur || s.Context != "" {
		t.Errorf("after the correction is forgotten: %+v, want its id only, no words", s)
	}
	_, _, seqs, err := db.EpisodeChanges(ctx, last)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := db.SeqsOf(ctx, []string{old})
	found := false
	for _, s := range seqs {
		found = found || s == want[old]
	}
	if !found {
		t.Errorf("forgetting the correction left the episode it superseded out of the index's changes %v (want seq %d)", seqs, want[old])
	}
}
