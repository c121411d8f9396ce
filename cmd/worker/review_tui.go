package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/memory"
	"github.com/engram-memory/engram/internal/notice"
	"github.com/engram-memory/engram/internal/review"
	"github.com/engram-memory/engram/internal/store"
)

// The review screen: every belief, by level — what waits for review (best
// first), then long-term memory, core memory, denied, pinned, and the
// other pending beliefs (not waiting for review) — with a level filter (tab) and a
// search (/). Enter opens a belief: its statement, level, confidence,
// evidence (the episodes behind it) and history. a approves, d denies, p
// pins, f forgets, e edits the statement in place (recorded as the user's
// own words), t chooses the core file of an approval or a pin. Space
// selects beliefs; a, d, p and f then act on the whole selection, after a
// confirmation that says how many (f always asks). Esc goes back one
// level: out of an edit, a question, the search, a belief, then clears the
// search, the filter and the selection. q quits. Every decision goes
// through review.DecideAndWrite, as `review approve …` does, and a forget
// through memory.Forget, as `forget` does.

// tuiTargets are the core targets t cycles through ("" is the setting's).
var tuiTargets = []string{"", review.TargetClaude, review.TargetAgents, review.TargetBoth}

// Sections of the list, in order, and the filters tab cycles through ("",
// every section).
const (
	secWaiting = "waiting"
	secForming = "pending"
)

var sections = []string{secWaiting, review.LongTerm, review.Core, review.Denied, review.Pinned, secForming}

var filters = append([]string{""}, sections...)

func sectionTitle(sec string) string {
	switch sec {
	case secWaiting:
		return "waiting for review"
	case review.LongTerm:
		return "long-term memory"
	case review.Core:
		return "core memory"
	case secForming:
		return "pending, not waiting for review"
	}
	return review.LevelName(sec)
}

// tuiForgetWait bounds how long the screen waits for a worker cycle before
// a forget (the cycle could write files from what it read before).
const tuiForgetWait = 2 * time.Second

// The screen's views, innermost last; Esc leaves the innermost.
type tuiView int

const (
	viewList tuiView = iota
	viewBelief
)

type reviewRow struct {
	sec string
	it  review.Item // Proposed and Why are set for a waiting belief
}

type reviewModel struct {
	ctx  context.Context
	s    *session
	co   review.CoreOptions
	mode string

	rows     []reviewRow // every belief, by section
	counts   map[string]int
	visible  []int // indexes in rows the filter and the search let through
	cursor   int   // index in visible
	selected map[string]bool
	filter   int // index in filters
	search   string
	target   int // index in tuiTargets

	view    tuiView
	detail  []string // the open belief's lines
	openID  string
	scroll  int // the first line of detail shown
	width   int
	height  int
	message string
	err     error

	// Modes over a view: the search field, the statement's editor, a
	// question waiting for y or n.
	searching bool
	searchIn  lineEdit
	editing   bool
	editID    string
	edit      lineEdit
	asking    string
	onYes     func()
}

func newReviewModel(ctx context.Context, s *session, co review.CoreOptions) *reviewModel {
	m := &reviewModel{ctx: ctx, s: s, co: co, mode: s.cfg.Review, selected: map[string]bool{}, width: 100, height: 40}
	m.reload()
	return m
}

// reload reads every belief again, keeping the cursor on the same belief
// when it is still shown.
func (m *reviewModel) reload() { m.reloadAt(m.currentID()) }

// reloadAfterDecision reads every belief again, keeping the cursor where
// it was in the list: a belief decided on moves to another level, and the
// next one of the list is the one to look at.
func (m *reviewModel) reloadAfterDecision() { m.reloadAt("") }

