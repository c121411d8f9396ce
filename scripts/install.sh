#!/bin/sh
# Build engram with the local Go toolchain, install the three binaries into
# $PREFIX/bin (default ~/.local/bin), and run a first worker cycle.
# Needs no root and nothing but Go. Re-running it upgrades in place.
set -eu

need_major=1
need_minor=26
root=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
prefix=${PREFIX:-"$HOME/.local"}
bindir="$prefix/bin"

if ! command -v go >/dev/null 2>&1; then
	for d in /usr/local/go/bin "$HOME/go/bin" "$HOME/sdk/go/bin"; do
		[ -x "$d/go" ] && PATH="$d:$PATH" && break
	done
fi
if ! command -v go >/dev/null 2>&1; then
	echo "engram: Go is not installed (need Go $need_major.$need_minor or newer): see https://go.dev/doc/install" >&2
	exit 1
fi
gov=$(go env GOVERSION 2>/dev/null | sed 's/^go//')
major=$(echo "$gov" | cut -d. -f1)
minor=$(echo "$gov" | cut -d. -f2)
if [ "${major:-0}" -lt $need_major ] || { [ "$major" -eq $need_major ] && [ "${minor:-0}" -lt $need_minor ]; }; then
	echo "engram: Go $gov is too old (need $need_major.$need_minor or newer)" >&2
	exit 1
fi

mkdir -p "$bindir"
version=$(git -C "$root" describe --always --dirty 2>/dev/null || echo dev)
echo "engram: building $version with Go $gov into $bindir"
cd "$root"
for b in hook-stop hook-userprompt worker; do
	tmp="$bindir/.engram-$b.tmp.$$"
	go build -trimpath -ldflags "-s -w -X main.version=$version" -o "$tmp" "./cmd/$b"
	mv -f "$tmp" "$bindir/engram-$b" # rename: a running hook keeps its old binary
done

"$bindir/engram-worker" setup --bin-dir "$bindir"
echo "engram: running a first worker cycle (captures your existing transcripts)"
"$bindir/engram-worker" run --backfill
echo "engram: installed. Check it with: $bindir/engram-worker status"
