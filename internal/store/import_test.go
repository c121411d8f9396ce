package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/episode"
)

// TestImportAlreadyStored: a record the store holds already is a
// *StoredError naming it, not SQLite's constraint message, and the
// transaction stores nothing.
func TestImportAlreadyStored(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t, filepath.Join(t.TempDir(), "memory.db"))
	now := time.Now()
	ep := func(id, hash string) episode.Episode {
		return episode.Episode{ID: id, Summary: "s " + id, Type: episode.TypeFact, Scope: episode.ScopeGlobal, ContentHash: hash, CreatedAt: now}
	}
	bl := func(id string) belief.Belief {
		return belief.Belief{ID: id, Statement: "b " + id, Timeframe: belief.TimeCurrent, Alpha: 2, Beta: 1,
			Scope: episode.ScopeGlobal, Status: belief.StatusActive, CreatedAt: now}
	}
	if err := db.Import(ctx, []episode.Episode{ep("ep_000000000001", "h1")}, []belief.Belief{bl("bl_000000000001")}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		run   func() error
		index int
		want  StoredError
	}{
		{"episode id", func() error {
			return db.Import(ctx, []episode.Episode{ep("ep_000000000002", "h2"), ep("ep_000000000001", "h3")}, nil)
		}, 1, StoredError{Kind: "episode", ID: "ep_000000000001"}},
		{"content hash", func() error {
			return db.ImportEpisodes(ctx, []episode.Episode{ep("ep_000000000002", "h1")})
		}, 0, StoredError{Kind: "episode", ID: "ep_000000000002", SameAs: "ep_000000000001"}},
		{"belief id", func() error {
			return db.Import(ctx, []episode.Episode{ep("ep_000000000002", "h2")}, []belief.Belief{bl("bl_000000000002"), bl("bl_000000000001")})
		}, 2, StoredError{Kind: "belief", ID: "bl_000000000001"}},
		{"belief id, alone", func() error {
			return db.ImportBeliefs(ctx, []belief.Belief{bl("bl_000000000001")})
		}, 0, StoredError{Kind: "belief", ID: "bl_000000000001"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			var re *RecordError
			var se *StoredError
			if !errors.As(err, &re) || re.Index != tt.index || !errors.As(err, &se) || *se != tt.want || !errors.Is(err, ErrAlreadyStored) {
				t.Fatalf("err = %v, want record %d: %+v", err, tt.index, tt.want)
			}
			if n, _ := db.EpisodeCount(ctx); n != 1 {
				t.Errorf("%d episodes after a refused import, want 1", n)
			}
		})
	}
	var se *StoredError
	errors.As(db.ImportEpisodes(ctx, []episode.Episode{ep("ep_000000000001", "h1")}), &se)
	if se == nil || se.Error() != "episode ep_000000000001 is already in the store" {
		t.Errorf("message: %v", se)
	}
}