// reloadAt reads every belief again and puts the cursor on cur when it is
// shown (else it keeps its place).
func (m *reviewModel) reloadAt(cur string) {
	now := time.Now()
	q, err := review.Queue(m.ctx, m.s.db, m.mode, now)
	if err != nil {
		m.err = err
		return
	}
	all, err := m.s.db.ReviewBeliefs(m.ctx)
	if err != nil {
		m.err = err
		return
	}
	waiting := map[string]bool{}
	rows := make([]reviewRow, 0, len(all))
	for _, it := range q {
		waiting[it.ID] = true
		rows = append(rows, reviewRow{sec: secWaiting, it: it})
	}
	bySec := map[string][]reviewRow{}
	for _, b := range all {
		if waiting[b.ID] {
			continue
		}
		sec := b.Level
		if sec == review.Pending {
			if b.Status != "active" {
				continue
			}
			sec = secForming
		}
		bySec[sec] = append(bySec[sec], reviewRow{sec: sec, it: review.Item{ReviewBelief: b}})
	}
	m.counts = map[string]int{secWaiting: len(q)}
	for _, sec := range sections[1:] {
		rs := bySec[sec]
		slices.SortStableFunc(rs, func(a, b reviewRow) int {
			return cmp.Or(cmp.Compare(b.it.Score(), a.it.Score()), cmp.Compare(a.it.ID, b.it.ID))
		})
		m.counts[sec] = len(rs)
		rows = append(rows, rs...)
	}
	m.rows = rows
	present := map[string]bool{}
	for _, r := range rows {
		present[r.it.ID] = true
	}
	for id := range m.selected {
		if !present[id] {
			delete(m.selected, id)
		}
	}
	m.refilter(cur)
	if err := notice.WriteReview(m.s.cfg.Home, len(q)); err != nil {
		m.s.log.Warn("review notice", "err", err)
	}
}

// refilter recomputes the visible rows, putting the cursor on cur when it
// is among them (else keeping its place).
func (m *reviewModel) refilter(cur string) {
	m.visible = m.visible[:0]
	f, needle := filters[m.filter], strings.ToLower(m.search)
	for i, r := range m.rows {
		if f != "" && r.sec != f {
			continue
		}
		if needle != "" && !strings.Contains(strings.ToLower(r.it.Statement+" "+r.it.ID+" "+r.it.ProjectPath), needle) {
			continue
		}
		m.visible = append(m.visible, i)
	}
	m.cursor = min(m.cursor, max(len(m.visible)-1, 0))
	for i, ri := range m.visible {
		if m.rows[ri].it.ID == cur {
			m.cursor = i
		}
	}
}

// current is the belief under the cursor.
func (m *reviewModel) current() *review.Item {
	if m.cursor < len(m.visible) {
		return &m.rows[m.visible[m.cursor]].it
	}
	return nil
}

// byID finds a belief among the rows.
func (m *reviewModel) byID(id string) *review.Item {
	for i := range m.rows {
		if m.rows[i].it.ID == id {
			return &m.rows[i].it
		}
	}
	return nil
}

func (m *reviewModel) Init() tea.Cmd { return nil }

func (m *reviewModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		return m, nil
	case tea.KeyMsg:
		if msg.Type == tea.KeyCtrlC {
			return m, tea.Quit
		}
		switch {
		case m.asking != "":
			m.updateQuestion(msg)
		case m.editing:
			m.updateEdit(msg)
		case m.searching:
			m.updateSearch(msg)
		case m.view == viewBelief:
			return m, m.updateBelief(msg)
		default:
			return m, m.updateList(msg)
		}
	}
	return m, nil
}

func (m *reviewModel) updateQuestion(k tea.KeyMsg) {
	switch k.String() {
	case "y", "Y":
		yes := m.onYes
		m.asking, m.onYes = "", nil
		yes()
	case "n", "N", "esc":
		m.asking, m.onYes, m.message = "", nil, "nothing done"
	}
}

func (m *reviewModel) updateEdit(k tea.KeyMsg) {
	switch k.Type {
	case tea.KeyEsc:
		m.editing, m.message = false, "edit cancelled"
	case tea.KeyEnter:
		m.editing = false
		m.decide([]string{m.editID}, review.Edit, m.edit.String())
	default:
		m.edit.key(k)
	}
}

func (m *reviewModel) updateSearch(k tea.KeyMsg) {
	switch k.Type {
	case tea.KeyEsc:
		m.searching, m.search = false, ""
	case tea.KeyEnter:
		m.searching = false
	default:
		if !m.searchIn.key(k) {
			return
		}
		m.search = m.searchIn.String()
	}
	cur := ""
	if it := m.current(); it != nil {
		cur = it.ID
	}
	m.refilter(cur)
}

