package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/engram-memory/engram/internal/store"
)

// cmdQuarantine lists the items a step of the worker's cycle failed on and
// holds out, or tries them again, or gives up on them for good.
func cmdQuarantine(ctx context.Context, e *env, args []string) error {
	action := "list"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		action, args = args[0], args[1:]
	}
	switch action {
	case "list":
		return quarantineList(ctx, e, args)
	case "retry", "drop":
		return quarantineDecide(ctx, e, action, args)
	}
	return usagef("quarantine %q: want list, retry ID… or drop ID…", action)
}

func quarantineList(ctx context.Context, e *env, args []string) error {
	fs := newFlags("quarantine list", e.stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	all := fs.Bool("all", false, "list the dropped items too")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	s, err := open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	items, err := s.db.ListQuarantine(ctx, *all)
	if err != nil {
		return err
	}
	if *asJSON {
		if items == nil {
			items = []store.Quarantined{}
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(items)
	}
	if len(items) == 0 {
		fmt.Fprintln(e.stdout, "quarantine: empty (no step of the worker failed on an item)")
		return nil
	}
	for _, q := range items {
		reason, _, _ := strings.Cut(q.Reason, "\n")
		fmt.Fprintf(e.stdout, "%s  %s, %s, %d attempts, last %s, build %s\n    %s\n    %q\n",
			q.ID, q.Stage, q.State, q.Attempts, q.LastAt.UTC().Format(time.RFC3339), q.Build, reason, clipText(q.Text, 120))
	}
	fmt.Fprintln(e.stdout, "engram-worker quarantine retry ID… tries them again at the next run; drop ID… gives up on them; a new build tries the held ones again by itself")
	return nil
}

func quarantineDecide(ctx context.Context, e *env, action string, args []string) error {
	fs := newFlags("quarantine "+action, e.stderr)
	if err := fs.Parse(args); err != nil {
		return flagError(err)
	}
	names := fs.Args()
	if len(names) == 0 {
		return usagef("quarantine %s: want one or more ids (capture:N, ep_…, bl_…)", action)
	}
	for _, n := range names {
		if _, _, err := store.ParseQuarantineName(n); err != nil {
			return usagef("quarantine %s: %v; nothing was changed", action, err)
		}
	}
	s, err := open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	if action == "retry" {
		err = s.db.RetryQuarantined(ctx, names)
	} else {
		err = s.db.DropQuarantined(ctx, names)
	}
	if errors.Is(err, store.ErrNotQuarantined) {
		return fmt.Errorf("quarantine %s: %w (engram-worker quarantine list shows what is); nothing was changed", action, err)
	}
	if err != nil {
		return err
	}
	verb := "will be tried again at the next run"
	if action == "drop" {
		verb = "dropped: left out for good"
	}
	for _, n := range names {
		fmt.Fprintf(e.stdout, "%s %s\n", n, verb)
	}
	return nil
}

// clipText cuts s to n runes on one line.
func clipText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
