package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/notice"
	"github.com/engram-memory/engram/internal/review"
	"github.com/engram-memory/engram/internal/store"
)

// The review screen: what waits, best first, one belief per entry with its
// statement, confidence, evidence and scope; enter shows the episodes
// behind the selected one; a approves, d denies, p pins, e edits the
// statement (recorded as the user's own words), t chooses the core file of
// an approval or a pin, q quits. Every decision goes through
// review.DecideAndWrite, as `review approve …` does.

// maxEpisodesShown bounds the episodes listed under an expanded belief.
const maxEpisodesShown = 5

// tuiTargets are the core targets t cycles through ("" is the setting's).
var tuiTargets = []string{"", review.TargetClaude, review.TargetAgents, review.TargetBoth}

type reviewModel struct {
	ctx  context.Context
	s    *session
	co   review.CoreOptions
	mode string

	items    []review.Item
	cursor   int
	expanded map[string][]string // belief id -> its episodes' lines
	target   int                 // index in tuiTargets
	editing  bool
	edit     []rune
	message  string
	err      error
}

func newReviewModel(ctx context.Context, s *session, co review.CoreOptions) *reviewModel {
	m := &reviewModel{ctx: ctx, s: s, co: co, mode: s.cfg.Review, expanded: map[string][]string{}}
	m.reload()
	return m
}

// reload reads the queue again, keeping the cursor on the same belief
// when it still waits.
func (m *reviewModel) reload() {
	cur := ""
	if m.cursor < len(m.items) {
		cur = m.items[m.cursor].ID
	}
	q, err := review.Queue(m.ctx, m.s.db, m.mode, time.Now())
	if err != nil {
		m.err = err
		return
	}
	m.items = q
	m.cursor = min(m.cursor, max(len(q)-1, 0))
	for i, it := range q {
		if it.ID == cur {
			m.cursor = i
		}
	}
	if err := notice.WriteReview(m.s.cfg.Home, len(q)); err != nil {
		m.s.log.Warn("review notice", "err", err)
	}
}

func (m *reviewModel) Init() tea.Cmd { return nil }

func (m *reviewModel) selected() *review.Item {
	if m.cursor < len(m.items) {
		return &m.items[m.cursor]
	}
	return nil
}

func (m *reviewModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	key, ok := msg.(tea.KeyMsg)
	if !ok {
		return m, nil
	}
	if m.editing {
		return m.updateEdit(key)
	}
	switch key.String() {
	case "q", "esc", "ctrl+c":
		return m, tea.Quit
	case "up", "k":
		m.cursor = max(m.cursor-1, 0)
	case "down", "j":
		m.cursor = min(m.cursor+1, max(len(m.items)-1, 0))
	case "enter", " ":
		m.toggle()
	case "t":
		m.target = (m.target + 1) % len(tuiTargets)
	case "a":
		m.decide(review.Approve, "")
	case "d":
		m.decide(review.Deny, "")
	case "p":
		m.decide(review.Pin, "")
	case "e":
		if it := m.selected(); it != nil {
			m.editing, m.edit, m.message = true, []rune(it.Statement), ""
		}
	case "r":
		m.reload()
	}
	return m, nil
}

func (m *reviewModel) updateEdit(key tea.KeyMsg) (tea.Model, tea.Cmd) {
	switch key.Type {
	case tea.KeyCtrlC:
		return m, tea.Quit
	case tea.KeyEsc:
		m.editing, m.message = false, "edit cancelled"
	case tea.KeyEnter:
		m.editing = false
		m.decide(review.Edit, string(m.edit))
	case tea.KeyBackspace:
		if len(m.edit) > 0 {
			m.edit = m.edit[:len(m.edit)-1]
		}
	case tea.KeyCtrlU:
		m.edit = m.edit[:0]
	case tea.KeySpace:
		m.edit = append(m.edit, ' ')
	case tea.KeyRunes:
		m.edit = append(m.edit, key.Runes...)
	}
	return m, nil
}

