package redact

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// newRand returns a deterministic source, so failures reproduce.
func newRand(testing.TB) *rand.Rand {
	return rand.New(rand.NewPCG(0x656e6772, 0x616d))
}

// checkRedacted asserts that secret is gone from String(in), that a
// placeholder of type typ is present, and that redaction is idempotent.
func checkRedacted(t *testing.T, in, secret, typ string) {
	t.Helper()
	out, n := String(in)
	if strings.Contains(out, secret) {
		t.Fatalf("secret survived\n in: %q\nout: %q", in, out)
	}
	if want := placeholder(typ); !strings.Contains(out, want) {
		t.Fatalf("output lacks %s\n in: %q\nout: %q", want, in, out)
	}
	if n == 0 {
		t.Fatalf("String(%q) reported 0 replacements", in)
	}
	checkIdempotent(t, out)
}

func checkIdempotent(t *testing.T, out string) {
	t.Helper()
	again, n := String(out)
	if again != out || n != 0 {
		t.Fatalf("not idempotent (%d more replacements)\n once: %q\ntwice: %q", n, out, again)
	}
}

func TestProviderTokensInContext(t *testing.T) {
	r := newRand(t)
	for _, g := range tokenGens {
		for _, c := range tokenContexts {
			t.Run(g.name+"/"+c.name, func(t *testing.T) {
				for range 20 {
					secret := g.gen(r)
					checkRedacted(t, fmt.Sprintf(c.tmpl, secret), secret, g.typ)
				}
			})
		}
	}
}

// TestExact pins the output format: what stays readable around a secret.
func TestExact(t *testing.T) {
	r := newRand(t)
	pw := mixed(r, 16)
	gh := cat("gh", "p_", mixed(r, 36))
	tests := []struct {
		name, in, want string
		n              int
	}{
		{"url password", "postgres://app:" + pw + "@db:5432/x", "postgres://app:[REDACTED:url-password]@db:5432/x", 1},
		{"env", "DB_PASSWORD=" + pw, "DB_PASSWORD=[REDACTED:env-secret]", 1},
		{"env export quoted", `export SESSION_SECRET="` + pw + `"`, `export SESSION_SECRET="[REDACTED:env-secret]"`, 1},
		{"yaml", "  password: " + pw + "\n  user: app", "  password: [REDACTED:env-secret]\n  user: app", 1},
		{"json", `{"client_secret": "` + pw + `", "client_id": "abc"}`, `{"client_secret": "[REDACTED:env-secret]", "client_id": "abc"}`, 1},
		{"provider in env", "GITHUB_TOKEN=" + gh, "GITHUB_TOKEN=[REDACTED:github]", 1},
		{"bearer", "Authorization: Bearer " + pw, "Authorization: Bearer [REDACTED:bearer-token]", 1},
		{"private", "a <private>my address</private> b", "a [REDACTED:private] b", 1},
		{"private unterminated", "a <PRIVATE>secret\nstuff", "a [REDACTED:private]", 1},
		{"private key", "key:\n-----BEGIN EC PRIVATE KEY-----\nMHcC\n-----END EC PRIVATE KEY-----\ndone", "key:\n[REDACTED:private-key]\ndone", 1},
		{"github user in url", "https://" + gh + ":x-oauth-basic@github.com/o/r.git", "https://[REDACTED:github]:[REDACTED:url-password]@github.com/o/r.git", 2},
		{"token as url password", "https://x-access-token:" + gh + "@github.com/o/r", "https://x-access-token:[REDACTED:github]@github.com/o/r", 1},
		{"curl -u", "curl -u admin:" + pw + " https://x.example.com", "curl -u admin:[REDACTED:url-password] https://x.example.com", 1},
		{"query", "GET /cb?code=1&access_token=" + pw + "&state=x", "GET /cb?code=1&access_token=[REDACTED:env-secret]&state=x", 1},
		{"flag", "app --db-password=" + pw + " --port 80", "app --db-password=[REDACTED:env-secret] --port 80", 1},
		{"go literal", `cfg := Config{Password: "` + pw + `"}`, `cfg := Config{Password: "[REDACTED:env-secret]"}`, 1},
		{"slack webhook", "https://hooks.slack.com/services/T0" + mixed(r, 8) + "/B0" + mixed(r, 8) + "/" + mixed(r, 24), "https://hooks.slack.com/services/[REDACTED:slack]", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n := String(tt.in)
			if got != tt.want || n != tt.n {
				t.Errorf("String(%q)\n = %q, %d\nwant %q, %d", tt.in, got, n, tt.want, tt.n)
			}
			checkIdempotent(t, got)
		})
	}
}