func (m *reviewModel) updateList(k tea.KeyMsg) tea.Cmd {
	m.message = ""
	page := max(m.listHeight()/2, 1)
	switch k.String() {
	case "q":
		return tea.Quit
	case "esc":
		// Back one level: the search, then the filter, then the selection.
		switch {
		case m.search != "":
			m.search = ""
		case m.filter != 0:
			m.filter = 0
		case len(m.selected) > 0:
			clear(m.selected)
		}
		m.refilter(m.currentID())
	case "up", "k":
		m.cursor = max(m.cursor-1, 0)
	case "down", "j":
		m.cursor = min(m.cursor+1, max(len(m.visible)-1, 0))
	case "pgup":
		m.cursor = max(m.cursor-page, 0)
	case "pgdown":
		m.cursor = min(m.cursor+page, max(len(m.visible)-1, 0))
	case "home", "g":
		m.cursor = 0
	case "end", "G":
		m.cursor = max(len(m.visible)-1, 0)
	case "tab", "shift+tab":
		step := 1
		if k.String() == "shift+tab" {
			step = len(filters) - 1
		}
		m.filter = (m.filter + step) % len(filters)
		m.refilter(m.currentID())
	case "/":
		m.searching, m.searchIn = true, newLineEdit(m.search)
	case " ", "x":
		if it := m.current(); it != nil {
			if m.selected[it.ID] {
				delete(m.selected, it.ID)
			} else {
				m.selected[it.ID] = true
			}
			m.cursor = min(m.cursor+1, max(len(m.visible)-1, 0))
		}
	case "enter", "right", "l":
		if it := m.current(); it != nil {
			m.open(it.ID)
		}
	case "t":
		m.target = (m.target + 1) % len(tuiTargets)
	case "a":
		m.act(review.Approve, m.targets())
	case "d":
		m.act(review.Deny, m.targets())
	case "p":
		m.act(review.Pin, m.targets())
	case "f":
		m.act("forget", m.targets())
	case "e":
		if it := m.current(); it != nil {
			m.startEdit(it)
		}
	case "r":
		m.reload()
	}
	return nil
}

func (m *reviewModel) currentID() string {
	if it := m.current(); it != nil {
		return it.ID
	}
	return ""
}

// targets are what an action in the list acts on: the selection, or the
// belief under the cursor.
func (m *reviewModel) targets() []string {
	if len(m.selected) > 0 {
		var ids []string
		for _, r := range m.rows { // in the order shown
			if m.selected[r.it.ID] {
				ids = append(ids, r.it.ID)
			}
		}
		return ids
	}
	if it := m.current(); it != nil {
		return []string{it.ID}
	}
	return nil
}

func (m *reviewModel) updateBelief(k tea.KeyMsg) tea.Cmd {
	m.message = ""
	page := max(m.beliefHeight()-1, 1)
	switch k.String() {
	case "q":
		return tea.Quit
	case "esc", "left", "h", "backspace":
		m.view = viewList
		m.reload()
	case "up", "k":
		m.scroll = max(m.scroll-1, 0)
	case "down", "j":
		m.scroll = min(m.scroll+1, m.maxScroll())
	case "pgup":
		m.scroll = max(m.scroll-page, 0)
	case "pgdown", " ":
		m.scroll = min(m.scroll+page, m.maxScroll())
	case "t":
		m.target = (m.target + 1) % len(tuiTargets)
	case "a":
		m.act(review.Approve, []string{m.openID})
	case "d":
		m.act(review.Deny, []string{m.openID})
	case "p":
		m.act(review.Pin, []string{m.openID})
	case "f":
		m.act("forget", []string{m.openID})
	case "e":
		if it := m.byID(m.openID); it != nil {
			m.startEdit(it)
		}
	}
	return nil
}

func (m *reviewModel) startEdit(it *review.Item) {
	m.editing, m.editID, m.edit, m.message = true, it.ID, newLineEdit(it.Statement), ""
}

// act runs an action on beliefs: at once for one belief (a forget asks
// first), after a question that says how many for a selection.
func (m *reviewModel) act(action string, ids []string) {
	if len(ids) == 0 {
		return
	}
	run := func() {
		if action == "forget" {
			m.forget(ids)
		} else {
			m.decide(ids, action, "")
		}
	}
	verb := map[string]string{review.Approve: "approve", review.Deny: "deny", review.Pin: "pin", "forget": "forget"}[action]
	switch {
	case len(ids) > 1:
		m.asking = fmt.Sprintf("%s %d beliefs (%s)? y/n", verb, len(ids), idList(ids))
	case action == "forget":
		m.asking = fmt.Sprintf("forget %s for good (%s)? y/n", ids[0], clip(m.statementOf(ids[0]), 60))
	default:
		run()
		return
	}
	if action == "forget" {
		m.asking += " — it cannot be undone"
	}
	m.onYes = run
}

func (m *reviewModel) statementOf(id string) string {
	if it := m.byID(id); it != nil {
		return it.Statement
	}
	return ""
}

