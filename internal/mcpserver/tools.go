package mcpserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/embed/minilm"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/extract"
	"github.com/engram-memory/engram/internal/gitroot"
	"github.com/engram-memory/engram/internal/ingest"
	"github.com/engram-memory/engram/internal/inject"
	"github.com/engram-memory/engram/internal/memory"
	"github.com/engram-memory/engram/internal/recall"
	"github.com/engram-memory/engram/internal/recollect"
	"github.com/engram-memory/engram/internal/redact"
	"github.com/engram-memory/engram/internal/store"
	"github.com/engram-memory/engram/internal/thread"
	"github.com/engram-memory/engram/internal/worker"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool names; the client offers them as mcp__engram__<name>.
const (
	ToolRecall = "memory_recall"
	ToolExpand = "memory_expand"
	ToolForget = "memory_forget"
	ToolSave   = "memory_save"
	ToolStatus = "memory_status"
	ToolTrace  = "memory_trace"
)

// Bounds of the inputs.
const (
	DefaultLimit = 10
	MaxLimit     = 50
	maxQuery     = 2000
	// MaxSave bounds a saved memory: an episode's context holds
	// extract.MaxContext bytes.
	MaxSave = extract.MaxContext
	// SaveImportance is the least importance of a saved memory: the user
	// asked for it.
	SaveImportance = 0.9
	// lineText bounds the text of one recall line, in bytes.
	lineText = 400
)

// Scopes a tool takes.
const (
	scopeAll     = "all"
	scopeProject = episode.ScopeProject
	scopeGlobal  = episode.ScopeGlobal
)

// placeholders match what redaction puts in place of a secret or a
// <private> part.
var placeholders = regexp.MustCompile(`\[REDACTED:[A-Za-z0-9_-]+\]`)

// RecallInput is memory_recall's arguments.
type RecallInput struct {
	Query   string `json:"query"`
	Limit   int    `json:"limit,omitempty"`
	Project string `json:"project,omitempty"`
	Scope   string `json:"scope,omitempty"`
}

// IDInput is the arguments of memory_expand.
type IDInput struct {
	ID string `json:"id"`
}

// ForgetInput is memory_forget's arguments: an id, or a text to forget
// every memory holding it (listed first; forgotten when Confirm is set).
type ForgetInput struct {
	ID       string `json:"id,omitempty"`
	Matching string `json:"matching,omitempty"`
	Confirm  bool   `json:"confirm,omitempty"`
}

// SaveInput is memory_save's arguments.
type SaveInput struct {
	Text  string `json:"text"`
	Scope string `json:"scope,omitempty"`
}

// TraceInput is memory_trace's arguments.
type TraceInput struct {
	Topic string `json:"topic,omitempty"`
}

// StatusInput is memory_status's (no) arguments.
type StatusInput struct{}

const recallSchema = `{
  "type": "object",
  "properties": {
    "query": {"type": "string", "minLength": 1, "maxLength": 2000,
      "description": "What to look for, in plain words: names, tools, files, decisions (e.g. \"billing schema decision\", \"how we deploy the API\")."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10,
      "description": "The most memories to return, best first (default 10)."},
    "project": {"type": "string",
      "description": "Absolute path of a project directory to recall for (its git root is the project). Default: the project this session runs in."},
    "scope": {"type": "string", "enum": ["all", "project", "global"], "default": "all",
      "description": "all: the project's memories and global ones (default); project: only the project's; global: only those that hold in every project (the user's general preferences)."}
  },
  "required": ["query"],
  "additionalProperties": false
}`

const idSchema = `{
  "type": "object",
  "properties": {
    "id": {"type": "string", "pattern": "^(ep|bl)_[A-Za-z0-9_-]+$", "maxLength": 64,
      "description": "The memory's ID as memory_recall or engram's recalled notes show it: ep_… (an episode) or bl_… (a belief)."}
  },
  "required": ["id"],
  "additionalProperties": false
}`

