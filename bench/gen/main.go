// Command gen prepares and checks the inputs of bench/stop-hook.sh and
// summarises its timings.
//
//	gen prepare -work DIR -case typical|tool5mb|big100mb [-fixture F] [-prefix-mb N] [-tool-mb N]
//	gen check   -work DIR -case C
//	gen report  -work DIR -raw DIR -out FILE.json [-tool T] [-target 5]
//
// Layout under -work (shared by every case; ENGRAM_HOME=DIR/home and
// CLAUDE_CONFIG_DIR=DIR/claude when the hook runs):
//
//	claude/projects/-home-dev-proj/<session>.jsonl  one transcript per case
//	cases/<case>/snapshot.db   the store with everything before the new turn captured
//	cases/<case>/input.json    the Stop hook's stdin for the new turn
//	cases/<case>/info.json     sizes and counts (see caseInfo)
//	home/memory.db             the live store: --prepare copies a snapshot over it
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/engram-memory/engram/bench/turngen"
	"github.com/engram-memory/engram/internal/capture"
	"github.com/engram-memory/engram/internal/config"
	"github.com/engram-memory/engram/internal/store"
)

// Cases, in report order. The baseline has no case directory: it is the
// hello-world binary fed the typical case's input.
var cases = []string{"typical", "tool5mb", "big100mb"}

var sessions = map[string]string{
	"typical":  "0b5e0c1e-5a11-4c0d-9e2f-0000000000a1",
	"tool5mb":  "0b5e0c1e-5a11-4c0d-9e2f-0000000000a2",
	"big100mb": "0b5e0c1e-5a11-4c0d-9e2f-0000000000a3",
}

