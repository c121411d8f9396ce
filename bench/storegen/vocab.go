package main

import (
	"math/rand/v2"
	"strings"
)

// Word lists. Every list is ranked: the first entries are drawn most often
// (a Zipf law over the list's ranks), so that a few words ("test", "file",
// "error", "go", "run", "fix") are in most episodes and the tail is rare.
// Identifiers glued from three parts (parseLeaseConfig) and file paths add a
// combinatorial long tail. Nothing here is about poetry, cooking or
// mountains: the "unrelated" prompt of bench/prompt-hook.sh relies on that.

var (
	verbs = fields(`fix add run update change remove check use build debug refactor rename move write
	handle return call parse load read create delete set test configure implement replace split merge revert
	install upgrade deploy migrate cache retry validate log wrap export import skip mock stub profile benchmark
	document format lint vendor pin bump squash rebase cherry-pick bisect inline extract simplify rewrite
	serialize deserialize normalize sanitize escape throttle debounce batch stream paginate shard index vacuum
	backfill memoize invalidate compile transpile bundle minify polyfill hydrate prefetch`)

	nouns = fields(`test file error function package config handler request response type value server client
	struct interface method module build version query table field schema route endpoint service database
	cache token session user context timeout flag option command script output input log message event job
	worker queue channel goroutine lock mutex pointer slice map string buffer stream connection pool transaction
	migration index column row key header cookie middleware router template component hook state prop store
	reducer selector promise callback closure iterator generator decorator fixture assertion snapshot coverage
	pipeline workflow artifact image container volume secret certificate proxy socket port host domain cluster
	node pod deployment namespace manifest chart registry tag commit branch release changelog dependency
	lockfile linter formatter compiler runtime allocator heap stack trace profile metric gauge counter histogram
	span exporter collector dashboard alert threshold quota limit budget retention backup restore replica shard
	partition offset consumer producer topic broker subscription webhook payload signature nonce checksum digest
	tombstone watermark cursor bookmark sentinel semaphore barrier latch lease heartbeat ticker backoff jitter`)

	// techs: libraries, tools and concepts, from everyday to rare.
	techs = fields(`go sqlite json http docker git npm typescript react python postgres redis grpc yaml css
	html kubernetes bash make linux node webpack vite eslint prettier jest pytest cargo rust terraform aws
	github nginx graphql protobuf openapi swagger oauth jwt cors csrf tls ssh curl jq systemd cron vim
	tmux zsh homebrew apt ubuntu debian alpine macos windows wsl vscode neovim gopls delve pprof staticcheck
	golangci-lint gofmt goimports sqlc gorm ent cobra viper zap zerolog slog testify gomock ginkgo chi gin
	echo fiber fasthttp websocket sse mqtt kafka nats rabbitmq sqs sns lambda s3 dynamodb cloudfront route53
	gcp bigquery pubsub firestore azure cosmosdb helm kustomize argocd flux istio envoy linkerd prometheus
	grafana loki tempo jaeger opentelemetry sentry datadog honeycomb pagerduty vault consul nomad packer
	ansible pulumi bazel buck nix guix flatpak snap podman buildah kaniko skaffold tilt minikube kind k3s
	playwright cypress puppeteer selenium storybook chromatic tailwind sass less postcss babel swc esbuild
	rollup parcel turbopack nextjs nuxt sveltekit remix astro gatsby angular vue svelte solid preact htmx
	alpinejs django flask fastapi starlette pydantic sqlalchemy alembic celery uvicorn gunicorn poetry pipenv
	conda numpy pandas polars pyarrow duckdb clickhouse timescaledb cockroachdb spanner vitess planetscale
	supabase firebase hasura prisma drizzle knex sequelize typeorm mongoose mongodb cassandra scylladb
	elasticsearch opensearch meilisearch typesense lucene tantivy bleve fts5 bm25 trigram porter unicode61
	hnsw faiss annoy pgvector qdrant weaviate milvus chroma lancedb embeddings tokenizer bpe sentencepiece
	wasm wasi tinygo cgo musl glibc ldd strace ltrace gdb lldb valgrind asan tsan ubsan fuzzing libfuzzer
	afl quickcheck hypothesis proptest mutation flamegraph ebpf bpftrace dtrace perf iostat vmstat sar
	numa hugepages io_uring epoll kqueue inotify fsnotify fanotify seccomp apparmor selinux capabilities
	cgroups namespaces overlayfs btrfs zfs xfs ext4 fsync fdatasync mmap madvise sendfile splice vmsplice
	hyperloglog bloomfilter cuckoo skiplist btree lsm rocksdb leveldb pebble badger bolt etcd raft paxos
	gossip crdt lamport vectorclock idempotency backpressure loadshedding bulkhead hedging singleflight
	zstd brotli lz4 snappy gzip deflate msgpack cbor avro thrift capnproto flatbuffers bson ndjson
	utf8 punycode idna iso8601 rfc3339 tzdata leapsecond monotonic ntp chrony ptp`)

	packages = fields(`net/http encoding/json database/sql context os testing fmt strings time io errors sync
	log/slog path/filepath bufio bytes sort strconv regexp os/exec flag embed net/url crypto/sha256
	encoding/binary math unicode/utf8 runtime/pprof text/template html/template archive/zip compress/gzip
	github.com/stretchr/testify modernc.org/sqlite github.com/spf13/cobra github.com/go-chi/chi
	github.com/gofrs/flock github.com/kelseyhightower/envconfig github.com/sashabaranov/go-openai
	golang.org/x/sync/errgroup golang.org/x/sys/unix google.golang.org/grpc github.com/jackc/pgx
	github.com/redis/go-redis github.com/prometheus/client_golang go.opentelemetry.io/otel
	github.com/google/uuid github.com/rs/zerolog go.uber.org/zap github.com/spf13/viper
	@tanstack/react-query react-router-dom zod axios lodash date-fns express fastify next vitest
	@testing-library/react msw zustand redux-toolkit immer rxjs socket.io ws pino winston dotenv
	requests httpx aiohttp pytest-asyncio mypy ruff black isort pydantic-settings structlog tenacity
	serde tokio axum reqwest clap anyhow thiserror tracing rayon crossbeam`)

	dirs = fields(`internal cmd pkg src lib app api web server client tests scripts tools docs config deploy
	migrations handlers models services utils components hooks store db auth billing payments users
	accounts search indexer worker scheduler notifications email storage uploads cache metrics admin
	gateway proxy router middleware transport codec schema fixtures testdata e2e integration bench`)

	basenames = fields(`main handler server client config store service model routes auth middleware
	types utils errors db cache worker queue scheduler index search parser lexer encoder decoder
	migrate session token user account billing invoice payment webhook retry backoff limiter pool
	conn tx query schema fixtures helpers setup teardown options flags logger metrics tracing health
	version build release deploy docker compose makefile readme changelog settings env secrets`)

	exts = fields(`go go go ts tsx py js rs sql yaml json md sh toml proto css html`)

	commands = []string{
		"go test ./...", "go build ./...", "go vet ./...", "go test -race ./...", "go run ./cmd/server",
		"go mod tidy", "go test -run TestX -v ./internal/...", "go generate ./...", "gofmt -l .",
		"npm test", "npm run build", "npm install", "npm run lint", "npx tsc --noEmit", "pnpm dev",
		"yarn test --watch", "pytest -x", "pytest -k slow", "python -m pip install -e .", "ruff check .",
		"mypy src", "cargo test", "cargo build --release", "cargo clippy", "make test", "make build",
		"make lint", "docker compose up -d", "docker build -t app .", "docker logs -f api",
		"kubectl get pods", "kubectl logs deploy/api", "kubectl rollout restart deploy/api",
		"helm upgrade --install api ./chart", "terraform plan", "terraform apply", "git status",
		"git rebase -i main", "git bisect start", "git log --oneline", "git stash pop", "git push --force-with-lease",
		"gh pr create", "gh run watch", "curl -v localhost:8080/health", "psql -c 'select 1'",
		"sqlite3 memory.db .schema", "redis-cli monitor", "journalctl -u api -f", "systemctl restart api",
		"ls -la", "grep -rn TODO .", "rg --files", "jq . out.json", "go tool pprof cpu.prof",
		"perf record -g ./bin/server", "strace -f ./bin/server", "golangci-lint run", "staticcheck ./...",
	}

	errorMsgs = []string{
		"undefined: %s", "cannot use %s (variable of type string) as int value", "nil pointer dereference in %s",
		"panic: runtime error: index out of range [3] with length 3", "context deadline exceeded",
		"connection refused", "dial tcp 127.0.0.1:5432: connect: connection refused", "database is locked",
		"SQLITE_BUSY: database is locked", "no such table: %s", "UNIQUE constraint failed: %s.id",
		"permission denied", "no such file or directory: %s", "import cycle not allowed", "EADDRINUSE: address already in use :::3000",
		"TypeError: Cannot read properties of undefined (reading '%s')", "ModuleNotFoundError: No module named '%s'",
		"expected 2 arguments, got 3", "missing return", "declared and not used: %s", "test timed out after 10m0s",
		"FAIL %s", "fatal error: concurrent map writes", "DATA RACE in %s", "x509: certificate signed by unknown authority",
		"401 Unauthorized", "403 Forbidden", "404 Not Found: %s", "429 Too Many Requests", "500 Internal Server Error",
		"502 Bad Gateway", "OOMKilled", "CrashLoopBackOff", "ImagePullBackOff", "exit status 1", "exit status 2",
		"signal: killed", "segmentation fault", "stack overflow in %s", "deadlock detected", "too many open files",
		"invalid memory address or nil pointer dereference", "json: cannot unmarshal string into Go value of type int",
		"unexpected EOF", "broken pipe", "i/o timeout", "TLS handshake timeout", "certificate has expired",
		"build constraints exclude all Go files in %s", "ambiguous import: found package %s in multiple modules",
		"go: updates to go.mod needed", "Property '%s' does not exist on type", "Hydration failed because the initial UI does not match",
		"ERR_MODULE_NOT_FOUND", "error[E0382]: borrow of moved value: %s", "assertion failed: expected 3, got 4",
	}

	identPrefix = fields(`parse load save get set new handle build make read write open close start stop
	run apply merge sync flush reset init validate encode decode render fetch resolve register lookup
	compute update delete list find scan walk emit dispatch schedule reconcile refresh rotate prune
	compact drain spawn retry acquire release`)
	identMiddle = fields(`Config User Session Token Request Response Episode Belief Capture Store Cache Index
	Query Schema Route Handler Worker Job Queue Event Message Stream Batch Lease Lock File Path Entry
	Record Row Column Table Vector Embedding Prompt Context Transcript Spool Account Invoice Payment
	Webhook Order Cart Product Tenant Project Workspace Cluster Node Shard Replica Snapshot Checkpoint`)
	identSuffix = fields(`Handler Func Options Result Error Test Helper Loop Once All Batch Async Sync Fast
	Safe V2 Locked Internal Impl Ctx Fn Into From Meta Stats`)

	projectNames = fields(`billing-api web-dashboard engram infra data-pipeline mobile-app auth-service
	search-indexer notifications cli-tools`)

	// Sentence glue: the words around the slots.
	adjectives = fields(`failing flaky slow broken new old missing wrong empty nil duplicate stale
	large small nested concurrent async blocking optional required default custom internal public private
	generated unused deprecated experimental legacy temporary intermittent`)
)