const forgetSchema = `{
  "type": "object",
  "properties": {
    "id": {"type": "string", "pattern": "^(ep|bl)_[A-Za-z0-9_-]+$", "maxLength": 64,
      "description": "The memory's ID as memory_recall or engram's recalled notes show it: ep_… (an episode) or bl_… (a belief)."},
    "matching": {"type": "string", "minLength": 1, "maxLength": 200,
      "description": "Instead of an ID: forget every episode and belief that holds this text (its words in this order, or the text itself), e.g. a name the user wants gone. Without confirm it only lists what matches."},
    "confirm": {"type": "boolean", "default": false,
      "description": "With matching: forget what matches. Set it only after the user has seen the list and agreed."}
  },
  "additionalProperties": false
}`

const saveSchema = `{
  "type": "object",
  "properties": {
    "text": {"type": "string", "minLength": 1, "maxLength": 4000,
      "description": "What to remember, as one self-contained statement in the user's terms, e.g. \"The billing service deploys to Fly with flyctl deploy --app billing-prod\" or \"I prefer table-driven tests\"."},
    "scope": {"type": "string", "enum": ["project", "global"],
      "description": "project: it holds in this project only; global: it holds in every project (personal preferences, habits). Default: decided from the text (\"I always…\", \"in all my projects\" make it global)."}
  },
  "required": ["text"],
  "additionalProperties": false
}`

const traceSchema = `{
  "type": "object",
  "properties": {
    "topic": {"type": "string", "maxLength": 2000,
      "description": "The thread of work to show: topic words (e.g. \"cache layer redesign\", \"flaky parser test\"), or an ID (tr_… a trace, bx_… a box, ep_… an episode in it). Empty: list this project's threads."}
  },
  "additionalProperties": false
}`

const statusSchema = `{"type": "object", "properties": {}, "additionalProperties": false}`

func (s *Server) addTools() {
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)}
	tool(s, &mcp.Tool{Name: ToolRecall, Title: "Recall memories", Annotations: readOnly, Description: "Search engram, " +
		"the user's long-term memory of earlier Claude Code sessions, for past decisions, preferences, facts, fixes and " +
		"conventions. Use it when the user refers to an earlier session (\"what did we decide about…\", \"like last " +
		"time\", \"as I told you\"), when you need project history that is not in the code or the notes already in " +
		"context, or before asking the user something they may have told you before. It returns one line per memory, " +
		"best first: [E] an episode (one past exchange) or [B] a belief (a generalisation over several episodes, with " +
		"its confidence), its date and its ID. It searches this project's memories and global ones; another project's " +
		"never. Memories may be outdated: prefer what the user says now and what the code shows. Read one in full with " +
		"memory_expand."}, recallSchema, s.recall)
	tool(s, &mcp.Tool{Name: ToolExpand, Title: "Read a memory in full", Annotations: &mcp.ToolAnnotations{
		IdempotentHint: true, DestructiveHint: new(false), OpenWorldHint: new(false)}, Description: "Show one memory of " +
		"engram in full by its ID (ep_… or bl_…, from memory_recall or from engram's recalled notes). For an episode: " +
		"the recorded exchange, its entities and signals, project and sessions. For a belief: its statement, structured " +
		"fields, confidence (α/β), status, evidence count, supporting and contradicting episode IDs, revisions, parent " +
		"and children. Use it when a recalled line is too short to act on, or to check the evidence behind a belief " +
		"before relying on it. Reading a memory strengthens it (it counts as an access)."}, idSchema, s.expand)
	tool(s, &mcp.Tool{Name: ToolForget, Title: "Forget a memory", Annotations: &mcp.ToolAnnotations{
		DestructiveHint: new(true), IdempotentHint: true, OpenWorldHint: new(false)}, Description: "Delete one memory " +
		"of engram (id: ep_… or bl_…) for good, with its index entries; it is never recalled again, and a line it had in " +
		"MEMORY.md goes at once. Or forget everything about something (matching: a text): the first call lists every " +
		"episode and belief that holds the text and deletes nothing; show the list to the user, and only when they agree " +
		"call again with the same text and confirm: true. Use it only when the user asks to forget something, or confirms " +
		"that a recalled memory is wrong or obsolete, not merely because it did not help. It cannot be undone. An " +
		"unknown ID is refused and nothing is deleted."}, forgetSchema, s.forget)
	tool(s, &mcp.Tool{Name: ToolSave, Title: "Remember something", Annotations: &mcp.ToolAnnotations{
		DestructiveHint: new(false), OpenWorldHint: new(false)}, Description: "Store something in engram, the user's " +
		"long-term memory, as a high-importance memory: recallable at once in this and later sessions, and counted as " +
		"evidence when engram next consolidates its beliefs. Use it when the user explicitly asks you to remember " +
		"something (\"remember that…\", \"note for next time…\", \"from now on I want…\"). Write a self-contained " +
		"statement in the user's terms. Do not save routine conversation: engram " +
		"records every session by itself. Secrets and <private> parts are removed before anything is stored."},
		saveSchema, s.save)
	tool(s, &mcp.Tool{Name: ToolStatus, Title: "engram status", Annotations: readOnly, Description: "Report the state " +
		"of engram's memory store: episodes, beliefs by status, pending and failed captures, the last worker run, the " +
		"extractor and embedder in use, and any problem with the installation (missing hooks, a worker that has not " +
		"run lately, captures waiting in the spool). Use it when the user asks about engram, or when recall finds " +
		"nothing where it should."}, statusSchema, s.status)
	tool(s, &mcp.Tool{Name: ToolTrace, Title: "Follow a thread of work", Annotations: readOnly, Description: "Show a " +
		"thread of work in this project as a timeline: the boxes of episodes engram gathered on one topic across " +
		"sessions and days (\"the cache-layer redesign\", \"the flaky parser test\"), with their dates, key terms and key " +
		"memories (episode IDs to read with memory_expand). Use it when the user asks why something was designed the " +
		"way it is, how a piece of work went, or what was tried before; recall finds single memories, a trace finds the " +
		"sequence. Without a topic it lists the project's threads."}, traceSchema, s.trace)
	s.addReviewTool()
}

