package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/engram-memory/engram/bench/internal/benchkit"
)

// UnrelatedStats are the figures of the questions sent to stores that hold
// nothing related (the conversations of a `bench/locomo -keep DIR` run).
type UnrelatedStats struct {
	Dir       string   `json:"-"`
	Homes     []string `json:"homes"`
	Questions int      `json:"questions"`
	// NoInjection is the share of questions that got no context at all.
	Empty       int     `json:"no_injection"`
	NoInjection float64 `json:"no_injection_share"`
	Tokens      Dist    `json:"injected_tokens"`
	Bites       int     `json:"bites"`
	HookMs      Dist    `json:"hook_wall_ms"`
	Problems    int     `json:"hook_contract_violations"`
	// Asked is each question as sent: which store, which topic and item,
	// and what it got (for figures by split).
	Asked []UnrelatedAsk `json:"asked"`
}

// UnrelatedAsk is one question sent to an unrelated store.
type UnrelatedAsk struct {
	Home   string  `json:"home"`
	Topic  string  `json:"topic"`
	Item   int     `json:"item"`
	Tokens float64 `json:"injected_tokens"`
}

// unrelatedHome is one kept HOME of another benchmark's run.
type unrelatedHome struct {
	name, home, project, claude, engram string
	env                                 []string
}

// findHomes lists the HOMEs under dir: directories holding an engram
// store (.claude-memory) and one project under src/.
func findHomes(dir string) ([]unrelatedHome, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []unrelatedHome
	for _, e := range ents {
		home := filepath.Join(dir, e.Name())
		if !e.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(home, ".claude-memory")); err != nil {
			continue
		}
		projects, _ := filepath.Glob(filepath.Join(home, "src", "*"))
		if len(projects) != 1 {
			return nil, fmt.Errorf("%s: want one project under src/, found %d", home, len(projects))
		}
		out = append(out, unrelatedHome{name: e.Name(), home: home, project: projects[0],
			claude: filepath.Join(home, ".claude"), engram: filepath.Join(home, ".claude-memory")})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	if len(out) == 0 {
		return nil, fmt.Errorf("-unrelated %s: no HOME with an engram store (.claude-memory) under it", dir)
	}
	return out, nil
}

// runUnrelated sends the PrefEval questions of opt.Users users (at least
// one question per topic and user, as the main run asks them; 30 users
// when -users is 0) to the unrelated stores, in turn.
func runUnrelated(ctx context.Context, opt options, bins benchkit.Bins, data *Data, logf func(string, ...any)) (*UnrelatedStats, error) {
	homes, err := findHomes(opt.Unrelated)
	if err != nil {
		return nil, err
	}
	st := &UnrelatedStats{Dir: opt.Unrelated}
	for i := range homes {
		h := &homes[i]
		st.Homes = append(st.Homes, h.name)
		h.env = benchkit.ChildEnv(h.home, opt.PromptDeadline)
		// One cycle rewrites the recollection files with the engram under
		// test (the store may come from an earlier run).
		if r := benchkit.Run(ctx, h.env, h.project, nil, bins.Worker, "run", "--quiet"); r.Err != nil {
			return nil, fmt.Errorf("%s: engram-worker run: %v: %s", h.home, r.Err, r.Stderr)
		}
	}
	users := opt.Users
	if users <= 0 {
		users = 30
	}
	var tokens, hookMs []float64
	k := 0
	for u := range users {
		for _, topic := range data.names {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			it, item := data.item(topic, u)
			h := homes[k%len(homes)]
			k++
			a := benchkit.Ask(ctx, h.env, bins.Prompt, h.claude, h.engram, h.project, it.Question)
			st.Questions++
			if a.Context == "" {
				st.Empty++
			}
			if a.Problem != "" {
				st.Problems++
			}
			st.Bites += len(benchkit.Bites(a.Context))
			tokens = append(tokens, benchkit.Tokens(a.Context))
			st.Asked = append(st.Asked, UnrelatedAsk{Home: h.name, Topic: topic, Item: item, Tokens: benchkit.Tokens(a.Context)})
			hookMs = append(hookMs, benchkit.Ms(a.Wall))
		}
	}
	st.NoInjection = share(st.Empty, st.Questions)
	st.Tokens, st.HookMs = dist(tokens), dist(hookMs)
	logf("unrelated stores (%d under %s): %d questions, %d got no injection", len(homes), opt.Unrelated, st.Questions, st.Empty)
	return st, nil
}