// idList names a few ids, and how many more.
func idList(ids []string) string {
	if len(ids) <= 3 {
		return strings.Join(ids, ", ")
	}
	return strings.Join(ids[:3], ", ") + fmt.Sprintf(" and %d more", len(ids)-3)
}

// decide makes one decision about each belief, all or nothing.
func (m *reviewModel) decide(ids []string, action, statement string) {
	var reqs []review.Request
	for _, id := range ids {
		req := review.Request{ID: id, Action: action, Statement: statement}
		if action == review.Approve || action == review.Pin {
			req.Target = tuiTargets[m.target]
		}
		reqs = append(reqs, req)
	}
	ds, err := review.DecideAndWrite(m.ctx, m.s.db, m.co, review.ByUser, reqs, time.Now())
	if err != nil {
		m.message = "not decided: " + err.Error()
		return
	}
	var parts []string
	for _, d := range ds {
		text := decisionText(d)
		if note, err := review.CoreNote(m.ctx, m.s.db, m.co, d); err == nil && note != "" {
			text += " (" + note + ")"
		}
		parts = append(parts, text)
	}
	m.message = strings.Join(parts, "; ")
	clear(m.selected)
	if m.view == viewBelief || action == review.Edit {
		m.reload()
	} else {
		m.reloadAfterDecision()
	}
	if m.view == viewBelief {
		m.open(m.openID)
	}
}

// forget forgets beliefs as `engram-worker forget` does.
func (m *reviewModel) forget(ids []string) {
	lk, err := waitWorkerLock(m.ctx, m.s.cfg.Home, tuiForgetWait)
	if err != nil {
		m.message = fmt.Sprintf("not forgotten: a worker run is going on (%v); try again in a moment", err)
		return
	}
	defer lk.Unlock()
	done, err := memory.Forget(m.ctx, m.s.db, m.s.cfg, ids, time.Now(), m.s.log)
	if err != nil && (len(done) == 0 || !errors.Is(err, memory.ErrNotRewritten)) {
		m.message = "not forgotten: " + err.Error()
		return
	}
	var gone []string
	for _, c := range done {
		gone = append(gone, c.ID())
	}
	m.message = "forgot " + strings.Join(gone, ", ")
	if err != nil {
		m.message += " (" + err.Error() + ")"
	}
	clear(m.selected)
	m.view = viewList
	m.reloadAfterDecision()
}

// open shows a belief in full: its statement and level, its evidence (the
// episodes behind it) and its history.
func (m *reviewModel) open(id string) {
	c, err := memory.Load(m.ctx, m.s.db, id)
	if err != nil {
		m.message = "error: " + err.Error()
		return
	}
	b := c.Belief
	rb, err := m.s.db.ReviewBelief(m.ctx, id)
	if err != nil {
		m.message = "error: " + err.Error()
		return
	}
	var lines []string
	add := func(format string, a ...any) { lines = append(lines, fmt.Sprintf(format, a...)) }
	where := b.Scope
	if b.ProjectPath != "" {
		where = "project " + b.ProjectPath
	}
	level := review.LevelName(rb.Level)
	if !rb.LevelSince.IsZero() {
		level += " since " + rb.LevelSince.Local().Format("2006-01-02 15:04")
	}
	if it := m.byID(id); it != nil && it.Proposed != "" {
		level += ", waits for review to become " + review.LevelName(it.Proposed) + " (" + it.Why + ")"
	}
	add("%s · %s · %s · %s", b.ID, level, b.Status, where)
	add("")
	add("  %s", b.Statement)
	add("")
	stated := ""
	if rb.Stated {
		stated = " · stated by the user"
	}
	add("confidence %.2f (α %g, β %g) · evidence %d · kind %s%s", b.Confidence(), b.Alpha, b.Beta, b.EvidenceCount,
		cmp.Or(b.Kind, "-"), stated)
	add("created %s · updated %s", b.CreatedAt.Local().Format("2006-01-02 15:04"), b.UpdatedAt.Local().Format("2006-01-02 15:04"))
	eps, err := m.s.db.EpisodesByID(m.ctx, slices.Concat(b.Supporting, b.Contradicting, b.Partial))
	if err != nil {
		m.message = "error: " + err.Error()
		return
	}
	for _, list := range []struct {
		name string
		ids  []string
	}{{"supporting", b.Supporting}, {"contradicting", b.Contradicting}, {"partly fitting", b.Partial}} {
		if len(list.ids) == 0 && list.name != "supporting" {
			continue
		}
		add("")
		add("%s episodes (%d):", list.name, len(list.ids))
		for _, eid := range list.ids {
			if e, ok := eps[eid]; ok {
				add("  %s  %s  %s", e.ID, e.OccurredAt.Local().Format(time.DateOnly), clip(e.Summary, 100))
			} else {
				add("  %s  (not in the store)", eid)
			}
		}
	}
	if len(c.Links) > 0 {
		add("")
		add("linked beliefs (%d):", len(c.Links))
		for _, l := range c.Links {
			add("  %s  %.2f  %s", l.ID, l.Similarity, clip(l.Statement, 100))
		}
	}
	hist, err := m.s.db.History(m.ctx, id)
	if err != nil {
		m.message = "error: " + err.Error()
		return
	}
	add("")
	add("history (%d):", len(hist))
	for _, ev := range hist {
		line := fmt.Sprintf("  %s  %-12s", ev.At.Local().Format("2006-01-02 15:04"), ev.Action)
		if ev.Cause != "" {
			line += " " + ev.Cause
		}
		if ev.Detail != "" {
			line += ": " + ev.Detail
		}
		if st, ok := ev.After["statement"].(string); ok && ev.Action == store.ActionEdited {
			line += fmt.Sprintf(" (now %q)", clip(st, 60))
		}
		lines = append(lines, line)
	}
	if m.openID != id {
		m.scroll = 0
	}
	m.view, m.openID, m.detail = viewBelief, id, lines
}

