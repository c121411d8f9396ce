package consolidate

import (
	"strings"
	"testing"
)

func TestWithoutClauses(t *testing.T) {
	for _, c := range []struct {
		statement, drop, want string // want "": nothing left that reads on its own
	}{
		{"Login is handled by Auth0, and the app is hosted on Vercel.", "auth0", "The app is hosted on Vercel."},
		{"Static assets are served through CloudFront, and images get converted to AVIF at build time.", "cloudfront",
			"Images get converted to AVIF at build time."},
		// A clause leaning on the one cut gets its subject.
		{"The bot is hosted on Heroku, and it's written with discord.py.", "heroku", "The bot is written with discord.py."},
		{"The CMS is on Django 3.2 LTS, served by gunicorn.", "django 3.2", "The CMS is served by gunicorn."},
		{"The worker is on Fly.io, it is deployed with flyctl.", "fly.io", "The worker is deployed with flyctl."},
		{"The API is on Heroku, it runs behind Cloudflare.", "heroku", "The API runs behind Cloudflare."},
		// Two predicates of one subject: the one kept gets the subject, and
		// what is kept keeps its own joining word.
		{"The sync job pulls from Jira at 06:00 and writes to Postgres.", "06:00", "The sync job writes to Postgres."},
		{"The sync job pulls from Jira at 06:00 and writes to Postgres.", "postgres", "The sync job pulls from Jira at 06:00."},
		{"The importer reads from S3, writes to BigQuery and posts to Slack.", "bigquery",
			"The importer reads from S3 and posts to Slack."},
		{"The API is on Heroku and runs behind Cloudflare.", "heroku", "The API runs behind Cloudflare."},
		// "and" before a noun, or a first clause with no subject: not two
		// predicates.
		{"The sync job pulls from Jira and GitHub.", "jira", ""},
		{"We pull from Jira at 06:00 and writes go to Postgres.", "06:00", ""},
		// No subject to give: left whole.
		{"We deploy with Heroku, it's written with discord.py.", "heroku", ""},
		{"Uses Heroku, served by gunicorn.", "heroku", ""},
		{"The bot is hosted on Heroku, which bills monthly.", "heroku", ""},
		// Nothing, or everything, dropped.
		{"The bot is hosted on Heroku.", "heroku", ""},
		{"The app is hosted on Vercel.", "heroku", ""},
	} {
		got, ok := withoutClauses(c.statement, func(p string) bool { return strings.Contains(strings.ToLower(p), c.drop) })
		if !ok {
			got = ""
		}
		if got != c.want {
			t.Errorf("withoutClauses(%q, %q) = %q, want %q", c.statement, c.drop, got, c.want)
		}
	}
}

func TestMentions(t *testing.T) {
	for _, c := range []struct {
		text, term string
		want       bool
	}{
		{"We use Jest here.", "jest", true},
		{"We use Jester here.", "jest", false},
		// A normalized value of several words is named however its words
		// are joined, and only by all of them in order.
		{"The export runs at 02:00 UTC.", "02 00 utc", true},
		{"The export runs at 02:30 UTC.", "02 00 utc", false},
		{"Uses react-native for the app.", "react native", true},
		{"Native code, not React.", "react native", false},
	} {
		if got := mentions(c.text, c.term); got != c.want {
			t.Errorf("mentions(%q, %q) = %v, want %v", c.text, c.term, got, c.want)
		}
	}
}