func TestAWSSecret(t *testing.T) {
	r := newRand(t)
	contexts := []string{
		"[default]\naws_access_key_id = %[2]s\naws_secret_access_key = %[1]s\nregion = us-east-1",
		"export AWS_ACCESS_KEY_ID=%[2]s\nexport AWS_SECRET_ACCESS_KEY=%[1]s",
		`{"Credentials": {"AccessKeyId": "%[2]s", "SecretAccessKey": "%[1]s", "SessionToken": "x"}}`,
		"aws_secret: '%[1]s'",
	}
	for i, c := range contexts {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			for range 20 {
				secret := randFrom(r, b64std, 40)
				id := cat("AK", "IA", randFrom(r, upper32, 16))
				in := fmt.Sprintf(c, secret, id)
				checkRedacted(t, in, secret, typeAWSSecret)
				if strings.Contains(c, "%[2]s") {
					checkRedacted(t, in, id, typeAWSKey)
				}
			}
		})
	}
}

func TestURLPassword(t *testing.T) {
	r := newRand(t)
	contexts := []string{
		"postgres://app:%s@db.internal:5432/app?sslmode=disable",
		`DATABASE_URL="mysql://root:%s@127.0.0.1:3306/shop"`,
		"git clone https://deploy:%s@git.example.com/team/repo.git",
		"redis://:%s@cache:6379/0",
		"amqp://guest:%s@rabbit/ ",
		"curl -u admin:%s https://registry.example.com/v2/_catalog",
		"curl --user 'ci:%s' -X POST https://jenkins.example.com/job/x/build",
		"see [the db](postgresql://svc:%s@10.0.0.5/main) for details",
	}
	for i, c := range contexts {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			for range 20 {
				secret := mixed(r, 8+r.IntN(24)) + randFrom(r, "!*~-_.", 2)
				checkRedacted(t, fmt.Sprintf(c, secret), secret, typeURLPassword)
			}
		})
	}
}

func TestEnvSecret(t *testing.T) {
	r := newRand(t)
	contexts := []string{
		"DB_PASSWORD=%s\nDB_HOST=localhost",
		"export SESSION_SECRET=\"%s\"",
		"export stripe_webhook_secret='%s'",
		"  client_secret: %s\n  client_id: web",
		`{"password": "%s", "user": "admin"}`,
		"SMTP_PASS=%s",
		"REDIS_PWD=%s",
		"JWT_SIGNING_KEY=%s",
		"MY_APP_CREDENTIALS=%s",
		"dbPassword = '%s'",
		"    POSTGRES_PASSWORD: %s",
		"docker run -e ADMIN_TOKEN=%s -p 80:80 app",
		"mysql --password=%s -h db",
		"Set-Item Env:API_KEY \"x\"; $env:SERVICE_API_KEY = \"%s\"",
		"ENV SECRET_KEY_BASE=%s",
		"config.auth_token = \"%s\"",
		"const apiKey = `%s`;",
		"settings:\n  encryption_key: \"%s\"",
		`'password' => '%s',`,
		"X-Api-Key: %s",
		"token: %s",
		`{"text": "API_SECRET=%s\nDEBUG=1"}`,
		"passphrase = %s",
		"GITHUB_PAT=%s",
		"jdbc:mysql://db:3306/app?user=app&password=%s",
		"  - \"POSTGRES_PASSWORD=%s\"",
		"level=info msg=refreshed session_token=%s user=bob",
		"printf '%%s' \"$X\" | API_TOKEN=%s ./run",
	}
	for i, c := range contexts {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			for range 20 {
				secret := mixed(r, 12+r.IntN(30))
				checkRedacted(t, fmt.Sprintf(c, secret), secret, typeEnvSecret)
			}
		})
	}
}

