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
