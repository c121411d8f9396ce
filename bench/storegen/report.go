package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/engram-memory/engram/internal/embed/minilm"
	"github.com/engram-memory/engram/internal/recall"
	"github.com/engram-memory/engram/internal/recollect"
	"github.com/engram-memory/engram/internal/store"
	_ "modernc.org/sqlite" // hits counts FTS matches with plain SQL
)

// promptInfo is what `storegen hits` finds out about one prompt on one store.
type promptInfo struct {
	Kind    string   `json:"kind"`
	Prompt  string   `json:"prompt"`
	Trivial bool     `json:"trivial"`
	Terms   []string `json:"terms"`
	// Stop lists the prompt's terms that are stop terms in the store (the
	// recollection files' statistics); Match is the FTS query the hook
	// runs ("" when none runs).
	Stop  []string `json:"stop_terms"`
	Match string   `json:"fts_query"`
	// Hits counts the episodes matching a searched term; Ranked those
	// the hook ranks (recall.DefaultSettings.FTSWindow newest matches shared among
	// the terms); VisibleHits the matches of the prompt's project and
	// global scope.
	Hits        int `json:"fts_hits"`
	Ranked      int `json:"fts_ranked"`
	VisibleHits int `json:"fts_hits_visible"`
	// Items is the number of items in the recollection files loaded;
	// Candidates how many memories recall scored for the prompt.
	Items      int `json:"file_items"`
	Candidates int `json:"candidates"`
	// Recalled: candidates past the gate (episodes, beliefs), by recall
	// as the hook runs it (the search index; the sentence embedder when
	// the store has it), before the hook's formatting and budget.
	RecalledEpisodes int `json:"recalled_episodes"`
	RecalledBeliefs  int `json:"recalled_beliefs"`
	// Dense names the sentence embedder recall compared the prompt with
	// ("": by words only).
	Dense string `json:"dense,omitempty"`
}

