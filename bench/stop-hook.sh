#!/usr/bin/env bash
# Whole-process cost of engram-hook-stop (Claude Code's Stop hook) against a
# hello-world Go binary that reads stdin (bench/baseline), measured in the
# same run. Machines are shared and noisy: read the ratios, not the ms.
#
# Cases (each timed run captures exactly one new turn, nothing else):
#   baseline  bench/baseline fed the typical case's Stop input
#   typical   a typical turn (the recorded session's second turn, ~12.6 KB)
#             after the session's captured first turn
#   tool5mb   the same turn with a 5 MiB tool output (~10.5 MB of new bytes:
#             Claude Code writes a tool's output twice on its line)
#   big100mb  a typical turn at the end of a ~100 MiB transcript whose earlier
#             turns are all captured already
# Target: typical <= 5x baseline; big100mb ~= typical (cost follows the new
# bytes, not the transcript's size). The script reports, it does not fail on
# a missed target.
#
# Usage: bash bench/stop-hook.sh
# Environment: ROUNDS (5) rounds of all cases, each case timed right after
#   its own baseline; RUNS (20) timed runs per case and round,
#   BIG_RUNS (RUNS) for tool5mb and big100mb; WARMUP (3); PREFIX_MB (100);
#   TOOL_MB (5); TARGET (5); KEEP=1 keeps the work directory; MODE (auto,
#   hyperfine, hyperfine-sh, loop: see "How to time" below).
# Timing uses hyperfine >= 1.16 (sudo apt-get install -y hyperfine on Debian
# trixie / Ubuntu 24.04+, or cargo install hyperfine); otherwise a bash loop.
# Results: a table on stdout, and bench/out/stop-hook-<time>.json.
set -euo pipefail

ROUNDS=${ROUNDS:-5}
RUNS=${RUNS:-20}
BIG_RUNS=${BIG_RUNS:-$RUNS}
WARMUP=${WARMUP:-3}
PREFIX_MB=${PREFIX_MB:-100}
TOOL_MB=${TOOL_MB:-5}
TARGET=${TARGET:-5}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
work=$(mktemp -d "${TMPDIR:-/tmp}/engram-bench.XXXXXX")
if [[ ${KEEP:-0} == 1 ]]; then
	echo "work directory: $work (kept)"
else
	trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work/bin" "$work/raw" "$root/bench/out"
cases=(typical tool5mb big100mb)

echo "== build"
go build -o "$work/bin/engram-hook-stop" ./cmd/hook-stop
go build -o "$work/bin/baseline" ./bench/baseline
go build -o "$work/bin/gen" ./bench/gen
hook=$work/bin/engram-hook-stop
base=$work/bin/baseline
gen=$work/bin/gen

echo "== prepare inputs (store snapshots, transcripts, Stop inputs)"
for c in "${cases[@]}"; do
	"$gen" prepare -work "$work" -case "$c" -fixture internal/capture/testdata/session-1.jsonl \
		-prefix-mb "$PREFIX_MB" -tool-mb "$TOOL_MB"
done

# The hook's environment, the same for every case: one store, one Claude
# directory; each case has its own session and store snapshot.
export ENGRAM_HOME=$work/home CLAUDE_CONFIG_DIR=$work/claude
mkdir -p "$ENGRAM_HOME"

# reset/CASE.sh puts back the store as it was before the case's new turn:
# the hook captures once, then has nothing new, and every timed run must
# capture the turn. hyperfine runs it as --prepare (not timed).
mkdir -p "$work/reset"
for c in "${cases[@]}"; do
	printf 'cp %q %q && rm -f %q %q\n' "$work/cases/$c/snapshot.db" "$ENGRAM_HOME/memory.db" \
		"$ENGRAM_HOME/memory.db-wal" "$ENGRAM_HOME/memory.db-shm" >"$work/reset/$c.sh"
done
reset_cmd() { printf 'sh %q' "$work/reset/$1.sh"; }

