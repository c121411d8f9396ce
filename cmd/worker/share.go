package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/engram-memory/engram/internal/gitroot"
	"github.com/engram-memory/engram/internal/share"
)

const shareUsage = `usage: engram-worker share <command>

  init            create or migrate engram's tables in ENGRAM_SHARE_URL's database
  enable [DIR]    share the project of DIR (default: here) with everyone on that database
  disable [DIR]   stop sharing it (what the server holds stays there)
  status [--json] what is shared, what waits to leave, how far behind this machine is
  sync            push and pull now (the worker does it every cycle)
  --dry-run       list exactly what the next push would send, sending nothing`

func cmdShare(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return usagef("%s", shareUsage)
	}
	switch args[0] {
	case "init":
		return shareInit(ctx, e, args[1:])
	case "enable":
		return shareEnable(ctx, e, args[1:], true)
	case "disable":
		return shareEnable(ctx, e, args[1:], false)
	case "status":
		return shareStatus(ctx, e, args[1:])
	case "sync":
		return shareSync(ctx, e, args[1:])
	case "--dry-run", "-dry-run", "dry-run":
		return shareDryRun(ctx, e, args[1:])
	case "-h", "--help", "help":
		fmt.Fprintln(e.stdout, shareUsage)
		return nil
	}
	return usagef("unknown share command %q\n%s", args[0], shareUsage)
}

var errNoShareURL = errors.New("ENGRAM_SHARE_URL is not set: put ENGRAM_SHARE_URL=postgres://ROLE:PASSWORD@HOST/DB in $ENGRAM_HOME/env (mode 0600)")

