#!/bin/sh
# Check a release built by scripts/release.sh: the checksums match, every
# tarball holds the three binaries, each built with CGO_ENABLED=0 (an ELF
# one statically linked) for its platform and stamped with the version; the
# ones this machine can run report it.
#
#   scripts/release-check.sh VERSION OUTDIR   check OUTDIR
#   scripts/release-check.sh VERSION          build into a temporary
#                                             directory, then check it
#
# PLATFORMS is passed on to release.sh and says which tarballs to expect.
set -eu
say() { printf 'release-check: %s\n' "$*"; }
fail=0
bad() {
	printf 'release-check: FAIL: %s\n' "$*" >&2
	fail=1
}
[ $# -ge 1 ] && [ $# -le 2 ] || {
	echo "usage: $0 VERSION [OUTDIR]" >&2
	exit 2
}
root=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
semver=${1#v}
platforms=${PLATFORMS:-"linux/amd64 linux/arm64 darwin/amd64 darwin/arm64"}
if [ $# -eq 2 ]; then
	out=$2
else
	out=$(mktemp -d)
	trap 'rm -rf "$out"' EXIT
	start=$(date +%s)
	"$root/scripts/release.sh" "$1" "$out"
	say "release.sh took $(($(date +%s) - start)) s"
fi
cd "$out"
if command -v sha256sum >/dev/null 2>&1; then
	sha256sum -c --quiet checksums.txt || bad "checksums.txt does not match the tarballs"
else
	shasum -a 256 -c checksums.txt >/dev/null || bad "checksums.txt does not match the tarballs"
fi
x=$(mktemp -d)
n=0
for p in $platforms; do
	os=${p%/*}
	arch=${p#*/}
	name=engram_${semver}_${os}_${arch}
	grep -q " $name.tar.gz\$" checksums.txt || bad "checksums.txt has no line for $name.tar.gz"
	tar -xzf "$name.tar.gz" -C "$x" || {
		bad "cannot unpack $name.tar.gz"
		continue
	}
	for b in engram-worker engram-hook-stop engram-hook-userprompt; do
		f=$x/$name/$b
		[ -x "$f" ] || {
			bad "$name.tar.gz has no executable $b"
			continue
		}
		n=$((n + 1))
		info=$(go version -m "$f") || {
			bad "go version -m $name/$b failed"
			continue
		}
		printf '%s\n' "$info" | grep -q "^[[:space:]]*build[[:space:]]*CGO_ENABLED=0\$" || bad "$name/$b: not built with CGO_ENABLED=0"
		printf '%s\n' "$info" | grep -q "^[[:space:]]*build[[:space:]]*GOOS=$os\$" || bad "$name/$b: not built for GOOS=$os"
		printf '%s\n' "$info" | grep -q "^[[:space:]]*build[[:space:]]*GOARCH=$arch\$" || bad "$name/$b: not built for GOARCH=$arch"
		printf '%s\n' "$info" | grep -q "^[[:space:]]*build[[:space:]]*-trimpath=true\$" || bad "$name/$b: not built with -trimpath"
		grep -aq "v$semver" "$f" || bad "$name/$b: the version v$semver is not stamped into it (-trimpath keeps -ldflags out of go version -m, so the binary is searched)"
		if printf '%s\n' "$info" | grep -q "GOEXPERIMENT="; then
			bad "$name/$b: built with an experiment ($(printf '%s\n' "$info" | grep -o 'GOEXPERIMENT=[^[:space:]]*'))"
		fi
		if [ "$os" = linux ] && command -v file >/dev/null 2>&1; then
			file -L "$f" | grep -q "statically linked" || bad "$name/$b: not statically linked: $(file -L "$f")"
		fi
		if [ "$os" = "$(go env GOHOSTOS)" ] && [ "$arch" = "$(go env GOHOSTARCH)" ]; then
			case $b in
			engram-worker) v=$("$f" version) ;;
			*) v=$("$f" --version) ;;
			esac
			case $v in
			*"v$semver (commit "*) say "$v" ;;
			*) bad "$name/$b reports \"$v\", want v$semver with its commit" ;;
			esac
		fi
	done
done
rm -rf "$x"
want=$(($(echo $platforms | wc -w) * 3))
[ "$n" -eq "$want" ] || bad "found $n binaries, want $want"
[ "$fail" -eq 0 ] || exit 1
say "ok: $n binaries for $platforms, checksums match"