echo "== check: one hook run per case stores exactly the new turn"
for c in "${cases[@]}"; do
	# A run that misses the hook's deadline on a loaded machine spools the
	# turn instead (and says why): try again before giving up.
	for attempt in 1 2 3; do
		sh "$work/reset/$c.sh"
		rm -rf "$ENGRAM_HOME/spool"
		"$hook" <"$work/cases/$c/input.json" >/dev/null
		if "$gen" check -work "$work" -case "$c"; then
			break
		elif ((attempt == 3)); then
			exit 1
		fi
	done
done

# How to time. hyperfine >= 1.16 feeds stdin itself (--input): every run
# is a plain fork+exec of the binary, like Claude Code's. Older hyperfine
# (Debian bookworm has 1.15) gives a command no stdin unless it runs in a
# shell, and its correction for the shell's start-up (a mean subtracted from
# each run, clamped at 0) falls apart on a loaded machine; there the default
# is a bash loop that alternates baseline and hook run by run, which keeps
# the ratio steady when the load drifts. MODE=hyperfine-sh times through
# sh -c 'exec BIN <INPUT' with hyperfine and subtracts the median of a
# reference sh -c ': <INPUT' instead.
MODE=${MODE:-auto}
have_hf=0
if command -v hyperfine >/dev/null; then
	have_hf=1
fi
if [[ $MODE == auto ]]; then
	if ((have_hf)) && hyperfine --help | grep -q -- '--input'; then
		MODE=hyperfine
	else
		MODE=loop
		if ((have_hf)); then
			echo "hyperfine $(hyperfine --version | awk '{print $2}') cannot feed stdin without a shell (needs >= 1.16):" \
				"timing with an alternating bash loop (MODE=hyperfine-sh to use it anyway)." >&2
		else
			echo "hyperfine not found: timing with a bash loop. To install it: sudo apt-get install -y hyperfine" \
				"(Debian/Ubuntu; >= 1.16 for --input, e.g. from Debian trixie or 'cargo install hyperfine')." >&2
		fi
	fi
fi
case $MODE in
hyperfine) tool="hyperfine $(hyperfine --version | awk '{print $2}') (-N --input, --prepare restores the store)" ;;
hyperfine-sh) tool="hyperfine $(hyperfine --version | awk '{print $2}') (-N, sh -c 'exec BIN <INPUT', median of sh -c ': <INPUT' subtracted)" ;;
loop) tool="bash loop, baseline and hook alternating run by run ($([[ -n ${EPOCHREALTIME:-} ]] && echo EPOCHREALTIME || echo 'date +%s%N'); cpu from 'times')" ;;
*)
	echo "MODE=$MODE: want auto, hyperfine, hyperfine-sh or loop" >&2
	exit 2
	;;
esac
echo "== timing with $tool"
echo "   $ROUNDS round(s), $RUNS runs per case ($BIG_RUNS for tool5mb and big100mb), $WARMUP warm-up runs"

# hf_case NAME BINARY INPUT PREPARE RUNS OUT_BASE: one hyperfine run.
# BINARY "-" is the shell reference (hyperfine-sh only).
hf_case() {
	local name=$1 bin=$2 input=$3 prep=$4 runs=$5 out=$6
	local hf=(hyperfine -N --style basic --warmup "$WARMUP" --runs "$runs" --prepare "$prep"
		--command-name "$name" --export-json "$out.json")
	if [[ $MODE == hyperfine ]]; then
		"${hf[@]}" --input "$input" "$bin" >/dev/null
	elif [[ $bin == - ]]; then
		"${hf[@]}" "sh -c ': <\"\$0\"' $(printf %q "$input")" >/dev/null
	else
		"${hf[@]}" "sh -c 'exec \"\$0\" <\"\$1\"' $(printf '%q %q' "$bin" "$input")" >/dev/null
	fi
}