type caseInfo struct {
	Case            string `json:"case"`
	SessionID       string `json:"session_id"`
	Transcript      string `json:"transcript"`
	TranscriptBytes int64  `json:"transcript_bytes"`
	NewBytes        int64  `json:"new_bytes"` // bytes of the turn the timed run captures
	ToolOutputBytes int    `json:"tool_output_bytes,omitempty"`
	PriorCaptures   int    `json:"prior_captures"` // captures in the snapshot
	SnapshotBytes   int64  `json:"snapshot_bytes"`
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: gen prepare|check|report [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "prepare":
		err = prepare(os.Args[2:])
	case "check":
		err = check(os.Args[2:])
	case "report":
		err = report(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func paths(work, c string) (caseDir, transcript string) {
	return filepath.Join(work, "cases", c),
		filepath.Join(work, "claude", "projects", "-home-dev-proj", sessions[c]+".jsonl")
}

// hookConfig is the configuration the hook sees under work.
func hookConfig(work string) (config.Config, error) {
	os.Setenv("ENGRAM_HOME", filepath.Join(work, "home"))
	os.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(work, "claude"))
	return config.Load()
}

func prepare(args []string) error {
	fs := flag.NewFlagSet("prepare", flag.ExitOnError)
	work := fs.String("work", "", "work directory")
	c := fs.String("case", "", "typical, tool5mb or big100mb")
	fixture := fs.String("fixture", "internal/capture/testdata/session-1.jsonl", "recorded transcript whose last turn is the template")
	prefixMB := fs.Int("prefix-mb", 100, "big100mb: size of the already captured transcript, MiB")
	toolMB := fs.Int("tool-mb", 5, "tool5mb: size of the tool output, MiB")
	fs.Parse(args)
	if *work == "" || sessions[*c] == "" {
		return errors.New("prepare: -work and a valid -case are required")
	}
	*work, _ = filepath.Abs(*work)
	cfg, err := hookConfig(*work)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(*fixture)
	if err != nil {
		return err
	}
	tmpl, err := turngen.Parse(data)
	if err != nil {
		return err
	}
	caseDir, tpath := paths(*work, *c)
	for _, d := range []string{caseDir, filepath.Dir(tpath)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	info := caseInfo{Case: *c, SessionID: sessions[*c], Transcript: tpath}
	o := turngen.Options{SessionID: info.SessionID}

	// The transcript before the new turn: the recorded session's start, and
	// for big100mb generated turns up to the requested size.
	f, err := os.OpenFile(tpath, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	var prefix int64
	if *c == "big100mb" {
		prefix = int64(*prefixMB) << 20
	}
	next, _, err := tmpl.WriteTurns(f, prefix, 1, o)
	if err != nil {
		return err
	}

	// Capture it into a fresh store, as earlier Stops would have.
	buildDir := filepath.Join(caseDir, "build")
	os.RemoveAll(buildDir)
	dbPath := filepath.Join(buildDir, "memory.db")
	ctx := context.Background()
	db, err := store.Open(ctx, dbPath, store.Options{})
	if err != nil {
		return err
	}
	opt := capture.OptionsFrom(cfg)
	info.PriorCaptures, err = capture.Session(ctx, db, capture.Request{SessionID: info.SessionID, TranscriptPath: tpath,
		CWD: "/home/dev/proj", Source: capture.SourceBackfill}, opt)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("capture the transcript's start: %w", err)
	}
	// Closing the last connection checkpoints the WAL into the file and
	// removes it: the snapshot is the one file.
	if st, err := os.Stat(dbPath + "-wal"); err == nil && st.Size() > 0 {
		return fmt.Errorf("%s still has a WAL after close", dbPath)
	}
	snap := filepath.Join(caseDir, "snapshot.db")
	if err := os.Rename(dbPath, snap); err != nil {
		return err
	}
	os.RemoveAll(buildDir)
	if st, err := os.Stat(snap); err == nil {
		info.SnapshotBytes = st.Size()
	}

	// The new turn, and the Stop input that announces it.
	if *c == "tool5mb" {
		out := turngen.ToolOutput(*toolMB << 20)
		info.ToolOutputBytes = len(out)
		o.ToolOutput = turngen.Escape(out)
	}
	turn := tmpl.Turn(next, o)
	if _, err := f.Write(turn); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	info.NewBytes = int64(len(turn))
	st, err := os.Stat(tpath)
	if err != nil {
		return err
	}
	info.TranscriptBytes = st.Size()
	in, _ := json.Marshal(map[string]any{
		"session_id": info.SessionID, "transcript_path": tpath, "cwd": "/home/dev/proj",
		"prompt_id": "3202f1aa-c705-44f2-9e35-38eb32de878d", "permission_mode": "default",
		"effort": map[string]any{"level": "medium"}, "hook_event_name": "Stop", "stop_hook_active": false,
		"last_assistant_message": tmpl.Reply(next), "background_tasks": []any{}, "session_crons": []any{},
	})
	if err := os.WriteFile(filepath.Join(caseDir, "input.json"), in, 0o600); err != nil {
		return err
	}
	return writeJSON(filepath.Join(caseDir, "info.json"), info)
}

func readInfo(work, c string) (caseInfo, error) {
	var info caseInfo
	caseDir, _ := paths(work, c)
	b, err := os.ReadFile(filepath.Join(caseDir, "info.json"))
	if err != nil {
		return info, err
	}
	return info, json.Unmarshal(b, &info)
}

// check verifies that the live store holds the state after one hook run on
// the case: the whole transcript captured, exactly one new capture, nothing
// spooled. A hook that fails prints nothing and exits 0, so without this a
// benchmark could time a run that did no work.
func check(args []string) error {
	fs := flag.NewFlagSet("check", flag.ExitOnError)
	work := fs.String("work", "", "work directory")
	c := fs.String("case", "", "case")
	fs.Parse(args)
	*work, _ = filepath.Abs(*work)
	info, err := readInfo(*work, *c)
	if err != nil {
		return err
	}
	cfg, err := hookConfig(*work)
	if err != nil {
		return err
	}
	if spooled, _ := filepath.Glob(filepath.Join(cfg.SpoolDir(), "*.json")); len(spooled) > 0 {
		log, _ := os.ReadFile(filepath.Join(cfg.LogDir(), "hook-stop.log"))
		return fmt.Errorf("check %s: the hook spooled %d pass(es) instead of storing them; its log:\n%s", *c, len(spooled), log)
	}
	ctx := context.Background()
	db, err := store.Open(ctx, cfg.DBPath(), store.Options{MustExist: true})
	if err != nil {
		return err
	}
	defer db.Close()
	s, ok, err := db.GetSession(ctx, info.SessionID)
	if err != nil || !ok {
		return fmt.Errorf("check %s: session: ok=%v err=%v", *c, ok, err)
	}
	caps, err := db.Captures(ctx, info.SessionID)
	if err != nil {
		return err
	}
	if s.Offset != info.TranscriptBytes || len(caps) != info.PriorCaptures+1 || s.PendingReplyHash != "" {
		return fmt.Errorf("check %s: offset %d (want %d), captures %d (want %d), pending reply %q",
			*c, s.Offset, info.TranscriptBytes, len(caps), info.PriorCaptures+1, s.PendingReplyHash)
	}
	last := caps[len(caps)-1]
	if start := info.TranscriptBytes - info.NewBytes; last.Source != capture.SourceStop || last.ByteStart < start || last.Continuation {
		return fmt.Errorf("check %s: last capture: source %q, bytes %d-%d (new turn starts at %d), continuation %v",
			*c, last.Source, last.ByteStart, last.ByteEnd, start, last.Continuation)
	}
	fmt.Printf("check %s: ok (one capture of %d new bytes, offset %d)\n", *c, info.NewBytes, s.Offset)
	return nil
}

// A timing file is hyperfine's --export-json or, from the fallback loop,
// one duration in nanoseconds per line (CPU times in a .cpu.txt beside it).
// times are in seconds; cpu is the mean user+system time in seconds (0 when
// unknown).
func readTimes(path string) (times []float64, cpu float64, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	if strings.HasSuffix(path, ".json") {
		var h struct {
			Results []struct {
				Times  []float64 `json:"times"`
				User   float64   `json:"user"`
				System float64   `json:"system"`
			} `json:"results"`
		}
		if err := json.Unmarshal(b, &h); err != nil || len(h.Results) != 1 {
			return nil, 0, fmt.Errorf("%s: not a hyperfine export of one command: %v", path, err)
		}
		r := h.Results[0]
		return r.Times, r.User + r.System, nil
	}
	times, err = nsLines(path, b)
	if err != nil {
		return nil, 0, err
	}
	// The loop's CPU times, one per run, next to its wall times.
	cpuPath := strings.TrimSuffix(path, ".txt") + ".cpu.txt"
	if b, err := os.ReadFile(cpuPath); err == nil {
		cpus, err := nsLines(cpuPath, b)
		if err != nil {
			return nil, 0, err
		}
		for _, c := range cpus {
			cpu += c / float64(len(cpus))
		}
	}
	return times, cpu, nil
}

// nsLines parses one duration in nanoseconds per line, into seconds.
func nsLines(path string, b []byte) ([]float64, error) {
	var out []float64
	for _, f := range strings.Fields(string(b)) {
		ns, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, ns/1e9)
	}
	return out, nil
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// A pair is one case timed in one round next to its own baseline (and,
// when the runs went through a shell, its own shell reference), so that
// load that drifts over a run weighs on both sides of the ratio alike.
type pair struct {
	Round string `json:"round"`
	Case  string `json:"case"`
	Runs  int    `json:"runs"`
	// Raw medians of the case, its baseline and the shell reference.
	CaseRawMS     float64 `json:"case_raw_median_ms"`
	BaselineRawMS float64 `json:"baseline_raw_median_ms"`
	ShellMS       float64 `json:"shell_median_ms,omitempty"`
	// Less the shell reference (when it could be subtracted).
	CaseMS     float64 `json:"case_ms"`
	BaselineMS float64 `json:"baseline_ms"`
	Ratio      float64 `json:"ratio"`
	// Mean user+system time of a run, less the shell reference's:
	// unlike wall time it does not count waiting for a CPU.
	CaseCPUMS     float64 `json:"case_cpu_ms,omitempty"`
	BaselineCPUMS float64 `json:"baseline_cpu_ms,omitempty"`
	CPURatio      float64 `json:"cpu_ratio,omitempty"`
	Spooled       int     `json:"spooled_runs"`
}

type caseSummary struct {
	Case            string    `json:"case"`
	NewBytes        int64     `json:"new_bytes,omitempty"`
	TranscriptBytes int64     `json:"transcript_bytes,omitempty"`
	MedianMS        float64   `json:"median_ms"`         // median over rounds of the round's median
	Ratio           float64   `json:"ratio_to_baseline"` // median over rounds of the round's ratio
	RatioPerRound   []float64 `json:"ratio_per_round,omitempty"`
	CPUMS           float64   `json:"cpu_ms,omitempty"`                // median over rounds of the mean user+system time
	CPURatio        float64   `json:"cpu_ratio_to_baseline,omitempty"` // median over rounds
	Spooled         int       `json:"spooled_runs"`                    // runs (warm-up included) that spooled instead of storing
	Target          string    `json:"target"`
	Met             *bool     `json:"met,omitempty"`
}

// readRun reads RAW/round/name.json (hyperfine) or .txt (loop).
func readRun(raw, round, name string) (times []float64, cpu float64, err error) {
	for _, ext := range []string{".json", ".txt"} {
		times, cpu, err = readTimes(filepath.Join(raw, round, name+ext))
		if !errors.Is(err, os.ErrNotExist) {
			return times, cpu, err
		}
	}
	return nil, 0, err
}

func report(args []string) error {
	fs := flag.NewFlagSet("report", flag.ExitOnError)
	work := fs.String("work", "", "work directory (for case sizes)")
	raw := fs.String("raw", "", "directory of rounds: RAW/<round>/<case>[.baseline|.shell].json|.txt")
	out := fs.String("out", "", "summary JSON to write")
	tool := fs.String("tool", "", "how the runs were timed (for the record)")
	target := fs.Float64("target", 5, "typical turn: allowed multiple of the baseline")
	fs.Parse(args)
	rounds, err := os.ReadDir(*raw)
	if err != nil {
		return err
	}
	var pairs []pair
	for _, r := range rounds {
		if !r.IsDir() {
			continue
		}
		for _, c := range cases {
			ct, ccpu, err := readRun(*raw, r.Name(), c)
			if errors.Is(err, os.ErrNotExist) {
				continue
			} else if err != nil {
				return err
			}
			bt, bcpu, err := readRun(*raw, r.Name(), c+".baseline")
			if err != nil {
				return fmt.Errorf("round %s, %s: baseline: %w", r.Name(), c, err)
			}
			p := pair{Round: r.Name(), Case: c, Runs: len(ct), CaseRawMS: median(ct) * 1e3, BaselineRawMS: median(bt) * 1e3}
			var scpu float64
			if st, cpu, err := readRun(*raw, r.Name(), c+".shell"); err == nil {
				p.ShellMS, scpu = median(st)*1e3, cpu*1e3
			} else if !errors.Is(err, os.ErrNotExist) {
				return err
			}
			if p.BaselineRawMS-p.ShellMS <= 0 {
				// Too noisy to subtract the shell: keep the raw medians.
				fmt.Fprintf(os.Stderr, "%s %s: shell reference (%.2f ms) >= baseline (%.2f ms): not subtracted\n",
					r.Name(), c, p.ShellMS, p.BaselineRawMS)
				p.ShellMS, scpu = 0, 0
			}
			p.CaseMS, p.BaselineMS = p.CaseRawMS-p.ShellMS, p.BaselineRawMS-p.ShellMS
			p.Ratio = p.CaseMS / p.BaselineMS
			if bcpuMS := bcpu*1e3 - scpu; ccpu > 0 && bcpuMS > 0 {
				p.CaseCPUMS, p.BaselineCPUMS = ccpu*1e3-scpu, bcpuMS
				p.CPURatio = p.CaseCPUMS / p.BaselineCPUMS
			}
			if b, err := os.ReadFile(filepath.Join(*raw, r.Name(), c+".spooled")); err == nil {
				p.Spooled, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			}
			pairs = append(pairs, p)
		}
	}
	if len(pairs) == 0 {
		return fmt.Errorf("no timings under %s", *raw)
	}

	base := caseSummary{Case: "baseline", Target: "floor (hello-world Go, reads stdin)", Ratio: 1}
	var bms, bcpu []float64
	for _, p := range pairs {
		bms = append(bms, p.BaselineMS)
		if p.BaselineCPUMS > 0 {
			bcpu = append(bcpu, p.BaselineCPUMS)
		}
	}
	base.MedianMS, base.CPUMS = median(bms), median(bcpu)
	if base.CPUMS > 0 {
		base.CPURatio = 1
	}
	sums := []caseSummary{base}
	for _, c := range cases {
		s := caseSummary{Case: c}
		var ms, cpu, cpuRatios []float64
		for _, p := range pairs {
			if p.Case != c {
				continue
			}
			ms = append(ms, p.CaseMS)
			s.RatioPerRound = append(s.RatioPerRound, p.Ratio)
			if p.CPURatio > 0 {
				cpu = append(cpu, p.CaseCPUMS)
				cpuRatios = append(cpuRatios, p.CPURatio)
			}
			s.Spooled += p.Spooled
		}
		if len(ms) == 0 {
			continue
		}
		s.MedianMS, s.Ratio = median(ms), median(s.RatioPerRound)
		s.CPUMS, s.CPURatio = median(cpu), median(cpuRatios)
		if info, err := readInfo(*work, c); err == nil {
			s.NewBytes, s.TranscriptBytes = info.NewBytes, info.TranscriptBytes
		}
		switch c {
		case "typical":
			s.Target = fmt.Sprintf("<= %gx baseline", *target)
			met := s.Ratio <= *target
			s.Met = &met
		case "tool5mb":
			s.Target = "proportional to new bytes (no fixed target)"
		case "big100mb":
			s.Target = fmt.Sprintf("<= %gx baseline, ~= typical", *target)
			met := s.Ratio <= *target
			s.Met = &met
		}
		sums = append(sums, s)
	}

	byCase := map[string]caseSummary{}
	for _, s := range sums {
		byCase[s.Case] = s
	}
	tw := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "case\tnew bytes\ttranscript\tmedian ms\tx baseline\tper round\tcpu ms\tcpu x\tspooled\ttarget\t")
	for _, s := range sums {
		var per []string
		for _, r := range s.RatioPerRound {
			per = append(per, fmt.Sprintf("%.2f", r))
		}
		verdict := s.Target
		if s.Met != nil {
			verdict += map[bool]string{true: "  MET", false: "  MISSED"}[*s.Met]
		}
		cpu, cpuX := "-", "-"
		if s.CPUMS > 0 {
			cpu, cpuX = fmt.Sprintf("%.2f", s.CPUMS), fmt.Sprintf("%.2f", s.CPURatio)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.2f\t%.2f\t%s\t%s\t%s\t%d\t%s\t\n", s.Case, size(s.NewBytes), size(s.TranscriptBytes),
			s.MedianMS, s.Ratio, strings.Join(per, " "), cpu, cpuX, s.Spooled, verdict)
	}
	tw.Flush()
	fmt.Println("\nx baseline: each case's median over the median of its own baseline runs, timed alongside it in the same round;")
	fmt.Println("the figure is the median over rounds. cpu: mean user+system time per run (waiting for a CPU excluded).")
	var sh []float64
	for _, p := range pairs {
		if p.ShellMS > 0 {
			sh = append(sh, p.ShellMS)
		}
	}
	if len(sh) > 0 {
		fmt.Printf("Times are less the shell reference sh -c ': <INPUT' (median %.2f ms).\n", median(sh))
	}
	if t, b := byCase["typical"], byCase["big100mb"]; t.MedianMS > 0 && b.MedianMS > 0 {
		fmt.Printf("\nsmall turn on a %s transcript / typical turn: %.2fx wall, %.2fx x-baseline (cost should follow the new bytes, not the transcript)\n",
			size(b.TranscriptBytes), b.MedianMS/t.MedianMS, b.Ratio/t.Ratio)
	}
	if t, b, x := byCase["typical"], byCase["baseline"], byCase["tool5mb"]; x.MedianMS > t.MedianMS && x.NewBytes > t.NewBytes {
		rate := float64(x.NewBytes-t.NewBytes) / (1 << 20) / ((x.MedianMS - t.MedianMS) / 1e3)
		fmt.Printf("5 MB tool result: %.1f ms above the typical turn (%.0f MiB/s of extra new bytes), %.1f ms above the floor\n",
			x.MedianMS-t.MedianMS, rate, x.MedianMS-b.MedianMS)
	}
	if *out == "" {
		return nil
	}
	host, _ := os.Hostname()
	return writeJSON(*out, map[string]any{
		"when": time.Now().UTC().Format(time.RFC3339), "host": host, "tool": *tool,
		"cases": sums, "pairs": pairs,
	})
}

func size(n int64) string {
	switch {
	case n == 0:
		return "-"
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	default:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
