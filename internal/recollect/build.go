// Package recollect is the worker's side of recall: it writes what the
// prompt hook reads (the recollection files, the session neighbours files
// and the search index) from the store, and folds the hook's access log back
// into it. The hook's side, package recall, does not import the store, so
// the hook binary does not link SQLite.
package recollect

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/recall"
	"github.com/engram-memory/engram/internal/store"
)

// BuildOptions bound the recollection files.
type BuildOptions struct {
	// Candidates is how many of the most important and of the most recent
	// episodes each file carries.
	Candidates int
	// StopShare: terms in at least this share of the episodes (and in
	// StopMinDocs or more) are stop terms.
	StopShare   float64
	StopMinDocs int
	// CommonTerms is how many of the store's most common terms the files
	// carry with their counts (for the prompt terms' rarity).
	CommonTerms int
}

// DefaultBuildOptions are used when fields are zero.
var DefaultBuildOptions = BuildOptions{Candidates: 200, StopShare: 0.05, StopMinDocs: 100, CommonTerms: 2000}

// BuildStats counts what Build wrote.
type BuildStats struct {
	Files, Episodes, Beliefs, Removed int
	Index                             IndexStats
}

// Build writes the global and per-project recollection files from the
// store. Episode vectors are re-made with the local embedder when they come
// from another one, so that the hook can always compare them with the
// prompt's local vector. Files of projects that no longer have memories are
// removed. Then the search index follows the store's changes (SyncIndex).
func Build(ctx context.Context, db *store.DB, home string, opt BuildOptions, now time.Time) (BuildStats, error) {
	var st BuildStats
	if opt.Candidates <= 0 {
		opt.Candidates = DefaultBuildOptions.Candidates
	}
	if opt.StopShare <= 0 {
		opt.StopShare = DefaultBuildOptions.StopShare
	}
	if opt.StopMinDocs <= 0 {
		opt.StopMinDocs = DefaultBuildOptions.StopMinDocs
	}
	if opt.CommonTerms <= 0 {
		opt.CommonTerms = DefaultBuildOptions.CommonTerms
	}
	local := embed.NewLocal()
	// One pass over the index's vocabulary: the most common terms with
	// their counts, and a filter of all of them.
	var all []recall.TermDocs
	docs, err := db.EachTerm(ctx, func(term string, n int) error {
		all = append(all, recall.TermDocs{Term: term, Docs: n})
		return nil
	})
	if err != nil {
		return st, err
	}
	vocab := recall.NewBloom(len(all))
	for _, t := range all {
		vocab.Add(recall.TermHash(t.Term))
	}
	slices.SortFunc(all, func(a, b recall.TermDocs) int {
		if a.Docs != b.Docs {
			return cmp.Compare(b.Docs, a.Docs)
		}
		return strings.Compare(a.Term, b.Term)
	})
	common := all[:min(len(all), opt.CommonTerms)]
	stopDocs := max(opt.StopMinDocs, int(math.Ceil(opt.StopShare*float64(docs))))
	beliefs, err := db.SurfaceableBeliefs(ctx, recall.BeliefFloor)
	if err != nil {
		return st, err
	}
	projects, err := db.RecallProjects(ctx)
	if err != nil {
		return st, err
	}
	repl, err := loadReplacements(ctx, db)
	if err != nil {
		return st, err
	}
	write := func(path, scope, projectPath string) error {
		eps, err := db.CandidateEpisodes(ctx, scope, projectPath, opt.Candidates)
		if err != nil {
			return err
		}
		ids := make([]string, len(eps))
		for i, e := range eps {
			ids[i] = e.ID
		}
		seqs, err := db.SeqsOf(ctx, ids)
		if err != nil {
			return err
		}
		f := &recall.File{Embedder: local.Name(), CreatedAt: now, Scope: scope, ProjectPath: projectPath,
			Docs: docs, StopDocs: stopDocs, Common: common}
		dense := map[string]int{}
		if scope == episode.ScopeGlobal {
			f.Vocab = vocab
		}
		for _, b := range beliefs {
			if b.Scope != scope || (scope == episode.ScopeProject && b.ProjectPath != projectPath) {
				continue
			}
			it := recall.Item{Kind: recall.KindBelief, ID: b.ID, Text: b.Statement, Project: b.Project, ProjectPath: b.ProjectPath,
				At: b.LastReinforced, Confidence: float32(b.Confidence()), Evidence: int32(b.EvidenceCount),
				AccessCount: int32(b.AccessCount), LastAccess: b.LastAccessed, Stability: float32(b.Stability)}
			if b.Embedder == local.Name() {
				it.Vec = b.Embedding
			} else {
				it.Vec = local.EmbedText(b.Statement)
			}
			if embed.IsSentence(b.Embedder) {
				it.Dense = b.Embedding
				dense[b.Embedder]++
			}
			f.Items = append(f.Items, it)
			st.Beliefs++
		}
		for _, e := range eps {
			it := recall.EpisodeItem(e)
			it.Seq = seqs[e.ID]
			repl.apply(&it, e)
			if e.Embedder == local.Name() {
				it.Vec = e.Embedding
			} else {
				it.Vec = local.EmbedText(e.Summary)
			}
			if embed.IsSentence(e.Embedder) {
				it.Dense = e.Embedding
				dense[e.Embedder]++
			}
			f.Items = append(f.Items, it)
			st.Episodes++
		}
		f.Dense = denseName(dense)
		if err := recall.Save(path, f); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		st.Files++
		return nil
	}
	if err := write(recall.GlobalPath(home), episode.ScopeGlobal, ""); err != nil {
		return st, err
	}
	if err := writeGraph(ctx, db, home, beliefs); err != nil {
		return st, fmt.Errorf("write the belief graph: %w", err)
	}
	keep := map[string]bool{recall.GlobalPath(home): true}
	for _, p := range projects {
		path := recall.ProjectPath(home, p)
		keep[path] = true
		if err := write(path, episode.ScopeProject, p); err != nil {
			return st, err
		}
	}
	old, _ := filepath.Glob(filepath.Join(recall.Dir(home), "project-*.rec"))
	for _, p := range old {
		if !keep[p] && os.Remove(p) == nil {
			st.Removed++
		}
	}
	st.Index, err = SyncIndex(ctx, db, home, IndexOptions{}, now)
	return st, err
}