// toggle shows or hides the episodes behind the selected belief.
func (m *reviewModel) toggle() {
	it := m.selected()
	if it == nil {
		return
	}
	if _, ok := m.expanded[it.ID]; ok {
		delete(m.expanded, it.ID)
		return
	}
	b, err := m.s.db.GetBelief(m.ctx, it.ID)
	if err != nil {
		m.message = "error: " + err.Error()
		return
	}
	eps, err := m.s.db.EpisodesByID(m.ctx, b.Supporting)
	if err != nil {
		m.message = "error: " + err.Error()
		return
	}
	lines := []string{}
	for _, id := range b.Supporting {
		if len(lines) == maxEpisodesShown {
			lines = append(lines, fmt.Sprintf("… and %d more", len(b.Supporting)-maxEpisodesShown))
			break
		}
		if e, ok := eps[id]; ok {
			lines = append(lines, fmt.Sprintf("%s  %s  %s", e.ID, e.OccurredAt.Format(time.DateOnly), clip(e.Summary, 90)))
		}
	}
	if len(lines) == 0 {
		lines = append(lines, "no supporting episode in the store")
	}
	m.expanded[it.ID] = lines
}

// decide makes one decision about the selected belief.
func (m *reviewModel) decide(action, statement string) {
	it := m.selected()
	if it == nil {
		return
	}
	req := review.Request{ID: it.ID, Action: action, Statement: statement}
	if action == review.Approve || action == review.Pin {
		req.Target = tuiTargets[m.target]
	}
	ds, err := review.DecideAndWrite(m.ctx, m.s.db, m.co, review.ByUser, []review.Request{req}, time.Now())
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
	m.reload()
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
	return string([]rune(s)[:n-1]) + "…"
}

func (m *reviewModel) View() string {
	var b strings.Builder
	if m.err != nil {
		fmt.Fprintf(&b, "engram review: %v\n", m.err)
		return b.String()
	}
	n := len(m.items)
	switch n {
	case 0:
		fmt.Fprintf(&b, "engram review: nothing waits (ENGRAM_REVIEW=%s)\n\n", m.mode)
	case 1:
		fmt.Fprintf(&b, "engram review: 1 belief waits (ENGRAM_REVIEW=%s)\n\n", m.mode)
	default:
		fmt.Fprintf(&b, "engram review: %d beliefs wait (ENGRAM_REVIEW=%s)\n\n", n, m.mode)
	}
	for i, it := range m.items {
		mark := "  "
		if i == m.cursor {
			mark = "> "
		}
		where := it.Scope
		if it.ProjectPath != "" {
			where = "project " + it.ProjectPath
		}
		fmt.Fprintf(&b, "%s%s  %.2f  ev %-3d %s -> %s  %s\n", mark, it.ID, it.Confidence(), it.EvidenceCount,
			review.LevelName(it.Level), review.LevelName(it.Proposed), where)
		fmt.Fprintf(&b, "    %s\n", clip(it.Statement, 110))
		if eps, ok := m.expanded[it.ID]; ok {
			b.WriteString("    episodes:\n")
			for _, l := range eps {
				fmt.Fprintf(&b, "      %s\n", l)
			}
		}
	}
	target := tuiTargets[m.target]
	if target == "" {
		target = m.co.Target + " (the setting)"
	}
	fmt.Fprintf(&b, "\ncore target: %s\n", target)
	if it := m.selected(); it != nil && it.Scope != episode.ScopeProject {
		if t := cmp.Or(tuiTargets[m.target], m.co.Target); t == review.TargetAgents || t == review.TargetBoth {
			fmt.Fprintf(&b, "(%s)\n", review.GlobalAgentsNote(t, filepath.Join(m.co.Locations.ClaudeConfigDir, "CLAUDE.md")))
		}
	}
	if m.editing {
		fmt.Fprintf(&b, "edit: %s_\n(enter: save as your own statement, esc: cancel)\n", string(m.edit))
	} else {
		b.WriteString("a approve · d deny · p pin · e edit · t target · enter episodes · j/k move · q quit\n")
	}
	if m.message != "" {
		fmt.Fprintf(&b, "%s\n", m.message)
	}
	return b.String()
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
