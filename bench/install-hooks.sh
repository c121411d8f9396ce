#!/usr/bin/env bash
# Whole-process cost of the two hooks as each way of installing engram runs
# them, against the hello-world floor (bench/baseline), all in one run,
# run by run alternating. Machines are shared and noisy: read the ratios.
#
#   source   built as scripts/install.sh builds them
#   npm      the binaries of the release's platform package (npm copies
#            them unchanged; setup points the hooks at them, see
#            e2e/release_test.go)
#   plugin   ${CLAUDE_PLUGIN_ROOT}/bin/<hook> of the release's plugin after
#            its first run (a link to the native binary)
#   plugin-sh the same path before the first run, when a shell script picks
#            the binary (the script is put back before each run, untimed, so
#            that every run pays the shell)
#
# Target (issue 22): npm and plugin within 1.2x of source. The hooks see an
# empty ENGRAM_HOME (the prompt hook finds nothing to recall, the Stop hook
# finds no transcript and registers the session): start-up and the first
# steps, which is where the ways of installing can differ.
#
# Usage: bash bench/install-hooks.sh
# Environment: RUNS (200) timed runs per variant; WARMUP (10); REL=DIR a
#   release built by scripts/release.sh for this platform (else one is built).
set -euo pipefail
RUNS=${RUNS:-200}
WARMUP=${WARMUP:-10}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
goos=$(go env GOOS)
goarch=$(go env GOARCH)
npmcpu=$goarch
[[ $goarch == amd64 ]] && npmcpu=x64

mkdir -p "$work/source"
for b in hook-stop hook-userprompt; do
	CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=bench" -o "$work/source/engram-$b" "./cmd/$b"
done
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$work/baseline" ./bench/baseline
rel=${REL:-}
if [[ -z $rel ]]; then
	rel=$work/rel
	PLATFORMS=$goos/$goarch scripts/release.sh 0.0.0-bench "$rel" >/dev/null
fi
npmbin=$rel/npm/engram-$goos-$npmcpu/bin
cp -R "$rel/claude-plugin" "$work/plugin"
cp -R "$rel/claude-plugin" "$work/plugin-sh"

export ENGRAM_HOME=$work/home CLAUDE_CONFIG_DIR=$work/claude
mkdir -p "$CLAUDE_CONFIG_DIR" "$work/proj"
input_userprompt=$work/userprompt.json
input_stop=$work/stop.json
printf '{"session_id":"1416d527-3104-4a11-a10c-d8902eaf26c2","transcript_path":"%s/t.jsonl","cwd":"%s/proj","hook_event_name":"UserPromptSubmit","prompt":"How do we deploy the billing service to production?"}' "$work" "$work" >"$input_userprompt"
printf '{"session_id":"391c10cf-5281-4939-ba64-ee611dca86d4","transcript_path":"%s/t.jsonl","cwd":"%s/proj","hook_event_name":"Stop","stop_hook_active":false}' "$work" "$work" >"$input_stop"
# The plugin's first run links the native binary in place of the script.
for h in hook-stop hook-userprompt; do
	"$work/plugin/engram/bin/engram-$h" <"$input_stop" >/dev/null
	[[ -L $work/plugin/engram/bin/engram-$h ]] || { echo "the plugin's bin/engram-$h did not become a link" >&2; exit 1; }
done

now_us() { now=${EPOCHREALTIME/[.,]/}; }
variants=(floor source npm plugin plugin-sh)
path_of() { # variant hook -> REPLY
	case $1 in
	floor) REPLY=$work/baseline ;;
	source) REPLY=$work/source/engram-$2 ;;
	npm) REPLY=$npmbin/engram-$2 ;;
	plugin) REPLY=$work/plugin/engram/bin/engram-$2 ;;
	plugin-sh) REPLY=$work/plugin-sh/engram/bin/engram-$2 ;;
	esac
}

echo "engram hooks by way of install: median whole-process wall time over $RUNS runs each ($goos/$goarch)"
printf '%-16s %-10s %10s %10s %10s\n' hook variant median_us x_floor x_source
for h in hook-userprompt hook-stop; do
	input=$input_userprompt
	[[ $h == hook-stop ]] && input=$input_stop
	for v in "${variants[@]}"; do : >"$work/$h.$v.txt"; done
	for ((i = 0; i < WARMUP + RUNS; i++)); do
		# Each round starts with another variant: none always runs first.
		for ((k = 0; k < ${#variants[@]}; k++)); do
			v=${variants[(i + k) % ${#variants[@]}]}
			path_of "$v" "$h"
			bin=$REPLY
			if [[ $v == plugin-sh ]]; then
				cp "$root/packaging/claude-plugin/dispatch.sh" "$bin.tmp" && chmod 755 "$bin.tmp" && mv -f "$bin.tmp" "$bin"
			fi
			now_us
			t0=$now
			"$bin" <"$input" >/dev/null 2>&1
			now_us
			((i >= WARMUP)) && echo $((now - t0)) >>"$work/$h.$v.txt"
		done
	done
	declare -A med=()
	for v in "${variants[@]}"; do
		med[$v]=$(sort -n "$work/$h.$v.txt" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
	done
	for v in "${variants[@]}"; do
		printf '%-16s %-10s %10d %10.2f %10.2f\n' "engram-$h" "$v" "${med[$v]}" \
			"$(echo "${med[$v]} / ${med[floor]}" | bc -l)" "$(echo "${med[$v]} / ${med[source]}" | bc -l)"
	done
	unset med
done
