// Package promote writes what engram has learnt into the MEMORY.md files
// Claude Code really loads, and keeps the store small:
//
//   - belief promotion: the most trusted beliefs go into a marked block at
//     the top of the project's auto-memory MEMORY.md
//     ($CLAUDE_CONFIG_DIR/projects/<sanitized git root>/memory/, or the
//     autoMemoryDirectory setting) or of engram's global MEMORY.md
//     ($ENGRAM_HOME/MEMORY.md, loaded through the import line setup puts in
//     CLAUDE.md); beliefs that lose confidence become "former beliefs",
//     then leave;
//   - graduation: important global episodes go into dated sections of the
//     global MEMORY.md, whose oldest sections move to
//     $ENGRAM_HOME/archive/YYYY-MM.md so that the file stays under the
//     client's reminder thresholds (160 lines, 20,000 characters: past
//     them it asks the model to shrink the file), well within the 200
//     lines it loads;
//   - compression: old episodes nobody ever recalled lose their full
//     context and keep a shorter summary (still found by full-text search).
//
// Everything outside engram's markers is kept byte for byte, and every
// write is safe against Claude Code writing the same file (see fileUpdate).
package promote

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/config"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/gitroot"
	"github.com/engram-memory/engram/internal/lexicon"
	"github.com/engram-memory/engram/internal/recall"
	"github.com/engram-memory/engram/internal/safe"
	"github.com/engram-memory/engram/internal/store"
)

// The rules of promotion.
const (
	// PromoteConfidence and PromoteEvidence make an active belief eligible.
	PromoteConfidence = 0.7
	PromoteEvidence   = 3
	// RemoveConfidence: a former belief below it leaves the file.
	RemoveConfidence = 0.5
	// FormerFor is how long a former belief stays shown at most.
	FormerFor = 30 * 24 * time.Hour
	// MaxActive and MaxFormer cap the bullets of one block.
	MaxActive = 10
	MaxFormer = 5
)

// DefaultGraduateImportance is ENGRAM_GRADUATE_IMPORTANCE's default.
const DefaultGraduateImportance = 0.7

// Limits of the other steps.
const (
	// graduateBatch bounds the episodes graduated in one cycle.
	graduateBatch = 20
	// compressBatch and compressRounds bound the episodes compressed in one
	// cycle.
	compressBatch  = 500
	compressRounds = 4
	// Rune limits of the rendered texts.
	statementMax         = 300
	graduatedSummaryMax  = 240
	compressedSummaryMax = 160
)

// Options tune one pass.
type Options struct {
	Locations Locations
	// Write turns on writing MEMORY.md files (promotion and graduation).
	Write bool
	// GraduateImportance is the importance from which a global episode
	// graduates; less important episodes may be compressed.
	GraduateImportance float64
	// CompressAfter is how long an episode must have gone unchanged and
	// never recalled before it is compressed (0: never).
	CompressAfter time.Duration
	Now           time.Time
	Log           *slog.Logger
	// Core turns on the core-memory files (CLAUDE.md, AGENTS.md; see
	// core.go) when Write is on too; CoreTarget is ENGRAM_CORE_TARGET, the
	// files of a core belief without a target of its own.
	Core       bool
	CoreTarget string
	// Review is ENGRAM_REVIEW: "" or "off" promotes by the numeric gates
	// alone; otherwise a belief must also have reached long-term memory
	// (see internal/review). Either way a denied belief is never shown and
	// a pinned one always is.
	Review string

	// forget are the bullets of forgotten episodes, taken out of the
	// global file's episode block (see Forget).
	forget map[string]bool
	// inCore are the beliefs shown in a core-memory file: not repeated
	// in MEMORY.md.
	inCore map[string]bool
}

// OptionsFrom builds the options of a worker cycle.
func OptionsFrom(cfg config.Config, log *slog.Logger, now time.Time) Options {
	return Options{Locations: LocationsFrom(cfg), Write: cfg.Promote, GraduateImportance: cfg.GraduateImportance,
		CompressAfter: cfg.CompressAfter, Now: now, Log: log, Review: cfg.Review, Core: true, CoreTarget: cfg.CoreTarget}
}

