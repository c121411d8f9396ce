package consolidate_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/consolidate"
	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/extract"
	"github.com/engram-memory/engram/internal/ingest"
	"github.com/engram-memory/engram/internal/logx"
	"github.com/engram-memory/engram/internal/store"
)

// late says turns dated day d, read only on day run (an older session a
// backfill brings), and runs a cycle then.
func (w *statedWorld) late(d, run int, turns ...string) {
	w.t.Helper()
	at := day0.Add(time.Duration(d) * 24 * time.Hour)
	for i, u := range turns {
		w.n++
		capture(w.t, w.db, fmt.Sprintf("late%d-s%d-%d", d, i, w.n), at.Add(time.Duration(i)*time.Minute), u, w.offset)
	}
	now := day0.Add(time.Duration(run) * 24 * time.Hour)
	emb := embed.NewLocal()
	p := &ingest.Pipeline{DB: w.db, Extractor: extract.NewLocal(), Embedder: emb, Log: logx.Discard(), Concurrency: 1,
		Now: func() time.Time { return now }}
	if _, err := p.Run(w.ctx); err != nil {
		w.t.Fatal(err)
	}
	c := &consolidate.Consolidator{DB: w.db, Judge: consolidate.Local{}, Embedder: emb, Options: consolidate.Options{Force: true}}
	if _, err := c.Run(w.ctx, now.Add(time.Hour)); err != nil {
		w.t.Fatal(err)
	}
}

// lifecycles maps each episode's first words of the user's text to its
// lifecycle ("" live).
func (w *statedWorld) lifecycles() map[string]string {
	w.t.Helper()
	out := map[string]string{}
	err := w.db.EachEpisode(w.ctx, func(e episode.Episode) error {
		user, _, _ := strings.Cut(strings.TrimPrefix(e.Context, "User: "), "\n")
		out[user] = e.Lifecycle
		return nil
	})
	if err != nil {
		w.t.Fatal(err)
	}
	return out
}

// wantLifecycles checks the lifecycle of the episodes of the given user
// texts: superseded, then live.
func (w *statedWorld) wantLifecycles(superseded, live []string) {
	w.t.Helper()
	got := w.lifecycles()
	for _, text := range superseded {
		if got[text] != episode.LifecycleSuperseded {
			w.t.Errorf("%q: lifecycle %q, want superseded", text, got[text])
		}
	}
	for _, text := range live {
		if got[text] != "" {
			w.t.Errorf("%q: lifecycle %q, want live", text, got[text])
		}
	}
}

// TestCorrectionSupersedesEpisodes: after a correction, the exchanges that
// said the old value are superseded (kept, out of recall), whether a belief
// had formed from them or not; exchanges about other things, and what was
// said after the correction, stay live; a restatement of the old value from
// before the correction, read late, is superseded at once.
func TestCorrectionSupersedesEpisodes(t *testing.T) {
	w := newStatedWorld(t)
	deploy := "This service deploys to Fly.io, the config is in fly.toml"
	jest := "our tests use Jest; run them with pnpm test"
	db := "the invoices table lives in the billing schema"
	npm := "CI installs the dependencies with npm ci"
	w.day(0, deploy, jest, db, npm)
	moved := "we moved off Fly.io, this service deploys to Render now"
	switched := "heads up: we switched from Jest to Vitest last week, so use vitest from now on"
	yarn := "actually we use yarn now, not npm"
	w.day(1, moved, switched, yarn)
	after := "the Render dashboard shows the deploys"
	w.day(2, after)

	w.wantLifecycles([]string{deploy, jest, npm}, []string{db, moved, switched, yarn, after})
	w.expect("In project tools, deploy target is render.", "active", 4, 1)

	// The history says what replaced it.
	var fly episode.Episode
	w.db.EachEpisode(w.ctx, func(e episode.Episode) error {
		if strings.Contains(e.Context, deploy) {
			fly = e
		}
		return nil
	})
	evs, err := w.db.History(w.ctx, fly.ID)
	if err != nil {
		t.Fatal(err)
	}
	last := evs[len(evs)-1]
	if last.Action != store.ActionSuperseded || !strings.HasPrefix(last.Cause, "ep_") {
		t.Errorf("history of the superseded episode: %+v", last)
	}

	// Older sessions read late (a backfill) that say the old value are
	// never current, whether or not a belief had formed from it.
	lateFly := "this service deploys to Fly.io, see fly.toml for the regions"
	lateJest := "the Jest snapshots live next to the components"
	w.late(0, 3, lateFly, lateJest)
	for _, text := range []string{lateFly, lateJest} {
		if got := w.lifecycles()[text]; got != episode.LifecycleSuperseded {
			t.Errorf("%q, read late: lifecycle %q, want superseded", text, got)
		}
	}
}