# The loop's clocks, without forking: wall time in µs (EPOCHREALTIME, bash
# 5+, else date), and the CPU time of finished children in µs ('times').
if [[ -n ${EPOCHREALTIME:-} ]]; then
	now_us() { now=${EPOCHREALTIME/[.,]/}; }
else
	now_us() { now=$(($(date +%s%N) / 1000)); }
fi
times_file=$work/times
to_us() { # 1m2.345s -> µs in REPLY
	local m=${1%%m*} s=${1#*m}
	s=${s%s}
	local frac=${s#*.}000000
	REPLY=$(((m * 60 + 10#${s%.*}) * 1000000 + 10#${frac:0:6}))
}
cpu_us() {
	local self children
	times >"$times_file"
	{
		read -r self
		read -r children
	} <"$times_file"
	to_us "${children%% *}"
	cpu=$REPLY
	to_us "${children##* }"
	cpu=$((cpu + REPLY))
}

# loop_case CASE PREPARE RUNS OUT_BASE: baseline and hook alternating.
loop_case() {
	local c=$1 prep=$2 runs=$3 out=$4 i bin dst t0 c0
	local input=$work/cases/$c/input.json
	for ((i = 0; i < WARMUP + runs; i++)); do
		for bin in "$base" "$hook"; do
			dst=$out
			[[ $bin == "$base" ]] && dst=$out.baseline
			eval "$prep"
			cpu_us
			c0=$cpu
			now_us
			t0=$now
			"$bin" <"$input" >/dev/null
			now_us
			cpu_us
			if ((i >= WARMUP)); then
				echo $(((now - t0) * 1000)) >>"$dst.txt"
				echo $(((cpu - c0) * 1000)) >>"$dst.cpu.txt"
			fi
		done
	done
}

for ((r = 1; r <= ROUNDS; r++)); do
	rd=$work/raw/round$r
	mkdir -p "$rd"
	echo "-- round $r/$ROUNDS"
	for c in "${cases[@]}"; do
		n=$RUNS
		[[ $c != typical ]] && n=$BIG_RUNS
		in=$work/cases/$c/input.json
		prep=$(reset_cmd "$c")
		rm -rf "$ENGRAM_HOME/spool" "$ENGRAM_HOME/logs"
		if [[ $MODE == loop ]]; then
			loop_case "$c" "$prep" "$n" "$rd/$c"
		else
			# Each case right after its own baseline (and shell reference),
			# with the same --prepare, so that both see the same load.
			if [[ $MODE == hyperfine-sh ]]; then
				hf_case shell - "$in" "$prep" "$n" "$rd/$c.shell"
			fi
			hf_case baseline "$base" "$in" "$prep" "$n" "$rd/$c.baseline"
			hf_case "$c" "$hook" "$in" "$prep" "$n" "$rd/$c"
		fi
		# A hook that cannot store a pass in time spools it and still exits 0:
		# count the runs (warm-up included) that did, and check that the last
		# one stored the turn.
		spooled=0
		if [[ -d $ENGRAM_HOME/spool ]]; then
			spooled=$(find "$ENGRAM_HOME/spool" -maxdepth 1 -name '*.json' | wc -l)
		fi
		echo "$spooled" >"$rd/$c.spooled"
		if ((spooled > 0)); then
			echo "   $c: $spooled of $((n + WARMUP)) runs spooled instead of storing; hook log:" >&2
			tail -n 2 "$ENGRAM_HOME/logs/hook-stop.log" | cut -c1-300 | sed 's/^/     /' >&2
		else
			"$gen" check -work "$work" -case "$c" >/dev/null
		fi
	done
done

out=$root/bench/out/stop-hook-$(date -u +%Y%m%dT%H%M%SZ).json
echo
echo "== results ($(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?'))"
"$gen" report -work "$work" -raw "$work/raw" -out "$out" -tool "$tool" -target "$TARGET"
echo
echo "written: $out"