func decisionText(d store.Decision) string {
	if d.Decision == review.Edit {
		return fmt.Sprintf("%s edited: now %q", d.BeliefID, clip(d.Statement, 80))
	}
	return fmt.Sprintf("%s %s: %s -> %s", d.BeliefID, d.Decision, review.LevelName(d.Before), review.LevelName(d.After))
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:max(n-1, 0)]) + "…"
}

// wrap joins items with " · " into lines of at most width runes.
func wrap(width int, items ...string) string {
	var b strings.Builder
	n := 0
	for i, it := range items {
		w := utf8.RuneCountInString(it)
		switch {
		case i == 0:
		case n+3+w > width:
			b.WriteString("\n")
			n = 0
		default:
			b.WriteString(" · ")
			n += 3
		}
		b.WriteString(it)
		n += w
	}
	return b.String() + "\n"
}

// cut shortens s to n runes, its blanks as they are.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:max(n-1, 0)]) + "…"
}

// listHeight is how many lines the list may take.
func (m *reviewModel) listHeight() int { return max(m.height-9, 4) }

func (m *reviewModel) View() string {
	if m.err != nil {
		return fmt.Sprintf("engram review: %v\n", m.err)
	}
	var b strings.Builder
	if m.view == viewBelief {
		m.viewBelief(&b)
	} else {
		m.viewList(&b)
	}
	target := tuiTargets[m.target]
	if target == "" {
		target = m.co.Target + " (the setting)"
	}
	fmt.Fprintf(&b, "\ncore target: %s\n", target)
	if it := m.byID(m.focusID()); it != nil && it.Scope != episode.ScopeProject {
		if t := cmp.Or(tuiTargets[m.target], m.co.Target); t == review.TargetAgents || t == review.TargetBoth {
			fmt.Fprintf(&b, "(%s)\n", review.GlobalAgentsNote(t, filepath.Join(m.co.Locations.ClaudeConfigDir, "CLAUDE.md")))
		}
	}
	switch {
	case m.asking != "":
		fmt.Fprintf(&b, "%s\n", m.asking)
	case m.editing:
		fmt.Fprintf(&b, "edit: %s\n(←/→ home end move · enter: save as your own statement · esc: cancel)\n", m.edit.view())
	case m.searching:
		fmt.Fprintf(&b, "search: %s\n(enter: keep · esc: clear)\n", m.searchIn.view())
	case m.view == viewBelief:
		b.WriteString(wrap(m.width, "↑/↓ scroll", "a approve", "d deny", "p pin", "f forget", "e edit", "t target", "esc back", "q quit"))
	default:
		b.WriteString(wrap(m.width, "↑/↓ move", "enter open", "space select", "a approve", "d deny", "p pin", "f forget", "e edit",
			"t target", "/ search", "tab level", "esc back", "q quit"))
	}
	if m.message != "" {
		fmt.Fprintf(&b, "%s\n", m.message)
	}
	return b.String()
}

