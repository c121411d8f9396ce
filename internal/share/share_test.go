package share_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/memory"
)

// findBelief returns the beliefs whose statement holds s.
func findBelief(bs map[string]belief.Belief, s string) []belief.Belief {
	var out []belief.Belief
	for _, b := range bs {
		if strings.Contains(strings.ToLower(b.Statement), strings.ToLower(s)) {
			out = append(out, b)
		}
	}
	return out
}

// Three machines hold the same project under different paths, cloned with
// three spellings of its remote: they share its episodes and beliefs. A
// fourth project, not enabled, and the global memory stay on the machine.
// A belief reinforced on one machine and contradicted on another ends with
// the same α and β everywhere, and a memory forgotten on one machine
// leaves the server's tables and the other machines.
func TestTeamSharing(t *testing.T) {
	_, url := startServer(t)
	a := newMachine(t, "a", url, false)
	b := newMachine(t, "b", url, false)
	c := newMachine(t, "c", url, false)
	rootA := a.repo("work/api", "git@github.com:Acme/api.git")
	rootB := b.repo("src/api-checkout", "https://github.com/acme/api")
	rootC := c.repo("x/y/api", "ssh://git@github.com/acme/api.git/")
	private := a.repo("work/secret", "git@github.com:acme/secret.git")
	for _, m := range []struct {
		m    *machine
		root string
	}{{a, rootA}, {b, rootB}, {c, rootC}} {
		m.m.enable(m.root)
	}

	fly := a.say(rootA, "This service deploys to Fly.io.")
	staging := a.say(rootA, "Our staging database is called zanzibar-seven and lives in Frankfurt.")
	a.say(private, "This service deploys to Heroku and the vault is quokkavault.")
	a.say("", "I never use emoji in commit messages, and I prefer tabs over spaces.")
	a.cycle()
	b.cycle()
	c.cycle()

	text := serverText(t, url)
	for _, leak := range []string{"quokkavault", "Heroku", "emoji", "tabs", rootA, rootB} {
		if strings.Contains(text, leak) {
			t.Errorf("the server holds %q, which was not shared:\n%s", leak, text)
		}
	}
	for _, m := range []*machine{b, c} {
		eps := m.episodes()
		if _, ok := eps[fly.ID]; !ok {
			t.Fatalf("%s lacks the shared episode %s", m.name, fly.ID)
		}
		for _, e := range eps {
			if e.Scope != episode.ScopeProject || strings.Contains(e.Summary+e.Context, "quokkavault") || strings.Contains(e.Summary, "emoji") {
				t.Errorf("%s holds %s (%s, %q), which was not shared", m.name, e.ID, e.Scope, e.Summary)
			}
		}
		root := map[*machine]string{b: rootB, c: rootC}[m]
		if got := eps[fly.ID].ProjectPath; got != root {
			t.Errorf("%s: the pulled episode's project is %q, want its own checkout %q", m.name, got, root)
		}
		if len(findBelief(m.beliefs(), "fly.io")) != 1 {
			t.Fatalf("%s: beliefs about fly.io: %+v", m.name, findBelief(m.beliefs(), "fly.io"))
		}
	}
	orig := findBelief(a.beliefs(), "fly.io")
	if len(orig) != 1 {
		t.Fatalf("a: beliefs about fly.io: %+v", orig)
	}
	id := orig[0].ID

	// B states it again, C says it changed: B's statement supports the
	// belief, C's contradicts it and retires it.
	b.say(rootB, "This service deploys to Fly.io, as always.")
	c.say(rootC, "Actually we moved from Fly.io to Render.")
	for range 2 {
		for _, m := range []*machine{b, c, a} {
			m.cycle()
		}
	}
	var want belief.Belief
	for i, m := range []*machine{a, b, c} {
		got, ok := m.beliefs()[id]
		if !ok {
			t.Fatalf("%s lacks belief %s", m.name, id)
		}
		t.Logf("%s: %s α=%v β=%v evidence=%d status=%s supporting=%v contradicting=%v", m.name, got.Statement, got.Alpha, got.Beta,
			got.EvidenceCount, got.Status, got.Supporting, got.Contradicting)
		if i == 0 {
			want = got
			continue
		}
		if got.Alpha != want.Alpha || got.Beta != want.Beta || got.Status != want.Status || got.EvidenceCount != want.EvidenceCount {
			t.Errorf("%s: α=%v β=%v status %s evidence %d; a has α=%v β=%v status %s evidence %d", m.name, got.Alpha, got.Beta,
				got.Status, got.EvidenceCount, want.Alpha, want.Beta, want.Status, want.EvidenceCount)
		}
		if got.Kind == "" || got.Kind != want.Kind {
			t.Errorf("%s: kind %q; a has %q", m.name, got.Kind, want.Kind)
		}
	}
	if want.Alpha < 1+2*belief.StatedWeight || want.Beta < 1+belief.StatedWeight {
		t.Errorf("the belief did not gather both machines' evidence: α=%v β=%v", want.Alpha, want.Beta)
	}

	// A forgets the staging note and the belief it made: they leave the
	// server and the others.
	forget := []string{staging.ID}
	for _, b := range findBelief(a.beliefs(), "zanzibar") {
		forget = append(forget, b.ID)
	}
	if len(forget) != 2 {
		t.Fatalf("want the staging episode and its belief, got %v", forget)
	}
	if _, err := memory.Forget(context.Background(), a.db, a.cfg, forget, time.Now(), nil); err != nil {
		t.Fatal(err)
	}
	a.cycle()
	b.cycle()
	c.cycle()
	if text := serverText(t, url); strings.Contains(text, "zanzibar") {
		t.Errorf("the forgotten text is still on the server:\n%s", text)
	}
	for _, m := range []*machine{b, c} {
		if _, ok := m.episodes()[staging.ID]; ok {
			t.Errorf("%s still holds the forgotten episode", m.name)
		}
		if bs := findBelief(m.beliefs(), "zanzibar"); len(bs) > 0 {
			t.Errorf("%s still holds the forgotten belief %s", m.name, bs[0].ID)
		}
	}
	// Pulled again from the start, a tombstone is not brought back.
	a.cycle()
	if _, ok := a.episodes()[staging.ID]; ok {
		t.Error("a pull brought the forgotten episode back")
	}
}

