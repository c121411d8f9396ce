package redact

import (
	"strings"
	"testing"
)

// turnChunk is a typical developer turn: prose, Go code, shell output, a
// diff, JSON and a stack trace, full of words that trigger the scanners
// (token, password, auth, key, path, ://, Bearer) without holding secrets.
const turnChunk = `I looked at the auth middleware. The token is read from the Authorization
header, then validated against the session store; if the password hash does
not match we return 401. Here is the relevant part of internal/auth/auth.go:

` + "```go" + `
func (m *Middleware) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if token == "" {
		http.Error(w, "missing token", http.StatusUnauthorized)
		return
	}
	sess, err := m.store.Lookup(r.Context(), token)
	if err != nil {
		m.log.Warn("lookup failed", "err", err, "path", r.URL.Path)
		http.Error(w, "invalid token", http.StatusUnauthorized)
		return
	}
	ctx := context.WithValue(r.Context(), sessionKey{}, sess)
	m.next.ServeHTTP(w, r.WithContext(ctx))
}
` + "```" + `

Running the tests:

$ go test ./internal/auth/... -run TestMiddleware -count=1
--- FAIL: TestMiddleware/expired_token (0.01s)
    auth_test.go:88: status = 200, want 401
FAIL
exit status 1
FAIL	github.com/example/app/internal/auth	0.214s

The config has ` + "`max_tokens: 4096`" + ` and the key rotation policy in
config/auth.yaml:

    auth:
      issuer: https://accounts.example.com
      audience: api
      token_ttl: 15m
      password_min_length: 12
      keys_path: /etc/app/keys

{"level":"error","ts":"2024-05-01T12:00:00Z","msg":"token expired","user_id":"550e8400-e29b-41d4-a716-446655440000","path":"/v1/projects"}

diff --git a/internal/auth/auth.go b/internal/auth/auth.go
index 3f78685..9fceb02 100644
--- a/internal/auth/auth.go
+++ b/internal/auth/auth.go
@@ -40,7 +40,7 @@ func (m *Middleware) ServeHTTP(w http.ResponseWriter, r *http.Request) {
-	if token == "" {
+	if token == "" || len(token) > maxTokenLen {

See https://pkg.go.dev/net/http#Request for the API, and the private helper
in keys.go. I will fix the expiry check next and re-run the whole suite.
`

// typicalTurn builds about n bytes of turn text, and with secrets set,
// sprinkles three secrets into it.
func typicalTurn(n int, secrets bool) string {
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(turnChunk)
	}
	s := b.String()[:n]
	if secrets {
		r := newRand(nil)
		third := n / 3
		s = s[:third] + "\nexport GITHUB_TOKEN=" + cat("gh", "p_", mixed(r, 36)) + "\n" +
			s[third:2*third] + "\nDATABASE_URL=postgres://app:" + mixed(r, 16) + "@db:5432/app\n" +
			s[2*third:] + "\nDB_PASSWORD=" + mixed(r, 16) + "\n"
	}
	return s
}

func BenchmarkString(b *testing.B) {
	for _, bc := range []struct {
		name    string
		size    int
		secrets bool
	}{
		{"4KB/clean", 4 << 10, false},
		{"4KB/secrets", 4 << 10, true},
		{"64KB/clean", 64 << 10, false},
		{"64KB/secrets", 64 << 10, true},
	} {
		in := typicalTurn(bc.size, bc.secrets)
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				String(in)
			}
		})
	}
}