// focusID is the belief the screen is about: the open one, or the one
// under the cursor.
func (m *reviewModel) focusID() string {
	if m.view == viewBelief {
		return m.openID
	}
	return m.currentID()
}

func (m *reviewModel) viewList(b *strings.Builder) {
	var parts []string
	for _, sec := range sections {
		name := review.LevelName(sec)
		if sec == secWaiting {
			name = "waiting"
		}
		parts = append(parts, fmt.Sprintf("%d %s", m.counts[sec], name))
	}
	parts[0] = "engram review: " + parts[0]
	parts[len(parts)-1] += fmt.Sprintf(" (ENGRAM_REVIEW=%s)", m.mode)
	b.WriteString(wrap(m.width, parts...))
	var state []string
	if f := filters[m.filter]; f != "" {
		state = append(state, "level: "+sectionTitle(f))
	}
	if m.search != "" {
		state = append(state, fmt.Sprintf("search: %q", m.search))
	}
	if n := len(m.selected); n > 0 {
		state = append(state, fmt.Sprintf("%d selected", n))
	}
	if len(state) > 0 {
		fmt.Fprintf(b, "%s (%d shown)\n", strings.Join(state, " · "), len(m.visible))
	}
	b.WriteString("\n")
	if len(m.visible) == 0 {
		if len(m.rows) == 0 {
			b.WriteString("no beliefs yet\n")
		} else {
			b.WriteString("no belief matches\n")
		}
		return
	}
	// Every line of the list, then the window of them around the cursor.
	var lines []string
	at := 0
	sec := ""
	width := max(m.width-8, 20)
	for i, ri := range m.visible {
		r := m.rows[ri]
		if r.sec != sec {
			sec = r.sec
			if len(lines) > 0 {
				lines = append(lines, "")
			}
			lines = append(lines, fmt.Sprintf("%s (%d)", sectionTitle(sec), m.counts[sec]))
		}
		mark := "  "
		if i == m.cursor {
			mark, at = "> ", len(lines)
		}
		box := "[ ]"
		if m.selected[r.it.ID] {
			box = "[x]"
		}
		where := r.it.Scope
		if r.it.ProjectPath != "" {
			where = "project " + r.it.ProjectPath
		}
		what := review.LevelName(r.it.Level)
		if r.it.Proposed != "" {
			what += " -> " + review.LevelName(r.it.Proposed)
		}
		lines = append(lines, cut(fmt.Sprintf("%s%s %s  %.2f  ev %-3d %s  %s", mark, box, r.it.ID, r.it.Confidence(), r.it.EvidenceCount,
			what, where), max(m.width-1, 20)))
		lines = append(lines, "      "+clip(r.it.Statement, width))
	}
	h := m.listHeight()
	start := 0
	if len(lines) > h {
		start = min(max(at-h/2, 0), len(lines)-h)
	}
	end := min(start+h, len(lines))
	if start > 0 {
		fmt.Fprintf(b, "  ↑ %d more lines\n", start)
	}
	for _, l := range lines[start:end] {
		b.WriteString(l + "\n")
	}
	if end < len(lines) {
		fmt.Fprintf(b, "  ↓ %d more lines\n", len(lines)-end)
	}
}

// beliefHeight is how many lines of an open belief the screen shows.
func (m *reviewModel) beliefHeight() int { return max(m.height-6, 4) }

// maxScroll is the first line shown when the open belief's last line is
// at the bottom.
func (m *reviewModel) maxScroll() int {
	if len(m.detail) <= m.beliefHeight() {
		return 0
	}
	return len(m.detail) - (m.beliefHeight() - 1) // a line says what is above
}

func (m *reviewModel) viewBelief(b *strings.Builder) {
	h := m.beliefHeight()
	start := min(m.scroll, m.maxScroll())
	if start > 0 {
		fmt.Fprintf(b, "  ↑ %d more lines\n", start)
		h--
	}
	end := min(start+h, len(m.detail))
	for _, l := range m.detail[start:end] {
		b.WriteString(cut(l, max(m.width-1, 20)) + "\n")
	}
	if end < len(m.detail) {
		fmt.Fprintf(b, "  ↓ %d more lines\n", len(m.detail)-end)
	}
}

// runReviewTUI runs the review screen until the user quits.
func runReviewTUI(ctx context.Context, s *session, co review.CoreOptions, in io.Reader, out io.Writer) error {
	m := newReviewModel(ctx, s, co)
	if m.err != nil {
		return m.err
	}
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out), tea.WithAltScreen())
	_, err := p.Run()
	return err
}