func fields(s string) []string { return strings.Fields(s) }

// ranked draws from a list with a Zipf law over its ranks.
type ranked struct {
	words []string
	z     *rand.Zipf
}

func newRanked(r *rand.Rand, words []string, s float64) ranked {
	return ranked{words: words, z: rand.NewZipf(r, s, 1, uint64(len(words)-1))}
}

func (k ranked) pick() string { return k.words[k.z.Uint64()] }

// vocab holds one record's samplers (a Zipf sampler keeps its *rand.Rand).
// issue is the number of the issue the record's session works on: like a
// ticket or branch name, it is mentioned in a dozen episodes whatever the
// store's size (a rare term that stays rare).
type vocab struct {
	issue                            string
	r                                *rand.Rand
	verb, noun, tech, pkg, dir, base ranked
	cmd, errm, iPre, iMid, iSuf, adj ranked
}

func newVocab(r *rand.Rand) *vocab {
	return &vocab{r: r,
		verb: newRanked(r, verbs, 1.1), noun: newRanked(r, nouns, 1.1), tech: newRanked(r, techs, 1.05),
		pkg: newRanked(r, packages, 1.2), dir: newRanked(r, dirs, 1.2), base: newRanked(r, basenames, 1.2),
		cmd: newRanked(r, commands, 1.3), errm: newRanked(r, errorMsgs, 1.2),
		iPre: newRanked(r, identPrefix, 1.05), iMid: newRanked(r, identMiddle, 1.05), iSuf: newRanked(r, identSuffix, 1.1),
		adj: newRanked(r, adjectives, 1.2),
	}
}