// Stats is what one pass did.
type Stats struct {
	Graduated  int `json:"graduated"`
	Compressed int `json:"compressed"`
	Promoted   int `json:"promoted"`
	Demoted    int `json:"demoted"`
	Removed    int `json:"removed"`
	// Archived counts the dated sections moved to the archive.
	Archived int `json:"archived_sections,omitempty"`
	// Files counts the MEMORY.md files rewritten.
	Files int `json:"files_written,omitempty"`
	// CoreFiles counts the CLAUDE.md and AGENTS.md files rewritten.
	CoreFiles int `json:"core_files_written,omitempty"`
	// Retries counts the times another program (Claude Code) had written
	// a file while engram was writing it: engram started again from that
	// write rather than lose it.
	Retries int `json:"retries,omitempty"`
	// Problems lists the files left alone and why.
	Problems []string `json:"problems,omitempty"`
}

// Run is the promotion step of a worker cycle: compression, then every
// MEMORY.md (the global one with its graduation). A file that cannot be
// written (a symlink out of its directory, a file another program keeps
// rewriting) is reported in Stats.Problems and left for the next cycle;
// only a failing store is an error.
func Run(ctx context.Context, db *store.DB, opt Options) (Stats, error) {
	var st Stats
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	if opt.Now.IsZero() {
		opt.Now = time.Now()
	}
	if opt.GraduateImportance <= 0 {
		opt.GraduateImportance = DefaultGraduateImportance
	}
	var err error
	if st.Compressed, err = compress(ctx, db, opt); err != nil {
		return st, err
	}
	if err := coreStep(ctx, db, &opt, &st); err != nil {
		return st, err
	}
	if opt.Write {
		if err := promoteAll(ctx, db, opt, &st); err != nil {
			return st, err
		}
	}
	opt.Log.Info("promotion", "graduated", st.Graduated, "compressed", st.Compressed, "promoted", st.Promoted,
		"demoted", st.Demoted, "removed", st.Removed, "archived_sections", st.Archived, "files_written", st.Files,
		"problems", len(st.Problems))
	return st, nil
}

// coreStep writes the core-memory files (see core.go) and notes in opt
// which beliefs they show, so that MEMORY.md does not repeat them.
func coreStep(ctx context.Context, db *store.DB, opt *Options, st *Stats) error {
	if !opt.Write || !opt.Core {
		return nil
	}
	plan, err := PlanCore(ctx, db, opt.Locations, opt.CoreTarget, nil)
	if err != nil {
		return err
	}
	res, err := plan.Write(ctx, db, nil, opt.Now)
	if err != nil {
		return err
	}
	st.CoreFiles += len(res.Written)
	for _, p := range res.Problems {
		opt.Log.Warn("core memory: file left alone", "file", p.Path, "err", p.Err)
		st.Problems = append(st.Problems, p.Error())
	}
	opt.inCore = res.Shown
	return nil
}

// target is one MEMORY.md and the beliefs that concern it.
type target struct {
	path       string
	dir        string // the directory it must stay in
	kind       string // global | project
	root       string // the project's git root ("" for the global file or a shared directory)
	graduation bool
	review     string
	inCore     map[string]bool
	// beliefs are those whose file this is now, and those shown in it.
	beliefs []store.PromotionBelief
}

const (
	kindGlobal  = "global"
	kindProject = "project"
)