// Personal sync shares a person's global memory between their machines,
// in a space other roles of the database cannot read; a machine without
// it neither sends nor receives global memory.
func TestPersonalSync(t *testing.T) {
	srv, url := startServer(t)
	srv.Exec(t, "engram_1", `CREATE ROLE bob LOGIN;
		GRANT SELECT, INSERT, UPDATE, DELETE ON engram_items, engram_evidence, engram_meta, engram_schema_migrations TO bob;
		GRANT USAGE ON SEQUENCE engram_rev TO bob`)
	a := newMachine(t, "a", url, true)
	b := newMachine(t, "b", url, true)
	c := newMachine(t, "c", url, false)
	bob := newMachine(t, "bob", srv.URL("engram_1", "bob"), true)
	emoji := a.say("", "I never use emoji in commit messages.")
	c.say("", "I always write commit messages in the imperative mood.")
	bobs := bob.say("", "I prefer spaces over tabs in every language.")
	for _, m := range []*machine{a, b, c, bob, a, b} {
		m.cycle()
	}
	if e, ok := b.episodes()[emoji.ID]; !ok || e.Scope != episode.ScopeGlobal || e.ProjectPath != "" {
		t.Fatalf("b lacks a's global episode: %+v", e)
	}
	if len(findBelief(b.beliefs(), "emoji")) != 1 {
		t.Errorf("b's beliefs about emoji: %+v", findBelief(b.beliefs(), "emoji"))
	}
	if _, ok := c.episodes()[emoji.ID]; ok {
		t.Error("c, without personal sync, received global memory")
	}
	if strings.Contains(serverText(t, url), "imperative") {
		t.Error("c, without personal sync, sent global memory")
	}
	if _, ok := bob.episodes()[emoji.ID]; ok {
		t.Error("another role read a's personal space")
	}
	if _, ok := a.episodes()[bobs.ID]; ok {
		t.Error("a received bob's personal memory")
	}
	if text := serverText(t, srv.URL("engram_1", "bob")); strings.Contains(text, "emoji") || strings.Contains(text, "personal:engram") {
		t.Errorf("bob's role reads another person's space:\n%s", text)
	}
	if !strings.Contains(serverText(t, url), "personal:bob") {
		t.Error("bob's global memory did not reach his own space")
	}
}

