package redact

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzSecret is a generated secret in a context: text is what String sees
// (between arbitrary fuzzer lines), secret must not survive.
type fuzzSecret func(r *rand.Rand) (text, secret string)

// fuzzSecrets covers every provider shape in every token context, plus the
// key/value, URL, header and PEM detectors.
var fuzzSecrets = func() []fuzzSecret {
	var fs []fuzzSecret
	for _, g := range tokenGens {
		for _, c := range tokenContexts {
			fs = append(fs, func(r *rand.Rand) (string, string) {
				s := g.gen(r)
				return fmt.Sprintf(c.tmpl, s), s
			})
		}
	}
	kv := []string{
		"DB_PASSWORD=%s", "export SESSION_SECRET=\"%s\"", "  client_secret: %s1", `{"password": "%s"}`,
		"postgres://app:%s@db:5432/x", "curl -u admin:%s https://x.example.com",
		"Authorization: Bearer %s", "authorization: token %s", "x-api-key: %s9",
	}
	for _, c := range kv {
		fs = append(fs, func(r *rand.Rand) (string, string) {
			s := mixed(r, 12+r.IntN(20))
			return fmt.Sprintf(c, s), s
		})
	}
	fs = append(fs,
		func(r *rand.Rand) (string, string) {
			s := randFrom(r, b64std, 40)
			return "aws_secret_access_key = " + s, s
		},
		func(r *rand.Rand) (string, string) {
			s := base64.StdEncoding.EncodeToString([]byte("u:" + mixed(r, 12)))
			return "Authorization: Basic " + s, s
		},
		func(r *rand.Rand) (string, string) {
			block, body := genPEM(r, "OPENSSH PRIVATE KEY", 3)
			return block, body[:64]
		},
		func(r *rand.Rand) (string, string) {
			s := mixed(r, 20)
			return "<private>" + s + "</private>", s
		},
	)
	return fs
}()

// FuzzString checks, for arbitrary text, that String does not panic, keeps
// valid UTF-8 valid and is idempotent; and that a generated secret placed
// on its own line between two arbitrary texts never survives.
func FuzzString(f *testing.F) {
	for i, n := range negatives {
		f.Add(n, uint64(i), uint16(i), "")
	}
	r := newRand(f)
	for i := range fuzzSecrets {
		text, _ := fuzzSecrets[i](r)
		f.Add(text, uint64(i), uint16(i), "trailing text")
	}
	f.Add(turnChunk, uint64(1), uint16(7), turnChunk)
	f.Add("<private>a<private>b</private>", uint64(2), uint16(3), "</private>")
	f.Add("-----BEGIN RSA PRIVATE KEY-----\nabc", uint64(3), uint16(4), "-----END RSA PRIVATE KEY-----")
	f.Add("TOKEN=\"abc", uint64(4), uint16(5), "\xff\xfe")
	f.Add("postgres://a:b@c", uint64(5), uint16(6), `\nx`)

	f.Fuzz(func(t *testing.T, prefix string, seed uint64, kind uint16, suffix string) {
		checkProperties(t, prefix)

		gen := fuzzSecrets[int(kind)%len(fuzzSecrets)]
		text, secret := gen(rand.New(rand.NewPCG(seed, uint64(kind))))
		in := prefix + "\n" + text + "\n" + suffix
		out := checkProperties(t, in)
		if strings.Contains(out, secret) {
			t.Fatalf("secret %q survived\n in: %q\nout: %q", secret, in, out)
		}
	})
}

// checkProperties checks the input-independent properties of String(in)
// and returns the output.
func checkProperties(t *testing.T, in string) string {
	t.Helper()
	out, n := String(in)
	if n < 0 || (n == 0 && out != in) || (n > 0 && out == in) {
		t.Fatalf("String(%q) = %q with %d replacements", in, out, n)
	}
	if utf8.ValidString(in) && !utf8.ValidString(out) {
		t.Fatalf("valid UTF-8 became invalid\n in: %q\nout: %q", in, out)
	}
	if again, n2 := String(out); again != out || n2 != 0 {
		t.Fatalf("not idempotent (%d more replacements)\n   in: %q\n once: %q\ntwice: %q", n2, in, out, again)
	}
	return out
}

// fragments are the pieces the detectors react to. FuzzFragments strings
// them together so that the fuzzer explores how detectors and placeholders
// interact, which random bytes rarely reach. Only append: the inputs in
// testdata/fuzz/FuzzFragments are indexes into this list (their decoded texts
// are also pinned in TestIdempotentRegressions).
var fragments = []string{
	"TOKEN", "password", "Secret", "api_key", "auth", "pwd", "_", "-", ".", "key",
	"=", ":", ": ", " = ", ":=", "=>", "==", " ", "\t", "\n", `\n`, `\"`, "\\", "\"", "'", "`",
	"$", "${X}", "{", "}", "(", ")", "[", "]", "<", ">", ",", ";", "&", "?", "/", "*", "%s",
	"export ", "curl -u ", " -u ", "--password=", "Authorization", "Bearer ", "Basic ", "token ",
	"://", "@", "postgres", "user", "host",
	"sk-", "sk-ant-api03-", "ghp_", "github_pat_", "glpat-", "xoxb-", "AKIA", "AIza", "ya29.",
	"sk_live_", "hf_", "npm_", "SG.", "SK", "eyJ", "hooks.slack.com/services/",
	"<private>", "</private>", "<PRIVATE >",
	"-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "-----BEGIN ", "PRIVATE KEY",
	"[REDACTED:env-secret]", "[REDACTED:url-password]", "[REDACTED:", "[REDACTED:private]",
	"aws_secret_access_key", base64.StdEncoding.EncodeToString([]byte("user:" + "pass")),
	"Ab3dEf6hIj9kLm2nOp5q", "0123456789abcdef0123456789abcdef", "ABCDEFGHIJKLMNOP", "abcdefghijklmnopqrstuvwxyz",
	"é", "\xff", "日本",
}

func FuzzFragments(f *testing.F) {
	f.Add([]byte{0, 10, 60, 25})
	f.Add([]byte{48, 10, 26, 53, 13, 58, 54})
	f.Add([]byte{80, 0, 10, 90, 81})
	f.Fuzz(func(t *testing.T, data []byte) {
		var b strings.Builder
		for _, c := range data {
			b.WriteString(fragments[int(c)%len(fragments)])
		}
		checkProperties(t, b.String())
	})
}