func TestBearerToken(t *testing.T) {
	r := newRand(t)
	basic := func() (string, string) {
		pw := mixed(r, 14)
		return base64.StdEncoding.EncodeToString([]byte("deploy:" + pw)), pw
	}
	contexts := []string{
		"curl -H 'Authorization: Bearer %s' https://api.example.com",
		`headers = {"Authorization": "Bearer %s", "Accept": "application/json"}`,
		"GET /v1/me HTTP/1.1\nHost: x\nauthorization: token %s\n",
		"Authorization: %s",
		"the request carried bearer %s and failed",
	}
	for i, c := range contexts {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			for range 20 {
				secret := mixed(r, 20+r.IntN(40)) + randFrom(r, "-._~+/", 1) + mixed(r, 4)
				checkRedacted(t, fmt.Sprintf(c, secret), secret, typeBearer)
			}
		})
	}
	t.Run("basic", func(t *testing.T) {
		for range 20 {
			b64, pw := basic()
			for _, c := range []string{"Authorization: Basic %s", "wget --header=\"Authorization: Basic %s\" x", "sent Basic %s upstream"} {
				in := fmt.Sprintf(c, b64)
				checkRedacted(t, in, b64, typeBearer)
				if out, _ := String(in); strings.Contains(out, pw) {
					t.Fatalf("password survived: %q", out)
				}
			}
		}
	})
}

func genPEM(r *rand.Rand, label string, lines int) (block, body string) {
	var b strings.Builder
	for i := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(randFrom(r, b64std, 64))
	}
	body = b.String()
	return "-----BEGIN " + label + "-----\n" + body + "\n-----END " + label + "-----", body
}

func TestPrivateKey(t *testing.T) {
	r := newRand(t)
	labels := []string{
		"RSA PRIVATE KEY", "EC PRIVATE KEY", "DSA PRIVATE KEY", "OPENSSH PRIVATE KEY",
		"PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "PGP PRIVATE KEY BLOCK",
	}
	for _, label := range labels {
		t.Run(label, func(t *testing.T) {
			block, body := genPEM(r, label, 5)
			firstLine := body[:64]
			cases := map[string]string{
				"plain":        "here is the key:\n" + block + "\nthanks",
				"markdown":     "```\n" + block + "\n```",
				"json-escaped": `{"private_key": "` + strings.ReplaceAll(block, "\n", `\n`) + `\n", "type": "service_account"}`,
				"unterminated": "$ cat id\n" + block[:strings.Index(block, "-----END")],
				"truncated":    "-----BEGIN " + label + "-----\n" + body[:100],
			}
			for name, in := range cases {
				t.Run(name, func(t *testing.T) {
					checkRedacted(t, in, firstLine, typePrivateKey)
					out, _ := String(in)
					if strings.Contains(out, "BEGIN") || strings.Contains(out, "END "+label) {
						t.Errorf("armor survived: %q", out)
					}
				})
			}
		})
	}
	t.Run("public key stays", func(t *testing.T) {
		in := "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----"
		if out, n := String(in); out != in || n != 0 {
			t.Errorf("String(%q) = %q, %d", in, out, n)
		}
	})
	t.Run("two keys", func(t *testing.T) {
		a, _ := genPEM(r, "RSA PRIVATE KEY", 3)
		b, _ := genPEM(r, "OPENSSH PRIVATE KEY", 3)
		in := a + "\nand\n" + b + "\nend"
		want := "[REDACTED:private-key]\nand\n[REDACTED:private-key]\nend"
		if out, n := String(in); out != want || n != 2 {
			t.Errorf("String = %q, %d; want %q, 2", out, n, want)
		}
	})
}

func TestPrivateBlocks(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"simple", "x <private>a</private> y", "x [REDACTED:private] y"},
		{"case", "x <Private>a</PRIVATE> y", "x [REDACTED:private] y"},
		{"multi-line", "x\n<private>\nmy home is\n 12 Main St\n</private>\ny", "x\n[REDACTED:private]\ny"},
		{"multiple", "<private>a</private> mid <private>b</private> end", "[REDACTED:private] mid [REDACTED:private] end"},
		{"nested", "<private>a <private>b</private> c</private> d", "[REDACTED:private] d"},
		{"unterminated", "before <private>rest of\nthe text", "before [REDACTED:private]"},
		{"unterminated after closed", "<private>a</private> b <private>c", "[REDACTED:private] b [REDACTED:private]"},
		{"stray close", "a </private> b", "a </private> b"},
		{"blank before >", "a <private >x</private > b", "a [REDACTED:private] b"},
		{"not a tag", "a private method, <privateer> b", "a private method, <privateer> b"},
		{"with secrets inside", "<private>DB_PASSWORD=abc123</private>", "[REDACTED:private]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := String(tt.in)
			if got != tt.want {
				t.Errorf("String(%q)\n = %q\nwant %q", tt.in, got, tt.want)
			}
			checkIdempotent(t, got)
		})
	}
}