// Personal sync also carries the project memory of projects not shared
// with a team, filed under the project's remote: a machine with a
// checkout of it files it there (one that gets a checkout later takes it
// then; until then it keeps the ids only); when the project is shared
// with the team later, its memory moves to the team's space.
func TestPersonalSyncProjects(t *testing.T) {
	_, url := startServer(t)
	a := newMachine(t, "a", url, true)
	b := newMachine(t, "b", url, true)
	c := newMachine(t, "c", url, false)
	dotA := a.repo("dotfiles", "git@github.com:ann/dotfiles.git")
	dotB := b.repo("src/dots", "https://github.com/ann/dotfiles")
	dotC := c.repo("dotfiles", "https://github.com/ann/dotfiles.git")
	c.enable(dotC)
	fact := a.say(dotA, "This repo installs with make link and targets zsh-marble-9.")
	a.cycle()
	b.cycle()
	if _, ok := b.episodes()[fact.ID]; ok {
		t.Fatal("b filed a project it has no memory of")
	}
	parked, err := b.db.ParkedShared(context.Background())
	if err != nil || len(parked) == 0 || parked[0].Key != "github.com/ann/dotfiles" {
		t.Fatalf("b parked %+v %v", parked, err)
	}
	b.say(dotB, "In this repo the zsh config lives under zsh/ and is linked by make.")
	b.cycle()
	e, ok := b.episodes()[fact.ID]
	if !ok || e.ProjectPath != dotB {
		t.Fatalf("b did not take the parked memory into its checkout: %+v", e)
	}
	c.cycle()
	if _, ok := c.episodes()[fact.ID]; ok {
		t.Fatal("a teammate received memory of a personal space")
	}
	// Ann shares the project with the team: its memory moves there.
	a.enable(dotA)
	a.cycle()
	c.cycle()
	if e, ok := c.episodes()[fact.ID]; !ok || e.ProjectPath != dotC {
		t.Fatalf("c lacks the project's memory once shared: %+v", e)
	}
	b.cycle()
	a.cycle()
	if _, ok := b.episodes()[fact.ID]; !ok {
		t.Fatal("b lost the memory when it moved to the team's space")
	}
}

// Whoever can write the shared tables cannot make a machine store a
// malformed memory: bad ids, scopes and statuses are not taken, fields
// are brought within bounds, and the sync goes on.
func TestMalformedServerRows(t *testing.T) {
	srv, url := startServer(t)
	a := newMachine(t, "a", url, false)
	root := a.repo("api", "git@github.com:acme/api.git")
	a.enable(root)
	huge := strings.Repeat("x", 200<<10)
	srv.Exec(t, "engram_1", `INSERT INTO engram_items (id, kind, space, body, rev, origin) VALUES
		('../../etc', 'episode', 'project:github.com/acme/api', '{"id": "../../etc", "summary": "s", "scope": "project", "content_hash": "h1"}', nextval('engram_rev'), 'x'),
		('ep_000000000001', 'episode', 'project:github.com/acme/api', '{"id": "ep_000000000001", "summary": "fine", "context": "`+huge+`", "scope": "project", "type": "rumour", "importance": 7, "content_hash": "h2", "session_id": "../../x", "session_ids": ["../../x", "s-1"]}', nextval('engram_rev'), 'x'),
		('ep_000000000002', 'episode', 'project:github.com/acme/api', '{"id": "ep_000000000002", "summary": "global in a project space", "scope": "global", "content_hash": "h3"}', nextval('engram_rev'), 'x'),
		('bl_000000000001', 'belief', 'project:github.com/acme/api', '{"id": "bl_000000000001", "statement": "Uses Go.", "scope": "project", "status": "gone"}', nextval('engram_rev'), 'x'),
		('bl_000000000002', 'belief', 'project:github.com/acme/api', '{"id": "bl_000000000002", "statement": "Uses Go.", "scope": "project", "status": "active", "timeframe": "soon"}', nextval('engram_rev'), 'x');
		INSERT INTO engram_evidence (belief_id, episode_id, polarity, weight, origin) VALUES
		('bl_000000000002', 'ep_000000000001', 1, 'NaN', 'x'), ('bl_000000000002', 'not an id', 1, 1, 'x'),
		('bl_000000000002', 'ep_000000000009', 1, 1e9, 'x'), ('bl_000000000002', 'ep_00000000000a', -1, 1, 'x')`)
	st := a.cycle()
	if st.Share == nil || st.Share.Pulled != 5 {
		t.Fatalf("sync: %+v", st.Share)
	}
	eps := a.episodes()
	if len(eps) != 1 {
		t.Fatalf("episodes taken: %+v", eps)
	}
	e := eps["ep_000000000001"]
	if e.SessionID != "" || len(e.SessionIDs) != 1 || e.SessionIDs[0] != "s-1" {
		t.Errorf("session ids not checked: %q %q", e.SessionID, e.SessionIDs)
	}
	if e.Type != episode.TypeEvent || e.Importance != 0.5 || len(e.Context) > 64<<10 || e.ProjectPath != root {
		t.Errorf("episode not brought within bounds: type %q importance %v context %d bytes path %q", e.Type, e.Importance, len(e.Context), e.ProjectPath)
	}
	bs := a.beliefs()
	b, ok := bs["bl_000000000002"]
	if len(bs) != 1 || !ok {
		t.Fatalf("beliefs taken: %+v", bs)
	}
	if b.Timeframe != belief.TimeCurrent || b.Alpha != 11 || b.Beta != 2 || len(b.Supporting) != 1 {
		t.Errorf("belief: timeframe %q α %v β %v supporting %v", b.Timeframe, b.Alpha, b.Beta, b.Supporting)
	}
}