// ident is a Go-style identifier such as parseLeaseConfigOnce.
func (v *vocab) ident() string {
	id := v.iPre.pick() + v.iMid.pick()
	if v.r.IntN(2) == 0 {
		id += v.iSuf.pick()
	}
	return id
}

// path is a repository file path such as internal/billing/webhook.go.
func (v *vocab) path() string {
	var b strings.Builder
	for n := 1 + v.r.IntN(3); n > 0; n-- {
		b.WriteString(v.dir.pick())
		b.WriteByte('/')
	}
	b.WriteString(v.base.pick())
	if v.r.IntN(4) == 0 {
		b.WriteString("_test")
	}
	b.WriteByte('.')
	b.WriteString(exts[v.r.IntN(len(exts))])
	return b.String()
}

// errorMsg is an error message, its %s filled with an identifier or a path.
func (v *vocab) errorMsg() string {
	m := v.errm.pick()
	if strings.Contains(m, "%s") {
		fill := v.ident()
		if v.r.IntN(3) == 0 {
			fill = v.path()
		}
		m = strings.Replace(m, "%s", fill, 1)
	}
	return m
}

// thing is a noun phrase: "the flaky webhook handler", "parseTokenOnce",
// "the redis cache".
func (v *vocab) thing() string {
	switch v.r.IntN(6) {
	case 0:
		return v.ident()
	case 1:
		return "the " + v.tech.pick() + " " + v.noun.pick()
	case 2:
		return "the " + v.adj.pick() + " " + v.noun.pick()
	case 3:
		return v.path()
	default:
		return "the " + v.noun.pick() + " " + v.noun.pick()
	}
}

