package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/engram-memory/engram/internal/consolidate"
	"github.com/engram-memory/engram/internal/embed/minilm"
	"github.com/engram-memory/engram/internal/store"
)

// progress: engram-worker status --json | storegen progress prints where
// re-embedding a store by the sentence embedder stands, for
// bench/prompt-hook.sh's REEMBED mode, as one line of four fields:
// the episodes embedded by the model, the episodes, the episodes changed
// since the search index's last update, and "ok" or the index's last
// failure (spaces replaced).
func progress(args []string) error {
	fs := flag.NewFlagSet("progress", flag.ExitOnError)
	fs.Parse(args)
	b, err := io.ReadAll(os.Stdin)
	if err != nil {
		return err
	}
	var st struct {
		Episodes int `json:"episodes"`
		Vectors  struct {
			Episodes map[string]int `json:"episodes"`
		} `json:"vectors"`
		SearchIndex struct {
			Built   bool `json:"built"`
			Pending int  `json:"changes_pending"`
			Failure *struct {
				Error string `json:"error"`
			} `json:"last_failure"`
		} `json:"search_index"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return fmt.Errorf("progress: not engram-worker status --json: %w", err)
	}
	failure := "ok"
	if f := st.SearchIndex.Failure; f != nil {
		failure = strings.Join(strings.Fields(f.Error), "_")
	} else if !st.SearchIndex.Built {
		failure = "not_built"
	}
	fmt.Println(st.Vectors.Episodes[minilm.Name], st.Episodes, st.SearchIndex.Pending, failure)
	return nil
}

// settle: storegen settle -home DIR marks the consolidation of an imported
// store as done up to its last episode, as months of worker cycles leave a
// store: the cycles of bench/prompt-hook.sh's REEMBED mode then re-embed
// it without first working through every imported episode for beliefs
// (the generated store has its beliefs already).
func settle(args []string) error {
	fs := flag.NewFlagSet("settle", flag.ExitOnError)
	home := fs.String("home", "", "ENGRAM_HOME of the store")
	fs.Parse(args)
	if *home == "" {
		return errors.New("settle: -home is required")
	}
	ctx := context.Background()
	dbPath := filepath.Join(*home, "memory.db")
	raw, err := sql.Open("sqlite", "file:"+dbPath+"?mode=ro")
	if err != nil {
		return err
	}
	var last int64
	err = raw.QueryRowContext(ctx, "SELECT coalesce(max(seq), 0) FROM episodes").Scan(&last)
	raw.Close()
	if err != nil {
		return err
	}
	db, err := store.Open(ctx, dbPath, store.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	cp, err := json.Marshal(consolidate.Checkpoint{Seq: last, At: time.Now()})
	if err != nil {
		return err
	}
	return db.SetMeta(ctx, consolidate.CheckpointKey, string(cp))
}