// TestCorrectionKeepsTheSlotsScope: a correction said without naming the
// project, in a project that holds a belief about that slot, corrects that
// project's belief, not a new global one.
func TestCorrectionKeepsTheSlotsScope(t *testing.T) {
	w := newStatedWorld(t)
	w.day(0, "in this repo the dev server is 8080")
	old := w.find("In project tools, dev server is 8080.")
	if old == nil {
		w.dump()
		t.Fatal("no belief about the port: the check shows nothing")
	}
	w.day(1, "actually, scratch what I told you about port 8080, the dev server is 3000 now")
	w.expect("In project tools, dev server is 8080.", "revised", 4, 4)
	w.expect("In project tools, dev server is 3000 now.", "active", 4, 1)
}

// TestCorrectionOldValueFromMemory: a correction whose reading gives as
// the old side no named thing of the message ("the inventory tables are in
// Postgres now" retires "inventory table") retires the named thing of the
// change's sentences that the project's earlier memories name (Mongo), and
// nothing else; an old side that holds one named thing among other words
// ("paying for launchdarkly") retires that thing; a change whose old side
// names two things ("the Papertrail add-on on Heroku") retires neither by
// this reading.
func TestCorrectionOldValueFromMemory(t *testing.T) {
	w := newStatedWorld(t)
	mongo := "the inventory data sits in MongoDB, one collection per warehouse"
	count := "write a script that counts items per warehouse, it's all in Mongo"
	port := "the service listens on port 8081"
	heroku := "the bot is hosted on Heroku, and it's written with discord.py"
	flags := "feature flags are in LaunchDarkly. product analytics go to Amplitude"
	dana := "Dana set up the staging box, ask Dana for access"
	w.day(0, mongo, count, port, heroku, flags, dana)
	// A name said beyond the change and the sentence before it (a person
	// thanked) is no candidate.
	moved := "thanks Dana, that helped a lot. we finally got off Mongo! the inventory tables are in Postgres now, schema in db/schema.sql"
	addon := "we dropped the Papertrail add-on on Heroku, logs just go to stdout now"
	unleash := "we're no longer paying for LaunchDarkly, flags are in Unleash now, self-hosted"
	w.day(1, moved, addon, unleash)

	w.wantLifecycles([]string{mongo, count, flags}, []string{port, heroku, dana, moved, addon, unleash})

	// An old side the reading normalised ("axio") is looked for as the
	// user wrote it.
	axios := "HTTP calls use axios with the instance in src/api/client.ts"
	w.day(2, axios)
	ky := "we went from axios to ky for the HTTP client, smaller bundle"
	w.day(3, ky)
	w.wantLifecycles([]string{axios}, []string{ky})
}