// fill expands a template: {verb} {noun} {tech} {pkg} {path} {cmd} {err}
// {ident} {adj} {thing} {issue} {sha}, and {verbs} for a verb's third person. Any other
// brace is kept (templates hold Go code).
func (v *vocab) fill(t string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(t, '{')
		if i < 0 {
			b.WriteString(t)
			return b.String()
		}
		b.WriteString(t[:i])
		t = t[i:]
		j := strings.IndexByte(t, '}')
		slot := ""
		if j > 0 {
			slot = t[1:j]
		}
		switch slot {
		case "verb":
			b.WriteString(v.verb.pick())
		case "verbs":
			b.WriteString(thirdPerson(v.verb.pick()))
		case "noun":
			b.WriteString(v.noun.pick())
		case "tech":
			b.WriteString(v.tech.pick())
		case "pkg":
			b.WriteString(v.pkg.pick())
		case "path":
			b.WriteString(v.path())
		case "cmd":
			b.WriteString(v.cmd.pick())
		case "err":
			b.WriteString(v.errorMsg())
		case "ident":
			b.WriteString(v.ident())
		case "adj":
			b.WriteString(v.adj.pick())
		case "thing":
			b.WriteString(v.thing())
		case "issue":
			b.WriteString(v.issue)
		case "sha": // a commit: a term found once
			const hexdigits = "0123456789abcdef"
			for range 7 {
				b.WriteByte(hexdigits[v.r.IntN(16)])
			}
		default:
			b.WriteByte('{')
			t = t[1:]
			continue
		}
		t = t[j+1:]
	}
}

func thirdPerson(verb string) string {
	for _, s := range []string{"s", "x", "sh", "ch"} {
		if strings.HasSuffix(verb, s) {
			return verb + "es"
		}
	}
	return verb + "s"
}