// trace is memory_trace: this project's threads, or one as a timeline.
func (s *Server) trace(ctx context.Context, in TraceInput) (string, error) {
	db, err := s.store(ctx)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	topic := strings.TrimSpace(in.Topic)
	if topic == "" {
		ts, err := thread.Traces(ctx, db, s.opts.Project)
		if err != nil {
			return "", err
		}
		thread.WriteList(&b, ts)
		return inject.Wrap(strings.TrimRight(b.String(), "\n")), nil
	}
	t, err := thread.Find(ctx, db, topic, s.opts.Project)
	if errors.Is(err, thread.ErrNoTrace) || errors.Is(err, store.ErrNotFound) {
		return "", fmt.Errorf("%v: memory_trace with no topic lists this project's threads", err)
	}
	if err != nil {
		return "", err
	}
	thread.WriteTimeline(&b, t)
	return inject.Wrap(strings.TrimRight(b.String(), "\n")), nil
}

// project resolves a recall's project argument: the session's project when
// empty, else the git root of an absolute directory.
func (s *Server) project(arg string) (string, error) {
	arg = strings.TrimSpace(arg)
	if arg == "" {
		return s.opts.Project, nil
	}
	if !filepath.IsAbs(arg) {
		return "", fmt.Errorf("project %q: want the absolute path of a project directory (default: this session's project, %s)", arg, cmp.Or(s.opts.Project, "none"))
	}
	root, _ := gitroot.Find(arg)
	return root, nil
}

func parseScope(arg string, allowAll bool) (string, error) {
	switch arg = strings.TrimSpace(arg); arg {
	case "":
		if allowAll {
			return scopeAll, nil
		}
		return "", nil
	case scopeProject, scopeGlobal:
		return arg, nil
	case scopeAll:
		if allowAll {
			return arg, nil
		}
	}
	if allowAll {
		return "", fmt.Errorf("scope %q: want all, project or global", arg)
	}
	return "", fmt.Errorf("scope %q: want project or global", arg)
}