// promoteAll gathers the targets and updates each.
func promoteAll(ctx context.Context, db *store.DB, opt Options, st *Stats) error {
	loc := opt.Locations
	rows, err := db.PromotionCandidates(ctx, PromoteConfidence, PromoteEvidence)
	if err != nil {
		return err
	}
	files, err := db.MemoryFiles(ctx)
	if err != nil {
		return err
	}
	known := map[string]store.MemoryFile{}
	for _, f := range files {
		known[f.Path] = f
	}
	targets := map[string]*target{}
	get := func(path, root string) *target {
		if t, ok := targets[path]; ok {
			return t
		}
		t := &target{path: path, dir: filepath.Dir(path), kind: kindProject, root: root, review: opt.Review, inCore: opt.inCore}
		if path == loc.GlobalFile() {
			t.kind, t.root, t.dir, t.graduation = kindGlobal, "", loc.EngramHome, true
		} else if loc.AutoMemoryDir != "" && filepath.Dir(path) == loc.AutoMemoryDir {
			t.root = "" // shared by every project
		} else if root == "" {
			t.root = known[path].Root
		}
		targets[path] = t
		return t
	}
	get(loc.GlobalFile(), "")
	for _, f := range files {
		get(f.Path, f.Root)
	}
	cur := map[string]string{} // belief id -> its MEMORY.md now ("" for none)
	why := map[string]string{}
	var stray []store.PromotionChange
	for _, b := range rows {
		path, root, reason := currentTarget(loc, b)
		cur[b.ID], why[b.ID] = path, reason
		if path != "" {
			t := get(path, root)
			t.beliefs = append(t.beliefs, b)
		}
		if b.Shown() && b.PromotedTo != path {
			t := get(b.PromotedTo, "")
			t.beliefs = append(t.beliefs, b)
		}
		if !b.Shown() && (!b.PromotedAt.IsZero() || !b.DemotedAt.IsZero() || b.PromotedTo != "") {
			// Marked promoted without a file (an imported export): clear
			// it; the target promotes it afresh if it qualifies.
			stray = append(stray, store.PromotionChange{ID: b.ID, Op: store.OpRemove, From: b.PromotedTo})
		}
	}
	if len(stray) > 0 {
		if err := db.ApplyPromotion(ctx, store.MemoryFile{}, stray, opt.Now); err != nil {
			return err
		}
	}
	paths := make([]string, 0, len(targets))
	for p := range targets {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		t := targets[p]
		if t.kind == kindProject && t.root != "" {
			if fi, err := os.Stat(t.root); err != nil || !fi.IsDir() {
				opt.Log.Debug("promotion: project directory gone, its MEMORY.md left alone", "root", t.root, "file", t.path)
				continue
			}
		}
		err := safe.Run(func() error { return updateTarget(ctx, db, opt, t, cur, why, st) })
		if safe.IsPanic(err) {
			// One file's failure is that file's problem: the others are
			// still written.
			opt.Log.Error("promotion: MEMORY.md left alone after a failure", "file", t.path, "err", err)
			st.Problems = append(st.Problems, fmt.Sprintf("%s: %v", t.path, err.(*safe.PanicError).Value))
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// eligible reports whether a belief qualifies for promotion by itself
// (where it would go aside): never when denied, always when pinned and
// active; else by the numeric gates and, unless review is off, a level of
// long-term memory or above.
func eligible(b store.PromotionBelief, review string) bool {
	switch b.Level {
	case store.LevelDenied:
		return false
	case store.LevelPinned:
		return b.Status == belief.StatusActive
	}
	if b.Status != belief.StatusActive || b.Confidence() < PromoteConfidence || b.EvidenceCount < PromoteEvidence {
		return false
	}
	if noThing(b) {
		return false
	}
	return review == "" || review == "off" || b.Level == store.LevelLongTerm || b.Level == store.LevelCore
}

// noThing reports whether a belief is about no thing a lasting belief can
// be about (lexicon.NotAThing: "User prefers is.", "Project cli prefers
// #91."), read in the statement's own casing so that a name ("Go") is not
// taken for a verb. Such beliefs are no longer formed; this keeps those a
// store already holds out of MEMORY.md. A statement that does not hold its
// subject (edited by the user) is the user's own words and passes.
func noThing(b store.PromotionBelief) bool {
	if b.Subject == "" {
		return false
	}
	i := strings.Index(strings.ToLower(b.Statement), strings.ToLower(b.Subject))
	if i < 0 || len(b.Statement) < i+len(b.Subject) {
		return false
	}
	return lexicon.NotAThing(b.Statement[i:i+len(b.Subject)]) != ""
}

// score ranks eligible beliefs: confidence × ln(1 + evidence).
func score(b store.PromotionBelief) float64 {
	return b.Confidence() * math.Log(1+float64(max(b.EvidenceCount, 0)))
}

// updateTarget rewrites one MEMORY.md and records what it now shows. A
// file that cannot be written is a problem of the pass, not an error.
func updateTarget(ctx context.Context, db *store.DB, opt Options, t *target, cur, why map[string]string, st *Stats) error {
	var plan beliefPlan
	var grad graduation
	var candidates []episode.Episode
	if t.graduation {
		var err error
		if candidates, err = db.GraduationCandidates(ctx, opt.GraduateImportance, graduateBatch); err != nil {
			return err
		}
	}
	label := opt.Locations.AutoMemoryDir != "" && filepath.Dir(t.path) == opt.Locations.AutoMemoryDir
	var damage []string
	u := &fileUpdate{path: t.path, dir: t.dir}
	u.compute = func(old []byte, exists bool) ([]byte, error) {
		d := parse(string(old), t.graduation)
		d.sections = dropForgotten(d.sections, opt.forget)
		damage = d.damage
		// The room the rest of the file leaves under the client's
		// reminder thresholds (and its load limit in bytes).
		lineRoom := ReminderLines - countLines(d.foreign)
		charRoom := ReminderChars - countChars(d.foreign)
		byteRoom := ByteLimit - len(d.foreign)
		fits := func(block string, lines, chars, bytes int) bool {
			return countLines(block) <= lines && countChars(block) <= chars && len(block) <= bytes
		}
		plan = planBeliefs(t, cur, why, opt.Now, label, func(block string) bool {
			return fits(block, min(BeliefBlockMaxLines, lineRoom), charRoom, byteRoom)
		}, d.nl)
		grad = graduation{}
		var episodes string
		if t.graduation {
			grad = graduate(d.sections, candidates, opt.Now, func(block string) bool {
				return fits(block, lineRoom-countLines(plan.block), charRoom-countChars(plan.block), byteRoom-len(plan.block))
			}, d.nl)
			episodes = grad.block
		}
		if !exists && plan.block == "" && episodes == "" {
			return old, nil
		}
		return []byte(plan.block + episodes + d.foreign), nil
	}
	u.beforeReplace = func() error {
		if len(grad.archive) == 0 {
			return nil
		}
		return archive(ctx, opt.Locations, grad.archive, grad.nl)
	}
	changed, err := u.run(ctx)
	st.Retries += u.retries
	if err != nil {
		p := fmt.Sprintf("%s: %v", t.path, err)
		opt.Log.Warn("promotion: MEMORY.md left alone", "file", t.path, "err", err)
		st.Problems = append(st.Problems, p)
		return nil
	}
	for _, dmg := range damage {
		opt.Log.Warn("promotion: repaired damaged markers", "file", t.path, "damage", dmg)
	}
	file := store.MemoryFile{}
	if changed {
		file = store.MemoryFile{Path: t.path, Kind: t.kind, Root: t.root}
		st.Files++
	}
	if err := db.ApplyPromotion(ctx, file, plan.changes, opt.Now); err != nil {
		return err
	}
	for _, ev := range plan.events {
		opt.Log.Info("promotion: belief "+ev.what, "id", ev.id, "file", t.path, "why", ev.why)
	}
	st.Promoted += plan.promoted
	st.Demoted += plan.demoted
	st.Removed += plan.removed
	if t.graduation {
		if err := db.MarkGraduated(ctx, grad.graduated, opt.Now); err != nil {
			return err
		}
		st.Graduated += len(grad.graduated)
		st.Archived += len(grad.archive)
		for _, s := range grad.archive {
			opt.Log.Info("promotion: section archived", "date", s.date, "bullets", len(s.bullets))
		}
	}
	return nil
}

// beliefPlan is the belief block of one file and what it changes.
type beliefPlan struct {
	block                      string
	changes                    []store.PromotionChange
	promoted, demoted, removed int
	events                     []event
}

type event struct{ id, what, why string }

// planBeliefs decides the belief block of t: the eligible beliefs ranked
// by score (at most MaxActive), then the former ones, most recently
// demoted first (at most MaxFormer), as many as fit (former ones give way
// first). A shown belief that is no longer eligible becomes former; a
// former one leaves when its confidence falls below RemoveConfidence, its
// status is no longer active, or it was demoted FormerFor ago. Both rules
// apply one cycle apart, so a demotion is always shown once. A former
// belief that qualifies again is promoted again.
func planBeliefs(t *target, cur, why map[string]string, now time.Time, label bool, fits func(string) bool, nl string) beliefPlan {
	var p beliefPlan
	type former struct {
		b   store.PromotionBelief
		new bool
	}
	var active []store.PromotionBelief
	var formers []former
	remove := func(b store.PromotionBelief, what, reason string) {
		p.changes = append(p.changes, store.PromotionChange{ID: b.ID, Op: store.OpRemove, From: b.PromotedTo})
		p.removed++
		p.events = append(p.events, event{b.ID, what, reason})
	}
	seen := map[string]bool{}
	for _, b := range t.beliefs {
		if seen[b.ID] {
			continue
		}
		seen[b.ID] = true
		here := cur[b.ID] == t.path
		shownHere := b.Shown() && b.PromotedTo == t.path
		wasFormer := shownHere && !b.DemotedAt.IsZero()
		switch {
		case shownHere && b.Level == store.LevelDenied:
			remove(b, "removed", "denied by review")
		case shownHere && t.inCore[b.ID]:
			remove(b, "removed", "in core memory")
		case here && eligible(b, t.review) && !t.inCore[b.ID]:
			active = append(active, b)
		case shownHere && !here:
			reason := why[b.ID]
			if reason == "" {
				reason = "it now belongs in " + cur[b.ID]
			}
			remove(b, "removed", reason)
		case shownHere && !wasFormer:
			b.DemotedAt = now
			formers = append(formers, former{b, true})
		case wasFormer:
			c := b.Confidence()
			switch {
			case c < RemoveConfidence:
				remove(b, "removed", fmt.Sprintf("confidence %.2f is below %.2f", c, RemoveConfidence))
			case b.Status != belief.StatusActive:
				remove(b, "removed", "status "+b.Status)
			case now.Sub(b.DemotedAt) >= FormerFor:
				remove(b, "removed", "demoted on "+b.DemotedAt.Format(time.DateOnly))
			default:
				b.DemotedAt = b.DemotedAt.In(now.Location())
				formers = append(formers, former{b, false})
			}
		}
	}
	pinned := func(b store.PromotionBelief) int {
		if b.Level == store.LevelPinned {
			return 1
		}
		return 0
	}
	// Among equals, what the user said in a short sentence of their own
	// (a belief shown with their words, quoted or as its very statement)
	// before what was drawn from a long
	// message, where a pasted prompt or a task's details may have said it.
	said := make(map[string]int, len(active))
	for _, b := range active {
		if w := userWords(b); w != "" && recall.Restates(b.Statement, w) {
			said[b.ID] = 1
		}
	}
	slices.SortFunc(active, func(a, b store.PromotionBelief) int {
		return cmp.Or(cmp.Compare(pinned(b), pinned(a)), cmp.Compare(score(b), score(a)), cmp.Compare(b.Confidence(), a.Confidence()),
			cmp.Compare(said[b.ID], said[a.ID]), a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	active = oneFirstPerStatement(active)
	slices.SortFunc(formers, func(a, b former) int {
		return cmp.Or(b.b.DemotedAt.Compare(a.b.DemotedAt), cmp.Compare(b.b.PromotedConfidence, a.b.PromotedConfidence),
			cmp.Compare(a.b.ID, b.b.ID))
	})
	// Two beliefs of one clause ("I prefer tabs over spaces in
	// Makefiles": tabs, and no spaces) read the same: one bullet shows both.
	activeLines := make([]string, len(active))
	shown := make(map[string]bool, len(active))
	for i, b := range active {
		k := strings.ToLower(strings.TrimRight(b.Statement, ". "))
		if !shown[k] {
			activeLines[i] = activeBullet(b, label)
		}
		shown[k] = true
	}
	formerLines := make([]string, len(formers))
	for i, f := range formers {
		formerLines[i] = formerBullet(f.b, label)
	}
	nA, nF := min(MaxActive, len(active)), min(MaxFormer, len(formers))
	for {
		p.block = renderBeliefs(activeLines[:nA], formerLines[:nF], nl)
		if p.block == "" || fits(p.block) {
			break
		}
		if nF > 0 {
			nF--
		} else {
			nA--
		}
	}
	for i, b := range active {
		shownActive := b.Shown() && b.PromotedTo == t.path && b.DemotedAt.IsZero()
		switch {
		case i < nA && shownActive:
			p.changes = append(p.changes, store.PromotionChange{ID: b.ID, Op: store.OpKeep, From: b.PromotedTo, Confidence: b.Confidence()})
		case i < nA:
			p.changes = append(p.changes, store.PromotionChange{ID: b.ID, Op: store.OpPromote, Target: t.path, Confidence: b.Confidence()})
			p.promoted++
			what := "promoted"
			if b.PromotedTo == t.path {
				what = "promoted again"
			}
			p.events = append(p.events, event{b.ID, what, fmt.Sprintf("confidence %.2f, evidence %d", b.Confidence(), b.EvidenceCount)})
		case b.PromotedTo == t.path && b.Shown():
			remove(b, "removed", "no room: higher-ranked beliefs fill the block")
		}
	}
	for i, f := range formers {
		switch {
		case i < nF && f.new:
			p.changes = append(p.changes, store.PromotionChange{ID: f.b.ID, Op: store.OpDemote, From: f.b.PromotedTo})
			p.demoted++
			reason := fmt.Sprintf("confidence %.2f", f.b.Confidence())
			if f.b.Status != belief.StatusActive {
				reason = "status " + f.b.Status
			}
			p.events = append(p.events, event{f.b.ID, "demoted", reason})
		case i >= nF:
			remove(f.b, "removed", "no room for more former beliefs")
		}
	}
	return p
}

// oneFirstPerStatement keeps the order of ranked beliefs but moves the
// second and later beliefs first stated in the same exchange after all the
// others: one sentence ("I prefer to adopt pets from shelters rather than
// buying from breeders") can make two beliefs, whose bullets would both
// quote it, and take two of the MaxActive places from what the user said
// elsewhere. Pinned beliefs keep their place.
func oneFirstPerStatement(ranked []store.PromotionBelief) []store.PromotionBelief {
	seen := map[string]bool{}
	first := make([]store.PromotionBelief, 0, len(ranked))
	var later []store.PromotionBelief
	for _, b := range ranked {
		k := b.FirstEvidence
		if k != "" && seen[k] && b.Level != store.LevelPinned {
			later = append(later, b)
			continue
		}
		if k != "" {
			seen[k] = true
		}
		first = append(first, b)
	}
	return append(first, later...)
}

// activeBullet renders "- <statement> (confidence: 0.85, evidence: 7)",
// with the user's own words after the statement when the belief was first
// stated in a short sentence of theirs: `- User avoids floral fragrances.
// ("I dislike floral fragrances in beauty products.") (…)`. A belief's
// statement is a normalised summary; what the user said carries what it
// leaves out.
func activeBullet(b store.PromotionBelief, label bool) string {
	text := oneLine(b.Statement, statementMax)
	if said := saidIn(b); said != "" {
		text += ` ("` + said + `")`
	}
	return fmt.Sprintf("- %s (%sconfidence: %.2f, evidence: %d)", text, projectLabel(b, label),
		b.Confidence(), b.EvidenceCount)
}

// saidMax bounds the user's words quoted after a statement.
const saidMax = 200

// saidIn is the user's sentence a belief was first stated in, when it is a
// short statement of theirs that says more than the statement itself (""
// otherwise).
func saidIn(b store.PromotionBelief) string {
	said := userWords(b)
	// A statement in the user's own words (their clause) needs no quote.
	if said == "" || strings.Contains(strings.ToLower(said), strings.ToLower(strings.TrimRight(b.Statement, ". "))) ||
		!recall.Restates(b.Statement, said) {
		return ""
	}
	return said
}

// userWords is the user's sentence a belief was first stated in, when it
// is a short statement of theirs ("" otherwise), as a bullet quotes it.
func userWords(b store.PromotionBelief) string {
	if b.FirstEvidence == "" || !recall.Stated(b.FirstEvidenceType, b.FirstEvidence) {
		return ""
	}
	said := recall.SaidBy(b.FirstEvidence)
	if said == "" || len(said) > saidMax {
		return ""
	}
	return strings.ReplaceAll(oneLine(said, saidMax), `"`, "'")
}

// formerBullet renders
// "- [NO LONGER TRUE] <statement> (was: 0.78, now: 0.45, demoted: 2026-02-20)".
func formerBullet(b store.PromotionBelief, label bool) string {
	was := b.PromotedConfidence
	if was <= 0 {
		was = b.Confidence()
	}
	return fmt.Sprintf("- [NO LONGER TRUE] %s (%swas: %.2f, now: %.2f, demoted: %s)", oneLine(b.Statement, statementMax),
		projectLabel(b, label), was, b.Confidence(), b.DemotedAt.Format(time.DateOnly))
}

// projectLabel names a project belief's project in a MEMORY.md every
// project shares (an autoMemoryDirectory).
func projectLabel(b store.PromotionBelief, label bool) string {
	if !label || b.Scope != episode.ScopeProject {
		return ""
	}
	name := b.Project
	if name == "" {
		name = gitroot.Name(b.ProjectPath)
	}
	name = strings.NewReplacer(",", " ", "(", " ", ")", " ").Replace(oneLine(name, 60))
	return "project: " + name + ", "
}

// currentTarget is the MEMORY.md a belief belongs in now, or "" with the
// reason it has none.
func currentTarget(loc Locations, b store.PromotionBelief) (path, root, why string) {
	switch b.Scope {
	case episode.ScopeGlobal:
		return loc.GlobalFile(), "", ""
	case episode.ScopeProject:
		if b.ProjectPath == "" {
			return "", "", "orphaned: a project belief without a project path"
		}
		root, ok := ProjectRoot(b.ProjectPath)
		if !ok {
			return "", "", "its project directory " + b.ProjectPath + " no longer exists"
		}
		return loc.ProjectFile(root), root, ""
	}
	return "", "", "unknown scope " + b.Scope
}