// TestCorrectionKeepsAnotherSlotsBelief: a belief about another slot that
// was said in one sentence with the corrected value ("login is handled by
// Auth0, and the app is hosted on Vercel" is about hosting) stays active
// and loses the clause that is no longer true; one whose own slot is the
// value is retired.
func TestCorrectionKeepsAnotherSlotsBelief(t *testing.T) {
	w := newStatedWorld(t)
	w.day(0, "login is handled by Auth0, and the app is hosted on Vercel", "the Auth0 tenant is acme-prod")
	hosting := w.find("Login is handled by Auth0, and the app is hosted on Vercel.")
	if hosting == nil {
		w.dump()
		t.Fatal("no belief of the sentence: the check shows nothing")
	}
	w.day(1, "Auth0 is gone, we're on Clerk now. the middleware is in middleware.ts")
	b := w.find("The app is hosted on Vercel.")
	if b == nil || b.ID != hosting.ID || b.Status != "active" {
		w.dump()
		t.Fatalf("the hosting belief after the correction: %+v", b)
	}
	if tenant := w.find("The Auth0 tenant is acme-prod."); tenant == nil || tenant.Status != "revised" {
		w.dump()
		t.Errorf("the Auth0 tenant belief after the correction: %+v", tenant)
	}
	evs, err := w.db.History(w.ctx, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	last := evs[len(evs)-1]
	if last.Action != store.ActionEdited || !strings.HasPrefix(last.Cause, "ep_") || last.Before["statement"] != hosting.Statement {
		t.Errorf("history of the reworded belief: %+v", last)
	}
}

// A belief whose own slot the user corrects keeps what else it said: the
// rest is a new active belief, the retired one's child, with its
// confidence.
func TestCorrectionKeepsTheRestOfItsBelief(t *testing.T) {
	w := newStatedWorld(t)
	old := w.corrected("the bot is hosted on Heroku, and it's written with discord.py",
		"The bot is hosted on Heroku, and it's written with discord.py.", "actually the bot runs on Railway now, not Heroku")
	rest := w.find("The bot is written with discord.py.")
	if rest == nil || rest.Status != "active" || rest.ParentID != old.ID || rest.Confidence() < old.Confidence()-1e-9 {
		w.dump()
		t.Fatalf("the rest of the corrected belief: %+v (the old one was at %.2f)", rest, old.Confidence())
	}
	// It holds no slot: a later word on hosting does not touch it.
	w.day(2, "we moved the bot off Railway, it's on Fly.io now")
	if b := w.find("The bot is written with discord.py."); b == nil || b.Status != "active" {
		w.dump()
		t.Errorf("after a second hosting correction: %+v", b)
	}
}

// TestCorrectionOldValueFromStatements: a correction that names its old
// value only as a word no reading takes for a name ("beanstalkd is gone.
// it's SQS now") retires what an earlier statement of the project
// installed under that word; a value two earlier statements installed
// and a value the correction installs are not taken for it.
func TestCorrectionOldValueFromStatements(t *testing.T) {
	w := newStatedWorld(t)
	jobs := "order jobs go through beanstalkd, tube name orders"
	docs := "the API docs are generated with Redoc from openapi.yaml"
	w.day(0, jobs, docs)
	if b := w.find("Order jobs go through beanstalkd, tube name orders."); b == nil {
		w.dump()
		t.Fatal("no belief of the first statement: the check shows nothing")
	}
	gone := "beanstalkd is gone. it's SQS now, one queue per consumer"
	w.day(1, gone)
	w.wantLifecycles([]string{jobs}, []string{docs, gone})
	if b := w.find("Order jobs go through beanstalkd, tube name orders."); b == nil || b.Status != "revised" {
		w.dump()
		t.Errorf("the old value's belief after the correction: %+v", b)
	}
	if b := w.find("The API docs are generated with Redoc from openapi.yaml."); b == nil || b.Status != "active" {
		w.dump()
		t.Errorf("another slot's belief after the correction: %+v", b)
	}
}

// A guessed old value that many of the project's exchanges name is not
// taken (guessShare): a value the change names only as a word no reading
// takes for its old side, found among what earlier statements installed,
// is a guess; when it is in most of the project's exchanges it is what the
// project is about (a chat's speaker), and one turn read as a correction
// must not take a large part of the project's memory out of what is
// current. The same words with the value in few exchanges are taken
// (TestCorrectionOldValueFromStatements).
func TestCorrectionGuessNotPervasive(t *testing.T) {
	w := newStatedWorld(t)
	jobs := "order jobs go through beanstalkd, tube name orders"
	turns := []string{jobs}
	for _, p := range []string{"the lake", "the old mill", "the ridge", "the river trail", "the quarry", "the north woods",
		"the dunes", "the falls", "the canyon", "the pine forest", "the meadow", "the cliffs"} {
		turns = append(turns, fmt.Sprintf("beanstalkd and I went walking to %s, and we talked about %s for an hour", p, p))
	}
	w.day(0, turns...)
	w.day(1, "beanstalkd is gone. it's SQS now, one queue per consumer")
	got := w.lifecycles()
	n := 0
	for _, u := range turns {
		if got[u] != "" {
			n++
		}
	}
	if n > 0 {
		t.Errorf("%d of %d exchanges that name a guessed old value superseded", n, len(turns))
	}
	if b := w.find("Order jobs go through beanstalkd, tube name orders."); b == nil || b.Status != "active" {
		w.dump()
		t.Errorf("the belief of a guessed old value named in every exchange: %+v", b)
	}
}

// Two versions of one thing are one slot's values whatever each
// statement's subject: the later statement corrects the earlier, and no
// other slot (TestOneSlot: subjects of two slots stay apart).
func TestVersionedFactsOneSlot(t *testing.T) {
	w := newStatedWorld(t)
	w.day(0, "we're on Python 3.9 in prod, so no match statements", "the http layer is FastAPI, the queue is redis")
	if b := w.find("We're on Python 3.9 in prod."); b == nil || b.Status != "active" {
		w.dump()
		t.Fatalf("no belief of the first version: the check shows nothing (%+v)", b)
	}
	w.day(1, "prod runs Python 3.12 since the base image bump")
	if b := w.find("We're on Python 3.9 in prod."); b == nil || b.Status != "revised" {
		w.dump()
		t.Errorf("the earlier version after the later one: %+v", b)
	}
	if b := w.find("Prod runs Python 3.12 since the base image bump."); b == nil || b.Status != "active" || b.Subject != "python" {
		w.dump()
		t.Errorf("the later version: %+v", b)
	}
	for _, s := range []string{"The http layer is FastAPI, the queue is redis.", "No match statements."} {
		if b := w.find(s); b == nil || b.Status != "active" {
			w.dump()
			t.Errorf("%q: %+v", s, b)
		}
	}
}

// A correction of one of a belief's two predicates ("is at … and goes
// to …") keeps the other as the rest of the belief.
func TestCorrectionKeepsTheOtherPredicate(t *testing.T) {
	w := newStatedWorld(t)
	old := w.corrected("the nightly export is at 01:30 UTC and goes to B2", "The nightly export is at 01:30 UTC and goes to B2.",
		"actually the nightly export is at 03:00 UTC now, it clashed with the deploys")
	if rest := w.find("The nightly export goes to B2."); rest == nil || rest.Status != "active" || rest.ParentID != old.ID {
		w.dump()
		t.Fatalf("the rest of the corrected belief: %+v", rest)
	}
}