func shareInit(ctx context.Context, e *env, args []string) error {
	fs := newFlags("share init", e.stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	s, err := open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	if s.cfg.ShareURL == "" {
		return errNoShareURL
	}
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	conn, err := share.Connect(cctx, s.cfg.ShareURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	from, to, err := share.Init(cctx, conn)
	if err != nil {
		return err
	}
	if from == to {
		fmt.Fprintf(e.stdout, "%s: engram's shared schema is up to date (version %d)\n", share.MaskURL(s.cfg.ShareURL), to)
	} else {
		fmt.Fprintf(e.stdout, "%s: engram's shared schema migrated from version %d to %d\n", share.MaskURL(s.cfg.ShareURL), from, to)
	}
	return nil
}

func shareEnable(ctx context.Context, e *env, args []string, on bool) error {
	name := "share enable"
	if !on {
		name = "share disable"
	}
	fs := newFlags(name, e.stderr)
	if err := fs.Parse(args); err != nil {
		return flagError(err)
	}
	if fs.NArg() > 1 {
		return usagef("want at most one directory, got %d arguments", fs.NArg())
	}
	dir := "."
	if fs.NArg() == 1 {
		dir = fs.Arg(0)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("%q: %w", dir, err)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return fmt.Errorf("%q is not a directory", dir)
	}
	root, ok := gitroot.Find(abs)
	if !ok {
		return fmt.Errorf("%q is not inside a git repository: a shared project is known by its git remote", dir)
	}
	s, err := open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	if !on {
		was, err := s.db.DisableShareProject(ctx, root)
		if err != nil {
			return err
		}
		if !was {
			fmt.Fprintf(e.stdout, "%s was not shared\n", root)
			return nil
		}
		fmt.Fprintf(e.stdout, "%s is no longer shared from this machine; what the server holds stays there\n", root)
		return nil
	}
	remote, err := share.RemoteOf(root)
	if err != nil {
		return err
	}
	key, err := share.ProjectKey(remote)
	if err != nil {
		return err
	}
	n, err := s.db.EnableShareProject(ctx, root, key)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "sharing %s as %s: its project memory (%d items queued) leaves at the next worker cycle; "+
		"global memory never goes there\n", root, key, n)
	if s.cfg.ShareURL == "" {
		fmt.Fprintf(e.stdout, "note: %v; until then nothing leaves this machine\n", errNoShareURL)
	}
	return nil
}

func shareStatus(ctx context.Context, e *env, args []string) error {
	fs := newFlags("share status", e.stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	s, err := open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	r, err := share.Inspect(ctx, s.db, s.cfg.ShareURL, s.cfg.SharePersonal, true)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	for _, l := range shareLines(r) {
		fmt.Fprintln(e.stdout, l)
	}
	return nil
}

// shareLines is the account of sharing that share status and status print.
func shareLines(r share.Report) []string {
	if !r.Configured {
		l := "sharing:    off (ENGRAM_SHARE_URL is not set)"
		if len(r.Projects) > 0 {
			l += fmt.Sprintf("; %d projects enabled, %d changes waiting", len(r.Projects), r.Pending)
		}
		return []string{l}
	}
	out := []string{"sharing:    " + r.URL}
	personal := "off: global memory and unshared projects stay on this machine"
	if r.Personal {
		personal = "on: your global memory and your other projects' memory go to your other machines"
	}
	out = append(out, "personal:   "+personal)
	if len(r.Projects) == 0 {
		out = append(out, "projects:   none (engram-worker share enable, inside a repository)")
	}
	for i, p := range r.Projects {
		label := "projects:   "
		if i > 0 {
			label = "            "
		}
		out = append(out, fmt.Sprintf("%s%s as %s", label, p.Path, p.Key))
	}
	last := "never"
	if !r.LastOK.IsZero() {
		last = fmt.Sprintf("%s (%s ago)", r.LastOK.Format(time.RFC3339), time.Since(r.LastOK).Round(time.Second))
	}
	out = append(out, "last sync:  "+last)
	if r.LastError != "" {
		out = append(out, "last error: "+r.LastError)
	}
	out = append(out, fmt.Sprintf("to push:    %d local changes", r.Pending))
	if r.Parked > 0 {
		out = append(out, fmt.Sprintf("waiting:    %d memories of your projects not checked out here (they arrive once one is)", r.Parked))
	}
	switch {
	case r.CheckError != "":
		out = append(out, "to pull:    unknown ("+r.CheckError+")")
	case r.Checked:
		spaces := make([]string, 0, len(r.Behind))
		total := int64(0)
		for sp, n := range r.Behind {
			spaces = append(spaces, fmt.Sprintf("%s %d", sp, n))
			total += n
		}
		sort.Strings(spaces)
		l := fmt.Sprintf("to pull:    %d changes on the server", total)
		if len(spaces) > 0 {
			l += " (" + strings.Join(spaces, ", ") + ")"
		}
		out = append(out, l)
	}
	return out
}

func shareSync(ctx context.Context, e *env, args []string) error {
	fs := newFlags("share sync", e.stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	return locked(ctx, e, true, func(s *session) error {
		if s.cfg.ShareURL == "" {
			return errNoShareURL
		}
		st, err := share.Sync(ctx, s.db, share.Options{URL: s.cfg.ShareURL, Personal: s.cfg.SharePersonal, Log: s.log})
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "pushed %d, forgotten %d; pulled %d (%d new, %d changed, %d removed); %d changes waiting; %d ms\n",
			st.Pushed, st.Tombstones, st.Pulled, st.Inserted, st.Updated, st.Deleted, st.Pending, st.Millis)
		return nil
	})
}

func shareDryRun(ctx context.Context, e *env, args []string) error {
	fs := newFlags("share --dry-run", e.stderr)
	limit := fs.Int("limit", 1000, "list at most this many queued changes")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *limit <= 0 {
		return usagef("--limit %d: must be greater than zero", *limit)
	}
	s, err := open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	outs, pending, err := share.Pending(ctx, s.db, s.cfg.SharePersonal, "", *limit)
	if err != nil {
		return err
	}
	dest := "ENGRAM_SHARE_URL is not set: nothing leaves until it is"
	if s.cfg.ShareURL != "" {
		dest = "to " + share.MaskURL(s.cfg.ShareURL)
	}
	fmt.Fprintf(e.stdout, "dry run: %d items would leave this machine %s (%d changes queued, the rest stay here)\n", len(outs), dest, pending)
	for _, o := range outs {
		if o.Deleted {
			fmt.Fprintf(e.stdout, "\n%s %s: forgotten here; the server drops its text if it holds it\n", o.Kind, o.ID)
			continue
		}
		fmt.Fprintf(e.stdout, "\n%s %s -> %s\n  %s\n", o.Kind, o.ID, o.Space, o.JSON())
		for _, ev := range o.Evidence() {
			fmt.Fprintf(e.stdout, "  evidence: %s polarity %+d weight %g\n", ev.Episode, ev.Polarity, ev.Weight)
		}
	}
	return nil
}