// negatives is normal developer conversation that must come back unchanged.
var negatives = []string{
	"The token is passed to the middleware, which checks the password hash.",
	"Use `git log --oneline` to see commits; 3f786850e387550fdab836ed7e6dc881de23001b is the fix.",
	"commit 9fceb02d0ae598e95dc970b74767f19372d61af8\nAuthor: Dev <dev@example.com>\nDate:   Mon Jan 1",
	"request id 550e8400-e29b-41d4-a716-446655440000 failed",
	"token := getToken()\nif password == \"\" {\n\treturn ErrNoPassword\n}",
	"func (s *Server) auth(ctx context.Context, token string) error {",
	"const token = await getToken();\nconst { password } = req.body;",
	"if (password === '') return;",
	"API_KEY=\nSECRET=\n",
	"PASSWORD=${PASSWORD}\nTOKEN=$(cat /run/secrets/token)\nAPI_KEY=$API_KEY",
	"DB_PASSWORD=\"${DB_PASSWORD:-}\"",
	"set %API_TOKEN% before running",
	"The task-sk-ill is a joke; also see sk-learn and the disk-usage tool.",
	"max_tokens: 4096\ntemperature: 0.2\nprompt_tokens=123",
	"TOKEN_URL=https://auth.example.com/oauth/token\nAUTH_TYPE=oauth2\nPASSWORD_MIN_LENGTH=12",
	"GOOGLE_APPLICATION_CREDENTIALS=/home/dev/.config/gcloud/app.json",
	"PWD=/home/dev/project\nOLDPWD=/home/dev",
	"password: string;\ntoken?: string;\nauth: AuthConfig | null;",
	"def login(username: str, password: str) -> Token:",
	"user.password = hashed\ncfg.Token = os.Getenv(\"TOKEN\")",
	"token: tok,\nPassword: *flagPassword,\nAuth: opts.Auth,",
	"self.secret = secret\nreturn token.strip()",
	"password = input(\"Password: \")",
	"token = request.headers.get('Authorization')",
	"Authorization: Bearer $TOKEN",
	"-H \"Authorization: Bearer ${API_TOKEN}\"",
	"Authorization: Required for all endpoints except /health.",
	"We use Bearer authentication with short-lived tokens.",
	"Basic usage: run `engram status`.",
	"See http://localhost:8080/api and https://example.com/a@b",
	"ssh git@github.com and scp user@host:/tmp/x .",
	"postgres://localhost:5432/app and postgres://app@db/app",
	"mongodb://${DB_USER}:${DB_PASS}@mongo:27017",
	"Files: /usr/local/bin/engram, ./internal/redact/redact.go, ~/.claude/settings.json",
	"the author field and authority header are not secrets",
	"--password-file /etc/app/pw --token-file=/run/token",
	"secretName: app-tls\nsecretKeyRef:\n  name: db\n  key: password",
	"password: \"********\"\ntoken: xxxx\nAPI_KEY=<your-api-key>",
	"auth: true\nsecret: false\ntoken: null",
	"docker run -u 1000:1000 -p 8080:80 image",
	"for key, val := range m {\n\tkeys = append(keys, key)\n}",
	"Public keys look like -----BEGIN PUBLIC KEY----- and certificates like -----BEGIN CERTIFICATE-----.",
	"base64: SGVsbG8gV29ybGQ= and sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
	"AKIA is the prefix of AWS access key ids; ghp_ of GitHub tokens; eyJ starts a JWT.",
	"Set OPENAI_API_KEY in your environment; the placeholder is sk-... in the docs.",
	"password == \"\" || token != nil",
	"pat := regexp.MustCompile(`^a+$`)\npat = re.compile(r\"\\d+\")",
	"already: KEY=[REDACTED:env-secret] url postgres://a:[REDACTED:url-password]@h Bearer [REDACTED:bearer-token] [REDACTED:private]",
	"ünïcödé text with a token: ✓ and a password — none set",
	"kubectl get secret db-creds -o jsonpath='{.data.password}' | base64 -d",
	"ERROR invalid_grant: token expired at 2024-01-01T00:00:00Z",
	"| Key | Value |\n|-----|-------|\n| auth | oauth |",
	"export GITHUB_TOKEN=`gh auth token`",
	"env:\n  password: ${{ secrets.DB_PASSWORD }}\n  token: ${{ secrets.GITHUB_TOKEN }}",
	"password = var.db_password\npassword = random_password.db.result",
	"  secretKeyRef:\n    name: db",
	"level=info msg=\"token refreshed\" token_id=42 auth=failed",
	"headers = {\"Authorization\": f\"Bearer {token}\"}",
	"headers: { Authorization: `Bearer ${token}` },",
	"'Authorization': 'Bearer ' + token,",
	"Authorization header missing; got 401",
	"jdbc:mysql://db:3306/app and git push -u origin main",
	"log.Printf(\"token: %s\", tok)\nfmt.Sprintf(\"PASSWORD=%v\", pw)",
	"print(\"Password: \" + pw)\nlog(\"token: \" + t, \"other\")",
	"ghp_ is short here: ghp_abc, and sk-proj- alone.",
	"The Bearer Bearer Bearer token type.",
}