// FoldAccessLog moves the prompt hook's access log into the store: access
// counts, last access and stability. The log is renamed first, so hooks
// appending meanwhile start a new one; a folded file's name is recorded in
// the same transaction as its effects, so a crash never counts it twice.
func FoldAccessLog(ctx context.Context, db *store.DB, home string) (int, error) {
	live := recall.AccessLogPath(home)
	pending, _ := filepath.Glob(live + ".*.fold")
	if _, err := os.Lstat(live); err == nil {
		name := live + "." + strconv.FormatInt(time.Now().UnixNano(), 10) + ".fold"
		if err := os.Rename(live, name); err != nil {
			return 0, err
		}
		pending = append(pending, name)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return 0, err
	}
	total := 0
	for _, p := range pending {
		key := "access-folded:" + filepath.Base(p)
		done, err := db.Meta(ctx, key)
		if err != nil {
			return total, err
		}
		if done == "" {
			data, err := recall.ReadSmall(p, 256<<20)
			if err != nil {
				return total, err
			}
			var acc []store.Access
			for _, a := range recall.ParseAccessLog(data) {
				acc = append(acc, store.Access{ID: a.ID, At: a.At})
			}
			n, err := db.RecordAccessesOnce(ctx, acc, key)
			if err != nil {
				return total, err
			}
			total += n
		}
		if err := os.Remove(p); err != nil {
			return total, err
		}
		_ = db.DeleteMeta(ctx, key)
	}
	return total, nil
}

// CleanSessionFiles removes per-session files of sessions idle for longer
// than maxAge.
func CleanSessionFiles(home string, maxAge time.Duration, now time.Time) int {
	n := 0
	for _, pat := range []string{"injected-*.txt", "session-*.rec"} {
		files, _ := filepath.Glob(filepath.Join(recall.Dir(home), pat))
		for _, f := range files {
			if fi, err := os.Lstat(f); err == nil && now.Sub(fi.ModTime()) > maxAge && strings.HasPrefix(filepath.Base(f), strings.SplitN(pat, "*", 2)[0]) {
				if os.Remove(f) == nil {
					n++
				}
			}
		}
	}
	return n
}

// writeGraph writes the graph file: for each belief the recollection
// files carry, the linked beliefs they carry too, with each link's
// confidence as the last decay left it; and for each subject of
// those beliefs, the beliefs about it and the episodes that support them.
func writeGraph(ctx context.Context, db *store.DB, home string, beliefs []store.BeliefCard) error {
	byID := make(map[string]store.BeliefCard, len(beliefs))
	for _, b := range beliefs {
		byID[b.ID] = b
	}
	links, err := db.AllLinks(ctx)
	if err != nil {
		return err
	}
	g := recall.Graph{Links: map[string][]recall.Linked{}, Subjects: map[string][]string{}}
	for _, l := range links {
		if _, ok := byID[l.From]; !ok {
			continue
		}
		o, ok := byID[l.To]
		if !ok {
			continue
		}
		lk := recall.Linked{ID: o.ID, Text: o.Statement, At: o.LastReinforced, Confidence: float32(o.Confidence()),
			Evidence: int32(o.EvidenceCount), Edge: float32(l.Confidence)}
		if o.Scope == episode.ScopeProject {
			lk.Project, lk.ProjectPath = o.Project, o.ProjectPath
		}
		g.Links[l.From] = append(g.Links[l.From], lk)
	}
	subjects, err := db.BeliefSubjects(ctx, recall.BeliefFloor)
	if err != nil {
		return err
	}
	for _, s := range subjects {
		if k := recall.SubjectKey(s.Subject); k != "" && len(g.Subjects[k]) < maxSubjectIDs {
			ids := append([]string{s.ID}, s.Supporting...)
			g.Subjects[k] = append(g.Subjects[k], ids[:min(len(ids), maxSubjectIDs-len(g.Subjects[k]))]...)
		}
	}
	return recall.SaveGraph(home, g)
}

// maxSubjectIDs bounds the memories listed for one subject.
const maxSubjectIDs = 50

// denseName is the sentence embedder of most of the items of a file about
// to be written (normally the only one).
func denseName(count map[string]int) string {
	best := ""
	for name, n := range count {
		if n > count[best] || (n == count[best] && name < best) {
			best = name
		}
	}
	clear(count)
	return best
}