// recall is memory_recall: the prompt hook's recall (recollection files and
// one FTS query, one blend), checked against the store, so that only what
// still exists, is active and is visible from the project is shown.
func (s *Server) recall(ctx context.Context, in RecallInput) (string, error) {
	q := strings.TrimSpace(in.Query)
	if q == "" {
		return "", errors.New(`query is empty: say what to look for, e.g. "billing schema decision"`)
	}
	if len(q) > maxQuery {
		return "", fmt.Errorf("query is %d bytes long; keep it under %d: a few words work best", len(q), maxQuery)
	}
	limit := in.Limit
	if limit == 0 {
		limit = DefaultLimit
	}
	if limit < 1 || limit > MaxLimit {
		return "", fmt.Errorf("limit %d: want 1 to %d", limit, MaxLimit)
	}
	scope, err := parseScope(in.Scope, true)
	if err != nil {
		return "", err
	}
	root, err := s.project(in.Project)
	if err != nil {
		return "", err
	}
	if scope == scopeProject && root == "" {
		return "", errors.New(`scope "project": this session has no project directory; pass project`)
	}
	db, err := s.store(ctx)
	if err != nil {
		return "", err
	}
	now := s.opts.Now()
	search, done := recollect.Searcher(ctx, s.cfg.Home, db)
	defer done()
	r := recall.New(s.cfg.Home, search)
	if err := r.UsePolicyFile(s.cfg.RecallPolicy); err != nil {
		s.log.Warn("recall policy", "err", err)
	}
	if m := minilm.OpenInstalled(s.cfg.ModelDir(), s.cfg.SentenceEmbedder); m != nil {
		defer m.Close()
		r.Dense = m
	}
	r.FTSLimit = max(r.FTSLimit, 40, limit*4) // a superset of what the hook searches
	res := r.Find(ctx, recall.Query{Text: q, ProjectPath: root, Now: now})
	for _, p := range res.Problems {
		s.log.Warn("recall", "problem", p)
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	cands := append(append([]recall.Candidate{}, res.Beliefs...), res.Episodes...)
	slices.SortStableFunc(cands, func(a, b recall.Candidate) int { return cmp.Compare(b.Score, a.Score) })

	where := "global memories"
	switch {
	case scope == scopeProject:
		where = "project " + gitroot.Name(root)
	case scope == scopeAll && root != "":
		where = "project " + gitroot.Name(root) + " and global memories"
	}
	var lines []string
	for _, c := range cands {
		if len(lines) >= limit {
			break
		}
		line, ok, err := recallLine(ctx, db, c, root, scope, now)
		if err != nil {
			return "", err
		}
		if ok {
			lines = append(lines, line)
		}
	}
	if len(lines) == 0 {
		return fmt.Sprintf("engram has no memory matching %q (searched: %s). Try other words, or a wider scope.", q, where), nil
	}
	noun := "memories"
	if len(lines) == 1 {
		noun = "memory"
	}
	text := fmt.Sprintf("%d %s for %q (%s), best first; [E] an episode, [B] a belief:\n%s\n"+
		"Read one in full with memory_expand and its ID. These notes may be outdated: prefer what the user says now and what the code shows.",
		len(lines), noun, q, where, strings.Join(lines, "\n"))
	return inject.Wrap(text), nil
}

// visible reports whether a memory of scope and project path may be shown
// for a recall from root restricted to scope filter.
func visible(scope, path, root, filter string) bool {
	switch scope {
	case episode.ScopeGlobal:
		return filter != scopeProject
	case episode.ScopeProject:
		return filter != scopeGlobal && root != "" && path == root
	}
	return false
}

// recallLine renders one candidate from its stored row; ok is false for a
// memory that is gone, not active, or not visible from root.
func recallLine(ctx context.Context, db *store.DB, c recall.Candidate, root, filter string, now time.Time) (string, bool, error) {
	if c.Kind == recall.KindBelief {
		b, err := db.GetBelief(ctx, c.ID)
		if errors.Is(err, store.ErrNotFound) {
			return "", false, nil
		}
		if err != nil {
			return "", false, err
		}
		if b.Status != belief.StatusActive || !visible(b.Scope, b.ProjectPath, root, filter) {
			return "", false, nil
		}
		at := b.LastReinforcedAt
		for _, t := range []time.Time{b.UpdatedAt, b.CreatedAt} {
			if at.IsZero() {
				at = t
			}
		}
		label := fmt.Sprintf("%s, confidence: %.2f", day(at, now), b.Confidence())
		if b.Scope == episode.ScopeProject && b.Project != "" {
			label += ", project " + b.Project
		}
		return fmt.Sprintf("[B] (%s) %s — ID: %s", label, clipLine(b.Statement), b.ID), true, nil
	}
	ep, err := db.GetEpisode(ctx, c.ID)
	if errors.Is(err, store.ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	if !visible(ep.Scope, ep.ProjectPath, root, filter) {
		return "", false, nil
	}
	if ep.Lifecycle != "" && ep.Lifecycle != episode.LifecycleSuperseded {
		return "", false, nil // archived or expired since the files were written
	}
	label := day(ep.OccurredAt, now)
	if ep.Scope == episode.ScopeProject && ep.Project != "" {
		label += ", project " + ep.Project
	}
	if ep.Lifecycle == episode.LifecycleSuperseded {
		replaced, at := c.Replaced, c.ReplacedAt
		if replaced == "" {
			if ss, err := db.Supersessions(ctx, []string{ep.ID}); err == nil {
				replaced, at = recall.Replacement(ep.Summary+"\n"+ep.Context, ss[ep.ID].Context), ss[ep.ID].At
			}
		}
		label += ", " + recall.SupersededLabel(replaced, at, now)
	}
	return fmt.Sprintf("[E] (%s) %s — ID: %s", label, clipLine(ep.Summary), ep.ID), true, nil
}

// day is a memory's date: "Feb 24", with the year when it is not this one.
func day(t, now time.Time) string {
	if t.IsZero() {
		return "undated"
	}
	t = t.In(now.Location())
	if t.Year() == now.Year() {
		return t.Format("Jan 2")
	}
	return t.Format("Jan 2, 2006")
}

// clipLine folds white space and cuts at lineText bytes.
func clipLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= lineText {
		return s
	}
	cut := lineText - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func checkID(raw string) (string, error) {
	id := strings.TrimSpace(raw)
	if err := memory.CheckID(id); err != nil {
		return "", fmt.Errorf("%w, as memory_recall shows them", err)
	}
	return id, nil
}

// expand is memory_expand: the card of one memory, counted as an access.
func (s *Server) expand(ctx context.Context, in IDInput) (string, error) {
	id, err := checkID(in.ID)
	if err != nil {
		return "", err
	}
	db, err := s.store(ctx)
	if err != nil {
		return "", err
	}
	c, err := memory.Load(ctx, db, id)
	if errors.Is(err, store.ErrNotFound) {
		return "", fmt.Errorf("%v: it was forgotten, or the ID is mistyped; memory_recall finds memories and their IDs", err)
	}
	if err != nil {
		return "", err
	}
	if logged, err := memory.RecordAccess(ctx, db, s.cfg.Home, id, s.opts.Now()); err != nil {
		s.log.Warn("record access", "id", id, "err", err)
	} else if logged {
		s.log.Info("record access: store busy, access logged for the worker", "id", id)
	}
	var b strings.Builder
	memory.Write(&b, c)
	return inject.Wrap(strings.TrimRight(b.String(), "\n")), nil
}

// forgetWorkerWait bounds how long memory_forget waits for a worker cycle.
const forgetWorkerWait = 2 * time.Second

// lockWorker takes the worker's lock, waiting up to wait for a cycle to end.
func lockWorker(ctx context.Context, home string, wait time.Duration) (interface{ Unlock() error }, error) {
	deadline := time.Now().Add(wait)
	for {
		lk, err := worker.Lock(home)
		if err == nil || !errors.Is(err, worker.ErrBusy) || !time.Now().Before(deadline) {
			return lk, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// maxMatchesShown bounds the memories memory_forget lists for a text.
const maxMatchesShown = 30

// forget is memory_forget.
func (s *Server) forget(ctx context.Context, in ForgetInput) (string, error) {
	matching := strings.TrimSpace(in.Matching)
	switch {
	case in.ID != "" && matching != "":
		return "", errors.New("give id or matching, not both")
	case in.Matching != "" && matching == "":
		return "", fmt.Errorf("matching %q: give the text to look for", in.Matching)
	case matching != "":
		return s.forgetMatching(ctx, matching, in.Confirm)
	case in.Confirm:
		return "", errors.New("confirm goes with matching (forgetting by id asks nothing)")
	}
	id, err := checkID(in.ID)
	if err != nil {
		return "", err
	}
	db, err := s.store(ctx)
	if err != nil {
		return "", err
	}
	// A worker cycle running meanwhile could write files from what it read
	// before the forget: wait a moment for it, else say so.
	lk, err := lockWorker(ctx, s.cfg.Home, forgetWorkerWait)
	if err != nil {
		return "", fmt.Errorf("engram's worker is running; nothing was forgotten, try again in a moment (%v)", err)
	}
	defer lk.Unlock()
	done, err := memory.Forget(ctx, db, s.cfg, []string{id}, s.opts.Now(), s.log)
	if err != nil && !errors.Is(err, memory.ErrNotRewritten) {
		return "", err
	}
	if len(done) != 1 {
		return "", fmt.Errorf("%s was not forgotten", id)
	}
	var text string
	if b := done[0].Belief; b != nil {
		text = fmt.Sprintf("Forgot belief %s (%q). It will not be recalled again, and it has left MEMORY.md.",
			id, clipLine(b.Statement))
	} else {
		text = fmt.Sprintf("Forgot episode %s (%q). It will not be recalled again.", id, clipLine(done[0].Episode.Summary))
	}
	if err != nil {
		s.log.Warn("forget: recollection files", "err", err)
		text += " The prompt hook's recollection files could not be rewritten now; the worker's next run does it."
	}
	return inject.Wrap(text), nil
}

// forgetMatching is memory_forget with a text: the list of what holds it,
// or, confirmed, the forgetting of all of it, as forget by id does.
func (s *Server) forgetMatching(ctx context.Context, text string, confirmed bool) (string, error) {
	db, err := s.store(ctx)
	if err != nil {
		return "", err
	}
	lk, err := lockWorker(ctx, s.cfg.Home, forgetWorkerWait)
	if err != nil {
		return "", fmt.Errorf("engram's worker is running; nothing was forgotten, try again in a moment (%v)", err)
	}
	defer lk.Unlock()
	cards, err := memory.Matching(ctx, db, text)
	if err != nil {
		return "", err
	}
	if len(cards) == 0 {
		return inject.Wrap(fmt.Sprintf("No memory holds %q; nothing was forgotten.", text)), nil
	}
	var b strings.Builder
	for i, c := range cards {
		if i == maxMatchesShown {
			fmt.Fprintf(&b, "… and %d more\n", len(cards)-maxMatchesShown)
			break
		}
		b.WriteString(c.Line(160) + "\n")
	}
	if !confirmed {
		return inject.Wrap(fmt.Sprintf("%d memories hold %q (nothing was forgotten yet):\n%sTo forget all %d, once the user "+
			"agrees, call memory_forget again with matching %q and confirm: true.", len(cards), text, b.String(), len(cards), text)), nil
	}
	ids := make([]string, len(cards))
	for i, c := range cards {
		ids[i] = c.ID()
	}
	done, err := memory.Forget(ctx, db, s.cfg, ids, s.opts.Now(), s.log)
	if err != nil && !errors.Is(err, memory.ErrNotRewritten) {
		return "", err
	}
	out := fmt.Sprintf("Forgot %d memories that held %q:\n%sThey will not be recalled again, and they have left MEMORY.md.",
		len(done), text, b.String())
	if err != nil {
		s.log.Warn("forget: recollection files", "err", err)
		out += " The prompt hook's recollection files could not be rewritten now; the worker's next run does it."
	}
	return inject.Wrap(out), nil
}

// save is memory_save: the text goes through redaction and the local
// extractor as a one-message exchange from the user would, and is stored
// at once as an episode of at least SaveImportance, so that it can be
// recalled right away and consolidation counts it with the episodes that
// arrived since its checkpoint.
func (s *Server) save(ctx context.Context, in SaveInput) (string, error) {
	raw := strings.TrimSpace(in.Text)
	if raw == "" {
		return "", errors.New("text is empty: say what to remember")
	}
	if len(raw) > MaxSave {
		return "", fmt.Errorf("text is %d bytes long; a memory holds at most %d: save the gist", len(raw), MaxSave)
	}
	scope, err := parseScope(in.Scope, false)
	if err != nil {
		return "", err
	}
	root := s.opts.Project
	if scope == scopeProject && root == "" {
		return "", errors.New(`scope "project": this session has no project directory; use scope "global"`)
	}
	text, redacted := redact.String(raw)
	text = strings.TrimSpace(text)
	if strings.TrimSpace(placeholders.ReplaceAllString(text, "")) == "" {
		return "", errors.New("nothing is left to save once the <private> parts and secrets are removed")
	}
	db, err := s.store(ctx)
	if err != nil {
		return "", err
	}
	now := s.opts.Now()
	content := "User: " + text
	ex := extract.NewLocal()
	d, err := ex.Extract(ctx, extract.Input{Project: gitroot.Name(root), ProjectPath: root, TurnAt: now, Content: content})
	if err != nil {
		return "", err
	}
	if d.Skip {
		return "", fmt.Errorf("%q holds nothing to remember: state the fact, preference or decision itself", clipLine(text))
	}
	if scope == "" {
		scope = d.Scope
	}
	if scope != scopeGlobal {
		scope = scopeProject
	}
	if root == "" {
		scope = scopeGlobal
	}
	typ := d.Type
	if typ == "" || typ == episode.TypeEvent || typ == episode.TypeQuestion {
		typ = episode.TypeFact
	}
	local := embed.NewLocal()
	ep := episode.Episode{
		ID: store.NewID(memory.EpisodePrefix), Summary: d.Summary, Context: d.Context, Entities: d.Entities, Signals: d.Signals,
		Importance: max(d.Importance, SaveImportance), Type: typ, Scope: scope, Project: gitroot.Name(root), ProjectPath: root,
		Embedding: local.EmbedText(ingest.EmbedText(d)), Embedder: local.Name(), Extractor: ex.Name(),
		OccurredAt: now, CreatedAt: now, UpdatedAt: now, Stability: 1,
		ContentHash: ingest.ContentHash(scope, root, content),
	}
	if sid := s.opts.SessionID; sid != "" {
		ep.SessionID, ep.SessionIDs = sid, []string{sid}
	}
	ep.Kind, ep.Speculative, ep.DueAt = episode.Classify(ep.Type, ep.Signals, []string{d.Summary}, now, false)
	if err := db.ImportEpisodes(ctx, []episode.Episode{ep}); err != nil {
		if !errors.Is(err, store.ErrAlreadyStored) {
			return "", busy(err)
		}
		return "Already remembered: an identical memory is stored, so nothing new was stored. memory_recall finds it.", nil
	}
	// The prompt hook searches the index, not the store: it learns of the
	// new memory now rather than at the worker's next run.
	if _, err := recollect.SyncIndex(ctx, db, s.cfg.Home, recollect.IndexOptions{}, now); err != nil {
		s.log.Warn("save: search index", "err", err)
	}
	where := "this project (" + ep.Project + ")"
	if scope == scopeGlobal {
		where = "every project"
	}
	msg := fmt.Sprintf("Saved as %s: a %s for %s, importance %.2f. It can be recalled from now on, and counts as evidence when engram next consolidates its beliefs.",
		ep.ID, typ, where, ep.Importance)
	if redacted > 0 {
		msg += fmt.Sprintf(" %d secret(s) or <private> part(s) were replaced by [REDACTED:…] before storing.", redacted)
	}
	return msg, nil
}