func TestNegatives(t *testing.T) {
	for i, in := range negatives {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if out, n := String(in); out != in || n != 0 {
				t.Errorf("String changed normal text (%d replacements)\n in: %q\nout: %q", n, in, out)
			}
		})
	}
}

func TestMultipleSecrets(t *testing.T) {
	r := newRand(t)
	var in strings.Builder
	var secrets []string
	for i, g := range tokenGens {
		s := g.gen(r)
		secrets = append(secrets, s)
		fmt.Fprintf(&in, "step %d: used %s for %s\n", i, s, g.name)
	}
	pw := mixed(r, 20)
	secrets = append(secrets, pw)
	fmt.Fprintf(&in, "DB_PASSWORD=%s\n<private>home address</private>\n", pw)
	out, n := String(in.String())
	for _, s := range secrets {
		if strings.Contains(out, s) {
			t.Errorf("secret %q survived", s)
		}
	}
	if want := len(secrets) + 1; n != want {
		t.Errorf("replacements = %d, want %d\n%s", n, want, out)
	}
	for _, g := range tokenGens {
		if !strings.Contains(out, placeholder(g.typ)) {
			t.Errorf("no %s placeholder", g.typ)
		}
	}
	checkIdempotent(t, out)
}

func TestInvalidUTF8(t *testing.T) {
	r := newRand(t)
	gh := cat("gh", "p_", mixed(r, 36))
	tests := []string{
		"\xff\xfe\xfd",
		"token=\xff\xfe" + gh,
		"PASSWORD=\xc3\x28abc\xff\n",
		"<private>\xff</private>\xfe",
		"postgres://u:\xff\xfe@h/x",
		"\xe2\x82" + gh + "\xe2",
		"-----BEGIN RSA PRIVATE KEY-----\n\xff\xff",
	}
	for i, in := range tests {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			out, _ := String(in)
			if strings.Contains(out, gh) {
				t.Errorf("secret survived: %q", out)
			}
			checkIdempotent(t, out)
		})
	}
}

func TestValidUTF8Kept(t *testing.T) {
	in := "héllo DB_PASSWORD=pässwörd✓ <private>日本語</private> Authorization: Bearer ÄÖÜabcdefgh123"
	out, _ := String(in)
	if !utf8.ValidString(out) {
		t.Fatalf("invalid UTF-8 output: %q", out)
	}
	if strings.Contains(out, "pässwörd") || strings.Contains(out, "日本語") {
		t.Fatalf("secret survived: %q", out)
	}
}

func TestEmptyAndHuge(t *testing.T) {
	if out, n := String(""); out != "" || n != 0 {
		t.Errorf(`String("") = %q, %d`, out, n)
	}
	// Adversarial repetitions: a scanner that rescanned each candidate's
	// value from scratch would be quadratic on these (minutes, not
	// milliseconds, at this size).
	units := []string{
		"a_token=(", "token=", "TOKEN=\"", `a_token="$`, "key: ", "'password': '", "a:",
		"sk-", "ghp_", "AKIA", "eyJ", "://a", "<private", "Bearer ", "-----BEGIN X PRIVATE KEY",
	}
	for _, unit := range units {
		in := strings.Repeat(unit, (256<<10)/len(unit))
		out, _ := String(in)
		checkIdempotent(t, out)
	}
}