// hits: storegen hits -home DIR [-out FILE] KIND=INPUT.json ...
func hits(args []string) error {
	fs := flag.NewFlagSet("hits", flag.ExitOnError)
	home := fs.String("home", "", "ENGRAM_HOME of the store")
	out := fs.String("out", "", "write the findings as JSON here too")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: storegen hits -home DIR [-out FILE] KIND=HOOK-INPUT.json ...")
		fs.PrintDefaults()
	}
	fs.Parse(args)
	if *home == "" || fs.NArg() == 0 {
		fs.Usage()
		return errors.New("hits: -home and at least one KIND=FILE are required")
	}
	ctx := context.Background()
	dbPath := filepath.Join(*home, "memory.db")
	raw, err := sql.Open("sqlite", "file:"+dbPath+"?mode=ro")
	if err != nil {
		return err
	}
	defer raw.Close()
	db, err := store.Open(ctx, dbPath, store.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer db.Close()
	var infos []promptInfo
	for _, a := range fs.Args() {
		kind, file, ok := strings.Cut(a, "=")
		if !ok {
			return fmt.Errorf("hits: %q: want KIND=FILE", a)
		}
		var in struct {
			SessionID string `json:"session_id"`
			CWD       string `json:"cwd"`
			Prompt    string `json:"prompt"`
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &in); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		p := promptInfo{Kind: kind, Prompt: in.Prompt, Trivial: recall.Trivial(in.Prompt), Terms: recall.Terms(in.Prompt), Stop: []string{}}
		if p.Terms == nil {
			p.Terms = []string{}
		}
		// The hook's cwd has no .git above it here: it is its own project root.
		for _, path := range []string{recall.GlobalPath(*home), recall.ProjectPath(*home, in.CWD)} {
			if v, err := recall.LoadView(path); err == nil {
				p.Items += v.Len()
			}
		}
		var searched []string
		if !p.Trivial {
			// As the hook recalls: the search index, and the sentence
			// embedder when the store has it installed.
			ix := recall.OpenIndex(*home)
			r := recall.New(*home, ix)
			if !recall.IndexReady(*home) {
				r = recall.New(*home, recollect.StoreSearcher{DB: db})
			}
			r.SkipUnknown = true
			if m := minilm.OpenInstalled(filepath.Join(*home, "models", "minilm"), true); m != nil {
				r.Dense = m
				defer m.Close()
			}
			res := r.Recall(ctx, recall.Query{Text: in.Prompt, ProjectPath: in.CWD, Now: time.Now()})
			ix.Close()
			p.Dense = res.Dense
			p.RecalledEpisodes, p.RecalledBeliefs = len(res.Episodes), len(res.Beliefs)
			p.Match, p.Candidates, searched = res.Match, res.Candidates, res.Searched
			p.Stop = append(p.Stop, res.Stop...)
		}
		if p.Match != "" {
			if err := raw.QueryRowContext(ctx, "SELECT count(*) FROM episodes_fts WHERE episodes_fts MATCH ?", p.Match).Scan(&p.Hits); err != nil {
				return err
			}
			m, err := db.SearchTerms(ctx, searched, nil, recall.TermWindow(recall.DefaultSettings.FTSWindow, len(searched)), 1<<30)
			if err != nil {
				return err
			}
			p.Ranked = len(m)
			if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM episodes_fts JOIN episodes e ON e.seq = episodes_fts.rowid
				WHERE episodes_fts MATCH ? AND (e.scope = 'global' OR e.project_path = ?)`, p.Match, in.CWD).Scan(&p.VisibleHits); err != nil {
				return err
			}
		}
		infos = append(infos, p)
		by := "words"
		if p.Dense != "" {
			by = "meaning"
		}
		fmt.Printf("   %-10s terms %-3d stop %-3d fts hits %6d (ranked %5d, visible %6d), candidates %5d, recalled %d+%d (%s)  query: %s\n",
			kind, len(p.Terms), len(p.Stop), p.Hits, p.Ranked, p.VisibleHits, p.Candidates, p.RecalledEpisodes, p.RecalledBeliefs, by, p.Match)
	}
	if *out != "" {
		b, _ := json.MarshalIndent(infos, "", "  ")
		return os.WriteFile(*out, append(b, '\n'), 0o644)
	}
	return nil
}

// rebuild: storegen rebuild -home DIR. The recollection files, rewritten as
// the worker's cycle writes them, without the rest of a cycle (ingest,
// consolidation), which a reused benchmark store does not need.
func rebuild(args []string) error {
	fs := flag.NewFlagSet("rebuild", flag.ExitOnError)
	home := fs.String("home", "", "ENGRAM_HOME of the store")
	fs.Parse(args)
	if *home == "" {
		return errors.New("rebuild: -home is required")
	}
	ctx := context.Background()
	// Opening migrates a store of an older schema, as the worker would.
	db, err := store.Open(ctx, filepath.Join(*home, "memory.db"), store.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	start := time.Now()
	st, err := recollect.Build(ctx, db, *home, recollect.BuildOptions{}, time.Now())
	if err != nil {
		return err
	}
	fmt.Printf("   rebuilt the recollection files of %s: %d files, %d episodes, %d beliefs; search index: %d segments (%d episodes written, rebuilt %v); in %v\n",
		*home, st.Files, st.Episodes, st.Beliefs, st.Index.Segments, st.Index.Episodes, st.Index.Rebuilt, time.Since(start).Round(time.Millisecond))
	return nil
}

// A timing file is hyperfine's --export-json or, from the bash loop, one
// duration in nanoseconds per line with the runs' CPU times in a .cpu.txt
// beside it (the formats of bench/stop-hook.sh). times are in seconds; cpu
// is the user+system time of a run in seconds: hyperfine's mean, the loop's
// median (0 when unknown).
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
		return h.Results[0].Times, h.Results[0].User + h.Results[0].System, nil
	}
	if times, err = nsLines(path, b); err != nil {
		return nil, 0, err
	}
	cpuPath := strings.TrimSuffix(path, ".txt") + ".cpu.txt"
	if b, err := os.ReadFile(cpuPath); err == nil {
		cpus, err := nsLines(cpuPath, b)
		if err != nil {
			return nil, 0, err
		}
		cpu = median(cpus)
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

func readRun(dir, name string) ([]float64, float64, error) {
	var err error
	for _, ext := range []string{".json", ".txt"} {
		var t []float64
		var cpu float64
		t, cpu, err = readTimes(filepath.Join(dir, name+ext))
		if !errors.Is(err, os.ErrNotExist) {
			return t, cpu, err
		}
	}
	return nil, 0, err
}

// percentile is the nearest-rank p-th quantile of xs (0 when empty).
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
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

// row is one store size and prompt kind, over the rounds.
type row struct {
	Size string `json:"size"`
	Kind string `json:"prompt"`
	Runs int    `json:"runs"`
	// Medians over rounds of each round's median (the shell reference
	// subtracted when the runs went through sh), and of each round's
	// ratio hook/baseline (the baseline timed right before the hook).
	MedianMS      float64   `json:"median_ms"`
	BaselineMS    float64   `json:"baseline_median_ms"`
	Ratio         float64   `json:"ratio_to_baseline"`
	RatioPerRound []float64 `json:"ratio_per_round"`
	// P99MS is the 99th percentile of every timed run of the case over
	// all rounds (each less its round's shell reference), and P99Ratio
	// that over the baseline's median: the slow tail a user feels now and
	// then, against the same floor.
	P99MS    float64 `json:"p99_ms"`
	P99Ratio float64 `json:"p99_ratio_to_baseline"`
	// User+system time of a run (hyperfine: mean, the shell's less; bash
	// loop: median): it does not count waiting for a CPU, which wall time
	// does on a shared machine.
	CPUMS         float64 `json:"cpu_ms,omitempty"`
	BaselineCPUMS float64 `json:"baseline_cpu_ms,omitempty"`
	// Growth against the first (smallest) store: of the median ms, of the
	// ratio (less sensitive to load that changed between the two), and of
	// the CPU time.
	Growth      float64 `json:"growth_vs_first"`
	RatioGrowth float64 `json:"ratio_growth_vs_first"`
	CPUGrowth   float64 `json:"cpu_growth_vs_first,omitempty"`
	// Output: whether the hook printed an answer with the long deadline,
	// InjectedBytes the length of its additionalContext; DefaultOK of
	// DefaultRuns runs with the default deadline printed one.
	Output        bool        `json:"output"`
	InjectedBytes int         `json:"injected_bytes"`
	DefaultOK     int         `json:"default_deadline_outputs"`
	DefaultRuns   int         `json:"default_deadline_runs"`
	Info          *promptInfo `json:"prompt_info,omitempty"`
}

type sizeInfo struct {
	Size        string  `json:"size"`
	Episodes    int     `json:"episodes"`
	Beliefs     int     `json:"beliefs"`
	ImportSec   float64 `json:"import_seconds"`
	GenerateSec float64 `json:"generate_seconds"`
	JSONLBytes  int64   `json:"jsonl_bytes"`
	DBBytes     int64   `json:"db_bytes"`
	RecBytes    int64   `json:"recollection_bytes"`
	// REEMBED=1: the worker cycles that re-embedded the store, and their time.
	ReembedSec    float64 `json:"reembed_seconds"`
	ReembedCycles int     `json:"reembed_cycles"`
}

// report: storegen report -raw DIR -out FILE -sizes 1k,10k,100k -kinds rare,common,...
//
// Layout of -raw: round<N>/<size>.<kind>[.baseline|.shell].json|.txt,
// <size>.<kind>.output ("OUT DEFAULT_OK DEFAULT_RUNS [INJECTED_BYTES]"), <size>.hits.json
// (storegen hits), <size>.size.json (sizeInfo).
func report(args []string) error {
	fs := flag.NewFlagSet("report", flag.ExitOnError)
	raw := fs.String("raw", "", "directory of the raw timings")
	out := fs.String("out", "", "summary JSON to write")
	sizesF := fs.String("sizes", "1k,10k,100k", "store sizes, the first is the growth reference")
	kindsF := fs.String("kinds", "rare,common,unrelated,trivial", "prompt kinds")
	tool := fs.String("tool", "", "how the runs were timed (for the record)")
	floor := fs.Float64("floor-target", 3, "largest store: allowed multiple of the baseline")
	growth := fs.Float64("growth-target", 1.3, "allowed growth from the first size to the last")
	p99 := fs.Float64("p99-target", 0, "largest store: allowed multiple of the baseline's median for the hook's 99th percentile (0: reported, no target)")
	fs.Parse(args)
	sizes, kinds := strings.Split(*sizesF, ","), strings.Split(*kindsF, ",")
	rounds, _ := filepath.Glob(filepath.Join(*raw, "round*"))
	if len(rounds) == 0 {
		return fmt.Errorf("no rounds under %s", *raw)
	}
	var rows []row
	var notes []string
	var baseAll []float64
	first := map[string]row{}
	for _, size := range sizes {
		var infos []promptInfo
		if b, err := os.ReadFile(filepath.Join(*raw, size+".hits.json")); err == nil {
			json.Unmarshal(b, &infos)
		}
		for _, kind := range kinds {
			rw := row{Size: size, Kind: kind}
			var ms, base, cpu, bcpu, all []float64
			for _, rd := range rounds {
				name := size + "." + kind
				ct, ccpu, err := readRun(rd, name)
				if errors.Is(err, os.ErrNotExist) {
					continue
				} else if err != nil {
					return err
				}
				bt, btcpu, err := readRun(rd, name+".baseline")
				if err != nil {
					return fmt.Errorf("%s %s: baseline: %w", rd, name, err)
				}
				c, bl := median(ct)*1e3, median(bt)*1e3
				var shell, scpu float64
				if st, sc, err := readRun(rd, name+".shell"); err == nil {
					shell, scpu = median(st)*1e3, sc*1e3
				}
				if bl-shell <= 0 {
					notes = append(notes, fmt.Sprintf("%s %s: shell reference %.2f ms >= baseline %.2f ms: not subtracted", filepath.Base(rd), name, shell, bl))
					shell, scpu = 0, 0
				}
				rw.Runs += len(ct)
				for _, x := range ct {
					all = append(all, x*1e3-shell)
				}
				ms = append(ms, c-shell)
				base = append(base, bl-shell)
				rw.RatioPerRound = append(rw.RatioPerRound, (c-shell)/(bl-shell))
				if ccpu > 0 {
					cpu = append(cpu, ccpu*1e3-scpu)
					bcpu = append(bcpu, btcpu*1e3-scpu)
				}
			}
			if len(ms) == 0 {
				continue
			}
			baseAll = append(baseAll, base...)
			rw.MedianMS, rw.BaselineMS, rw.Ratio = median(ms), median(base), median(rw.RatioPerRound)
			rw.CPUMS, rw.BaselineCPUMS = median(cpu), median(bcpu)
			rw.P99MS = percentile(all, 0.99)
			if rw.BaselineMS > 0 {
				rw.P99Ratio = rw.P99MS / rw.BaselineMS
			}
			if b, err := os.ReadFile(filepath.Join(*raw, name(size, kind)+".output")); err == nil {
				f := strings.Fields(string(b))
				if len(f) >= 3 {
					rw.Output = f[0] == "1"
					rw.DefaultOK, _ = strconv.Atoi(f[1])
					rw.DefaultRuns, _ = strconv.Atoi(f[2])
				}
				if len(f) >= 4 {
					rw.InjectedBytes, _ = strconv.Atoi(f[3])
				}
			}
			for i := range infos {
				if infos[i].Kind == kind {
					rw.Info = &infos[i]
				}
			}
			if f, ok := first[kind]; ok {
				rw.Growth, rw.RatioGrowth = rw.MedianMS/f.MedianMS, rw.Ratio/f.Ratio
				if f.CPUMS > 0 {
					rw.CPUGrowth = rw.CPUMS / f.CPUMS
				}
			} else {
				first[kind] = rw
				rw.Growth, rw.RatioGrowth = 1, 1
				if rw.CPUMS > 0 {
					rw.CPUGrowth = 1
				}
			}
			rows = append(rows, rw)
		}
	}
	if len(rows) == 0 {
		return fmt.Errorf("no timings under %s", *raw)
	}
	var sinfo []sizeInfo
	for _, size := range sizes {
		var si sizeInfo
		if b, err := os.ReadFile(filepath.Join(*raw, size+".size.json")); err == nil && json.Unmarshal(b, &si) == nil {
			sinfo = append(sinfo, si)
		}
	}

	fmt.Printf("baseline (hello-world Go reading stdin): median %.2f ms over %d rounds × prompts\n\n", median(baseAll), len(baseAll))
	tw := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "size\tprompt\tfts hits (ranked)\tmedian ms\tbaseline ms\tx baseline\tper round\tp99 ms\tp99 x baseline\tcpu ms\tbase cpu ms\tgrowth vs "+sizes[0]+
		"\t(ratio growth)\t(cpu growth)\toutput\tdefault deadline\t")
	for _, r := range rows {
		h := "-"
		if r.Info != nil && r.Info.Match != "" {
			h = fmt.Sprintf("%d (%d)", r.Info.Hits, r.Info.Ranked)
		}
		var pr []string
		for _, x := range r.RatioPerRound {
			pr = append(pr, fmt.Sprintf("%.2f", x))
		}
		outS := "no"
		if r.Output {
			outS = "yes"
			if r.InjectedBytes > 0 {
				outS = fmt.Sprintf("%d B", r.InjectedBytes)
			}
		}
		def := "-"
		if r.DefaultRuns > 0 {
			def = fmt.Sprintf("%d/%d printed", r.DefaultOK, r.DefaultRuns)
		}
		cpu, bcpu, cg := "-", "-", "-"
		if r.CPUMS > 0 {
			cpu, bcpu, cg = fmt.Sprintf("%.1f", r.CPUMS), fmt.Sprintf("%.1f", r.BaselineCPUMS), fmt.Sprintf("%.2f", r.CPUGrowth)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.2f\t%.2f\t%.2f\t%s\t%.2f\t%.2f\t%s\t%s\t%.2f\t(%.2f)\t(%s)\t%s\t%s\t\n", r.Size, r.Kind, h, r.MedianMS, r.BaselineMS,
			r.Ratio, strings.Join(pr, " "), r.P99MS, r.P99Ratio, cpu, bcpu, r.Growth, r.RatioGrowth, cg, outS, def)
	}
	tw.Flush()

	last := sizes[len(sizes)-1]
	p99Note := "p99 reported (no target)"
	if *p99 > 0 {
		p99Note = fmt.Sprintf("p99 <= %gx the floor at %s", *p99, last)
	}
	fmt.Printf("\ntargets (issue): median <= %gx the floor at %s; %s; <= %gx growth %s -> %s\n", *floor, last, p99Note, *growth, sizes[0], last)
	type verdict struct {
		Kind        string  `json:"prompt"`
		Ratio       float64 `json:"ratio_at_last"`
		Growth      float64 `json:"growth"`
		RatioGrowth float64 `json:"ratio_growth"`
		CPUGrowth   float64 `json:"cpu_growth,omitempty"`
		FloorMet    bool    `json:"floor_met"`
		P99Ratio    float64 `json:"p99_ratio_at_last"`
		P99Met      *bool   `json:"p99_met,omitempty"`
		GrowthMet   bool    `json:"growth_met"`
	}
	var verdicts []verdict
	tw = tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "prompt\tx baseline at %s\t<= %g?\tp99 x baseline\t<= %s?\tgrowth %s->%s (ratio growth) (cpu growth)\t<= %g?\t\n", last, *floor, p99Target(*p99), sizes[0], last, *growth)
	for _, r := range rows {
		if r.Size != last {
			continue
		}
		v := verdict{Kind: r.Kind, Ratio: r.Ratio, Growth: r.Growth, RatioGrowth: r.RatioGrowth, CPUGrowth: r.CPUGrowth,
			FloorMet: r.Ratio <= *floor, GrowthMet: r.Growth <= *growth, P99Ratio: r.P99Ratio}
		p99Met := "-"
		if *p99 > 0 {
			met := r.P99Ratio <= *p99
			v.P99Met, p99Met = &met, yesNo(met)
		}
		verdicts = append(verdicts, v)
		fmt.Fprintf(tw, "%s\t%.2f\t%s\t%.2f\t%s\t%.2f (%.2f) (%.2f)\t%s\t\n", r.Kind, v.Ratio, yesNo(v.FloorMet), v.P99Ratio, p99Met,
			v.Growth, v.RatioGrowth, v.CPUGrowth, yesNo(v.GrowthMet))
	}
	tw.Flush()
	if len(sinfo) > 0 {
		fmt.Println("\nstores (engram-worker import: validate, insert in one transaction, rebuild the recollection files)")
		tw = tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "size\tepisodes\tbeliefs\tjsonl MB\tgenerate s\timport s\tmemory.db MB\trecall/*.rec KB\tre-embedded s (cycles)\t")
		for _, s := range sinfo {
			re := "-"
			if s.ReembedCycles > 0 {
				re = fmt.Sprintf("%.0f (%d)", s.ReembedSec, s.ReembedCycles)
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.0f\t%s\t\n", s.Size, s.Episodes, s.Beliefs, float64(s.JSONLBytes)/1e6,
				s.GenerateSec, s.ImportSec, float64(s.DBBytes)/1e6, float64(s.RecBytes)/1e3, re)
		}
		tw.Flush()
	}
	for _, n := range notes {
		fmt.Fprintln(os.Stderr, n)
	}
	if *out == "" {
		return nil
	}
	host, _ := os.Hostname()
	b, _ := json.MarshalIndent(map[string]any{
		"time": time.Now().UTC().Format(time.RFC3339), "host": host, "tool": *tool, "baseline_median_ms": median(baseAll),
		"floor_target": *floor, "p99_target": *p99, "growth_target": *growth, "rows": rows, "verdicts": verdicts, "stores": sinfo, "notes": notes,
	}, "", "  ")
	return os.WriteFile(*out, append(b, '\n'), 0o644)
}

func name(size, kind string) string { return size + "." + kind }

// p99Target renders the p99 target of the verdict table's header.
func p99Target(t float64) string {
	if t <= 0 {
		return "(none)"
	}
	return strconv.FormatFloat(t, 'g', -1, 64)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "NO"
}