// Summary templates: one line of what happened, 100–300 characters once
// filled (shorter ones get a second clause).
var summaryTemplates = []string{
	"Fixed {err} in {path}: {ident} did not {verb} {thing} before the {noun} {noun}",
	"Decided to {verb} {thing} with {tech} instead of {tech} because the {adj} {noun} kept failing in {cmd}",
	"User prefers {tech} over {tech} for {noun} {noun}s and wants {cmd} to pass before every commit",
	"{cmd} failed with {err}; the cause was {thing} in {path}",
	"Refactored {ident} in {path} to {verb} the {noun} through {pkg} and removed the {adj} {noun}",
	"The {noun} {noun} of {tech} lives in {path}; {ident} is the entry point and {ident} does the {noun}",
	"Added a {adj} test for {ident} in {path} that covers the {noun} {noun} and the {err} case",
	"To {verb} {thing}, run {cmd} and then {cmd}; {tech} needs the {noun} {noun} set first",
	"Corrected: {ident} must not {verb} the {noun} while holding the {noun}, it caused {err}",
	"Investigated the {adj} {noun} in {tech}: {ident} was called twice per {noun}, fixed in {path}",
	"Question about how {pkg} handles the {noun} {noun} when {err} happens during {ident}",
	"Migrated the {noun} {noun} from {tech} to {tech}; {path} and {path} changed, {cmd} is green",
	"Always {verb} the {noun} with {pkg} in this project; never use {tech} for {noun}s",
	"Bumped {pkg} and {tech}; {cmd} then reported {err} until {ident} was updated",
	"Debugged {err} from {cmd}: the {adj} {noun} in {path} returned a {adj} {noun}",
	"Closed #{issue}: {ident} now {verbs} the {noun} {noun} in {path}",
}

// Context paragraphs: the bounded full context of an episode, 1–3 KB.
var contextTemplates = []string{
	"User: can you {verb} {thing}? {cmd} shows {err}.",
	"Assistant: I'll look at {path} first. The {noun} {noun} is set up in {ident}, which uses {pkg}.",
	"Ran `{cmd}`:\n    {err}\n    at {ident} ({path}:{noun})",
	"The {adj} {noun} comes from {ident}: it calls {ident} with a {adj} {noun} when the {noun} is {adj}.",
	"Changed {path}: {ident} now checks the {noun} before it {verbs} the {noun}, and {ident} returns the {err} error.",
	"```\nfunc {ident}(ctx context.Context, {noun} *{ident}) error {\n\tif err := {ident}(ctx); err != nil {\n\t\treturn fmt.Errorf(\"{verb} {noun}: %w\", err)\n\t}\n\treturn nil\n}\n```",
	"User: no, don't use {tech} here, we {verb} {noun}s with {tech} in this repo.",
	"Assistant: Understood. I switched {ident} to {tech} and updated {path}; `{cmd}` passes now.",
	"Note: the {tech} {noun} needs the {noun} {noun} from {pkg}; {ident} sets it in {path}.",
	"Tried `{cmd}` again: {err}. The {adj} {noun} in {path} was the cause, so I {verb} it in {ident}.",
	"Decision: keep the {noun} {noun} in {tech}, {verb} the {adj} {noun}s with {ident}, and document it in {path}.",
	"Test output: --- FAIL: Test{ident} ({noun}) {path}: {err}",
	"User: why is the {noun} so {adj}? It used to {verb} fine with {tech}.",
	"Assistant: {pkg} changed the {noun} {noun} in its last release; {ident} now {verbs} the {noun} {noun} itself.",
	"User: this is for #{issue}, the {adj} {noun} one.",
	"Committed {sha} on branch fix/{ident}-{issue}: {verb} {thing}.",
}

// Belief templates: distilled statements.
var beliefTemplates = []string{
	"User prefers {tech} for {noun} {noun}s",
	"User wants {cmd} to pass before committing",
	"The project uses {tech} for the {noun} {noun}, configured in {path}",
	"Never {verb} the {noun} directly; go through {ident}",
	"Always run {cmd} after changing {path}",
	"{ident} is the entry point for {noun} {noun}s",
	"The team avoids {tech} because of {adj} {noun}s",
	"{pkg} is the preferred library for {noun}s",
	"Tests for {noun}s are table-driven and live next to {path}",
	"The {noun} {noun} is {adj} in {tech}; use {ident} instead",
	"User switched from {tech} to {tech} for {noun}s",
	"{err} usually means the {noun} in {path} is {adj}",
}