func TestKeyIsSecret(t *testing.T) {
	tests := []struct {
		key  string
		want bool
	}{
		{"PASSWORD", true}, {"DB_PASSWORD", true}, {"dbPassword", true}, {"DBPASSWORD", true},
		{"db_passwd", true}, {"REDIS_PWD", true}, {"SMTP_PASS", true}, {"DBPass", true}, {"pw", true},
		{"SECRET", true}, {"client_secret", true}, {"clientSecret", true}, {"JWT_SECRET_KEY", true},
		{"TOKEN", true}, {"accessToken", true}, {"refresh_token", true}, {"GITHUB_TOKEN", true}, {"x-auth-token", true},
		{"API_KEY", true}, {"apiKey", true}, {"x-api-key", true}, {"APIKEY", true}, {"ACCESS_KEY", true},
		{"PRIVATE_KEY", true}, {"SESSION_KEY", true}, {"ENCRYPTION_KEY", true}, {"APP_KEY", true},
		{"CREDENTIALS", true}, {"db_creds", true}, {"AUTH", true}, {"basic_auth", true}, {"GITHUB_PAT", true},
		{"passphrase", true}, {"--password", true},

		{"PWD", false}, {"OLDPWD", false}, {"key", false}, {"SORT_KEY", false}, {"primaryKey", false},
		{"TOKEN_URL", false}, {"token_endpoint", false}, {"PASSWORD_FILE", false}, {"SECRET_NAME", false},
		{"AUTH_TYPE", false}, {"auth_provider", false}, {"max_tokens", false}, {"maxTokens", false},
		{"prompt_tokens", false}, {"tokenizer", false}, {"TOKEN_TTL", false}, {"PASSWORD_MIN_LENGTH", false},
		{"ACCESS_KEY_ID", false}, {"CLIENT_ID", false}, {"author", false}, {"authority", false},
		{"bypass", false}, {"compass", false}, {"path", false}, {"pattern", false}, {"pat", false},
		{"AUTH_USER", false}, {"SECRET_PATH", false}, {"token_count", false},
	}
	for _, tt := range tests {
		if got := keyIsSecret(tt.key, strings.ToLower(tt.key)); got != tt.want {
			t.Errorf("keyIsSecret(%q) = %v, want %v", tt.key, got, tt.want)
		}
		if tt.want && secretTriggers(tt.key) == 0 {
			t.Errorf("secretTriggers(%q) = 0 for a secret key", tt.key)
		}
	}
}

func TestLooksSecret(t *testing.T) {
	tests := []struct {
		v    string
		want bool
	}{
		{"hunter2", true}, {"p@ssw0rd", true}, {"1234", true}, {"abc-123", true}, {"s3cr3t", true},
		{"aB3xY9kLmN2pQ7rS", true}, {"kJhGfDsAqWeRtYuI", true}, {"a.b+c", true},
		{"hunter", false}, {"string", false}, {"AuthConfig", false}, {"ServiceAccountCredentials", false},
		{"user.password", false}, {"user?.token", false}, {"opts!.secret", false}, {"*flagPassword", false},
		{"&cfg.Token", false}, {"getToken()", false}, {"os.environ[", false}, {"Promise<string>", false},
		{"basic-auth", false}, {"tok", false}, {"v2.api", false},
	}
	for _, tt := range tests {
		if got := looksSecret(tt.v); got != tt.want {
			t.Errorf("looksSecret(%q) = %v, want %v", tt.v, got, tt.want)
		}
	}
}

// TestIdempotentRegressions pins inputs the fuzzer found where a replacement
// changed what a detector saw next to it.
func TestIdempotentRegressions(t *testing.T) {
	for _, in := range []string{
		// The kv pass redacted the first "Bearer", which had hidden the
		// third from the bearer scan.
		"sk-ant-api03---password=Bearer Bearer Bearer Bearer sk-ant-api03-Bearer ",
		// An OpenAI key swallowed a "ya29." whose examined body had hidden
		// the next one.
		"sk-hostsk-ant-api03-ya29.ya29.sk-ant-api03-sk-ant-api03-",
	} {
		out, _ := String(in)
		checkIdempotent(t, out)
	}
}
