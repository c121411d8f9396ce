package redact

// Generators of secret SHAPES for the tests. Every secret is built at test
// time from random characters of the right alphabet and length; no
// real-looking literal is stored in the repository (prefixes are split so
// that scanners and push protection do not see a prefix next to a body).

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"
)

const (
	alnum    = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b64url   = alnum + "-_"
	b64std   = alnum + "+/"
	upper32  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	hexLower = "0123456789abcdef"
	digits   = "0123456789"
	letters  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

func randFrom(r *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// mixed returns n random alphanumerics that contain at least one upper, one
// lower and one digit, as real keys practically always do.
func mixed(r *rand.Rand, n int) string {
	for {
		v := randFrom(r, alnum, n)
		if l, u, d := classes(v); l && u && d {
			return v
		}
	}
}

// secretGen builds one secret of a type. secret is the exact string that
// must not survive redaction.
type secretGen struct {
	typ  string
	name string
	gen  func(r *rand.Rand) string
}

// cat joins parts; used so that no prefix literal sits next to a body.
func cat(parts ...string) string { return strings.Join(parts, "") }

var tokenGens = []secretGen{
	{typeOpenAI, "openai-legacy", func(r *rand.Rand) string {
		return cat("s", "k-", mixed(r, 20), "T3Blbk", "FJ", mixed(r, 20))
	}},
	{typeOpenAI, "openai-project", func(r *rand.Rand) string {
		return cat("s", "k-", "proj-", randFrom(r, b64url, 74), "T3Blbk", "FJ", randFrom(r, b64url, 74))
	}},
	{typeOpenAI, "openai-svcacct", func(r *rand.Rand) string {
		return cat("s", "k-", "svcacct-", randFrom(r, b64url, 58), "T3Blbk", "FJ", randFrom(r, b64url, 58))
	}},
	{typeAnthropic, "anthropic-api", func(r *rand.Rand) string {
		return cat("s", "k-", "ant-", "api03-", randFrom(r, b64url, 93), "AA")
	}},
	{typeAnthropic, "anthropic-admin", func(r *rand.Rand) string {
		return cat("s", "k-", "ant-", "admin01-", randFrom(r, b64url, 93), "AA")
	}},
	{typeAnthropic, "anthropic-oauth", func(r *rand.Rand) string {
		return cat("s", "k-", "ant-", "oat01-", randFrom(r, b64url, 93), "AA")
	}},
	{typeAWSKey, "aws-akia", func(r *rand.Rand) string { return cat("AK", "IA", randFrom(r, upper32, 16)) }},
	{typeAWSKey, "aws-asia", func(r *rand.Rand) string { return cat("AS", "IA", randFrom(r, upper32, 16)) }},
	{typeGitHub, "github-ghp", func(r *rand.Rand) string { return cat("gh", "p_", mixed(r, 36)) }},
	{typeGitHub, "github-gho", func(r *rand.Rand) string { return cat("gh", "o_", mixed(r, 36)) }},
	{typeGitHub, "github-ghs", func(r *rand.Rand) string { return cat("gh", "s_", mixed(r, 36)) }},
	{typeGitHub, "github-ghu", func(r *rand.Rand) string { return cat("gh", "u_", mixed(r, 36)) }},
	{typeGitHub, "github-ghr", func(r *rand.Rand) string { return cat("gh", "r_", mixed(r, 36)) }},
	{typeGitHub, "github-fine-grained", func(r *rand.Rand) string {
		return cat("github", "_pat_", mixed(r, 22), "_", mixed(r, 59))
	}},
	{typeGitLab, "gitlab-pat", func(r *rand.Rand) string { return cat("gl", "pat-", randFrom(r, b64url, 20)) }},
	{typeGitLab, "gitlab-routable", func(r *rand.Rand) string {
		return cat("gl", "pat-", randFrom(r, b64url, 40), ".01.", randFrom(r, "abcdefghijklmnopqrstuvwxyz0123456789", 9))
	}},
	{typeSlack, "slack-bot", func(r *rand.Rand) string {
		return cat("xo", "xb-", randFrom(r, digits, 12), "-", randFrom(r, digits, 13), "-", mixed(r, 24))
	}},
	{typeSlack, "slack-user", func(r *rand.Rand) string {
		return cat("xo", "xp-", randFrom(r, digits, 12), "-", randFrom(r, digits, 12), "-", randFrom(r, digits, 13), "-", randFrom(r, hexLower, 32))
	}},
	{typeSlack, "slack-app", func(r *rand.Rand) string {
		return cat("xa", "pp-1-", randFrom(r, upper32, 11), "-", randFrom(r, digits, 13), "-", randFrom(r, hexLower, 64))
	}},
	{typeGoogle, "google-api-key", func(r *rand.Rand) string { return cat("AI", "za", randFrom(r, b64url, 35)) }},
	{typeGoogle, "google-oauth", func(r *rand.Rand) string { return cat("ya", "29.", "a0", randFrom(r, b64url, 150)) }},
	{typeStripe, "stripe-secret-live", func(r *rand.Rand) string { return cat("sk", "_live_", mixed(r, 99)) }},
	{typeStripe, "stripe-secret-test", func(r *rand.Rand) string { return cat("sk", "_test_", mixed(r, 24)) }},
	{typeStripe, "stripe-restricted", func(r *rand.Rand) string { return cat("rk", "_live_", mixed(r, 24)) }},
	{typeStripe, "stripe-publishable", func(r *rand.Rand) string { return cat("pk", "_live_", mixed(r, 24)) }},
	{typeHuggingFace, "huggingface", func(r *rand.Rand) string { return cat("h", "f_", randFrom(r, letters, 34)) }},
	{typeNPM, "npm", func(r *rand.Rand) string { return cat("np", "m_", mixed(r, 36)) }},
	{typeSendGrid, "sendgrid", func(r *rand.Rand) string {
		return cat("S", "G.", randFrom(r, b64url, 22), ".", randFrom(r, b64url, 43))
	}},
	{typeTwilio, "twilio", func(r *rand.Rand) string { return cat("S", "K", randFrom(r, hexLower, 32)) }},
	{typeJWT, "jwt", genJWT},
}

func genJWT(r *rand.Rand) string {
	enc := base64.RawURLEncoding
	h := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	p := enc.EncodeToString(fmt.Appendf(nil, `{"sub":"%s","iat":%d,"scope":"repo"}`, randFrom(r, alnum, 12), 1700000000+r.IntN(1e8)))
	return h + "." + p + "." + randFrom(r, b64url, 43)
}

// tokenContexts are realistic surroundings for a provider token; %s is the
// token.
var tokenContexts = []struct{ name, tmpl string }{
	{"shell", "$ export SERVICE_VALUE=%s && ./deploy.sh --env prod\nDeploying to prod..."},
	{"dotenv", "# local settings\nDEBUG=true\nOPENAI_API_KEY=%s\nPORT=8080\n"},
	{"json", "{\n  \"model\": \"gpt-4o\",\n  \"apiKey\": \"%s\",\n  \"timeout\": 30\n}"},
	{"stacktrace", "panic: request rejected for credential %s: 401 Unauthorized\n\ngoroutine 1 [running]:\nmain.main()\n\t/home/dev/app/main.go:42 +0x1d\nexit status 2"},
	{"curl", "curl -sS https://api.example.com/v1/models -H \"Authorization: Bearer %s\" -H 'Content-Type: application/json'"},
	{"go", "func newClient() *api.Client {\n\treturn api.New(\"%s\", api.WithTimeout(5*time.Second))\n}"},
	{"markdown", "Put this in your shell profile:\n\n```bash\nexport TOKEN='%s'\n```\n\nthen restart the terminal."},
	{"prose", "I rotated it already, the old one was %s. Should be fine now."},
	{"yaml", "services:\n  api:\n    environment:\n      - API_TOKEN=%s\n      - LOG_LEVEL=debug\n"},
	{"escaped-log", `{"level":"info","msg":"loaded config\nkey=%s\nregion=eu-west-1"}`},
	{"python", "client = OpenAI(api_key='%s')\nresp = client.models.list()"},
	{"line-start", "%s"},
}
