package minilm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// referenceTexts are the texts compared with the reference engine: every
// path through the tokenizer (accents, CJK, emoji, control characters,
// punctuation, words beyond 100 characters, truncation) and ordinary
// sentences, several hundred of them.
func referenceTexts() []string {
	base := []string{
		"",
		" ",
		"hello world",
		"Hello, World!",
		"I avoid gluten.",
		"I'm visiting Rome, which restaurants should I try?",
		"use pnpm, not npm",
		"we're a pnpm shop",
		"The quick brown fox jumps over the lazy dog.",
		"user: how do I rebase my branch onto main?",
		"assistant: Run `git rebase main` from your branch, then resolve conflicts.",
		"go test -race -count=1 ./internal/embed/minilm/",
		"func (m *Model) Embed(ctx context.Context, texts []string) ([][]float32, error) {",
		"for i := range 10 { fmt.Println(i*i) }",
		"def f(x):\n    return x ** 2  # square\n",
		"SELECT id, name FROM episodes WHERE score > 0.5 ORDER BY ts DESC LIMIT 10;",
		`{"key": "value", "list": [1, 2, 3], "nested": {"a": null}}`,
		"/home/user/.config/engram/config.toml",
		`C:\Users\Admin\AppData\Local\Temp\file.txt`,
		"https://example.com/path?query=1&other=two#fragment",
		"user@example.com wrote on 2026-11-25T03:12:00Z",
		"3.14159265358979 and 2.71828 and 1,000,000 and -42 and 1e-12",
		"v1.2.3-rc.1+build.456",
		"0xDEADBEEF 0b1010 0o755 1_000_000",
		"sha256:6638f625a0a60bdaa1e34c5fee0a17c705f13b98b43a7973e9d366106a55273d",
		"café naïve résumé Ångström Crème brûlée São Paulo",
		"İstanbul ŞİŞLİ Straße ÆØÅ œuvre Łódź Dvořák",
		"Tiếng Việt có nhiều dấu: người, được, những",
		"Καλημέρα κόσμε, ΑΒΓΔ ΣΊΣΥΦΟΣ",
		"Привет, мир! Ёлка и йод.",
		"مرحبا بالعالم",
		"שלום עולם",
		"नमस्ते दुनिया, हिन्दी में लिखा",
		"สวัสดีชาวโลก",
		"我喜欢吃面条，也喜欢喝茶。",
		"東京タワーは赤いです。ひらがなとカタカナ",
		"한국어 텍스트입니다. 안녕하세요!",
		"mixed中文and English词语",
		"𠀀𠀁 rare ideographs 丽 and 﨑",
		"I love 🍕 and 🎉!",
		"🥲🫠🫶 newer emoji",
		"family: 👨‍👩‍👧 flags: 🇫🇷🇯🇵 skin: 👍🏽",
		"!!!???...;;;:::",
		"--- === *** ### @@@ $$$ %%% ^^^ &&& ||| ~~~ ``` <<< >>>",
		"«quoted» “smart quotes” ‘single’ — em dash – en dash … ellipsis",
		"¿Qué pasa? ¡Hola!",
		"x → y ⇒ z; ∑ x² ≤ ∞; ∀ε>0 ∃δ",
		"tab\tseparated\nnew line\r\nwindows line",
		"zero\u200bwidth non\u00a0breaking soft\u00adhyphen",
		"control\u0001chars\u0007here\u007f and \ufffd replacement",
		"nul\u0000byte",
		"ＦＵＬＬＷＩＤＴＨ ｌｅｔｔｅｒｓ １２３",
		"combining: e\u0301 a\u0308 n\u0303 alone \u0301",
		"private use \ue000\uf8ff end",
		"ligatures ﬁ ﬂ and superscripts ¹²³ and ½",
		"A",
		"a b c d e f g h i j k l m n o p q r s t u v w x y z",
		"supercalifragilisticexpialidocious antidisestablishmentarianism",
		strings.Repeat("a", 99),
		strings.Repeat("b", 100),
		strings.Repeat("c", 101),
		strings.Repeat("xyz", 50) + " end",
		"unbelievably unaffable unchristened",
		"The the THE tHe",
		"don't won't can't shouldn't y'all",
		"e.g. i.e. etc. U.S.A. Ph.D.",
		"#hashtag @mention $PATH ${HOME} %APPDATA%",
		"snake_case camelCase PascalCase kebab-case SCREAMING_CASE",
		"git commit -m 'fix: handle nil pointer in store.Open'",
		"npm install --no-package-lock --no-audit --no-fund",
		"ENGRAM_EMBED_MODEL_DIR=/opt/models/minilm engram worker",
		"panic: runtime error: index out of range [5] with length 3",
		"Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>",
		"<div class=\"container\"><p>Hello</p></div>",
		"| col1 | col2 |\n|------|------|\n| a    | b    |",
		"- [ ] todo item\n- [x] done item",
		"**bold** _italic_ `code` ~~strike~~",
		"File created successfully at /tmp/x.go",
		"Which package manager do you use? — Understood.",
	}
	subjects := []string{"I", "My team", "The user", "We", "She"}
	verbs := []string{"prefers", "avoids", "always uses", "never deploys on", "is allergic to", "asked about"}
	objects := []string{
		"tabs over spaces", "gluten", "Fridays", "pnpm", "dark mode", "peanuts",
		"PostgreSQL 16", "vim keybindings", "long meetings", "the staging cluster",
	}
	var texts []string
	texts = append(texts, base...)
	for i, s := range subjects {
		for j, v := range verbs {
			o := objects[(i*len(verbs)+j)%len(objects)]
			texts = append(texts, fmt.Sprintf("%s %s %s.", s, v, o))
		}
	}
	for i, o := range objects {
		texts = append(texts, fmt.Sprintf("user: what do you know about %s? assistant: noted #%d", o, i))
		texts = append(texts, strings.ToUpper(o)+"!!!")
	}
	// Variations of the base texts: upper case, a speaker prefix.
	for i, t := range base {
		if i%2 == 0 {
			texts = append(texts, strings.ToUpper(t))
		} else {
			texts = append(texts, "assistant: "+t)
		}
	}
	// Long texts, well beyond 256 tokens: truncation.
	para := "Engram keeps long-term memory for coding sessions: it captures each exchange, " +
		"extracts episodes, embeds them, clusters them into beliefs and injects the relevant ones. "
	texts = append(texts,
		strings.Repeat(para, 12),
		strings.Repeat("word ", 600),
		strings.Repeat("the ", 300)+"tail that is cut off",
		strings.Repeat("数据", 200),
		strings.Repeat("🙂 ", 300),
		strings.Repeat("x", 5000),
		strings.Repeat("a.b/c_d-e ", 120),
		strings.Repeat(base[12]+"\n", 20),
	)
	return texts
}

// reference embeds texts with the reference engine through node, or skips.
func reference(t *testing.T, texts []string, maxTokens int) [][]float32 {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the reference engine runs in node")
	}
	if !fileExists(filepath.Join(nodeModules(), "@lat.md", "embed", "dist", "engine.cjs")) {
		t.Skip("@lat.md/embed is not in node_modules: run npm install in the repository root")
	}
	in, _ := json.Marshal(texts)
	cmd := exec.Command(node, "testdata/reference.mjs", nodeModules(), fmt.Sprint(maxTokens))
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reference engine: %v\n%s", err, stderr.Bytes())
	}
	var vs [][]float32
	if err := json.Unmarshal(out, &vs); err != nil {
		t.Fatalf("reference engine output: %v", err)
	}
	if len(vs) != len(texts) {
		t.Fatalf("reference engine gave %d vectors for %d texts", len(vs), len(texts))
	}
	return vs
}

func cosine(a, b []float32) float64 {
	var d, na, nb float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return d / math.Sqrt(na*nb)
}

// TestReference compares Embed with the published model's own engine
// (candle, compiled to WebAssembly, in @lat.md/embed) on every text of
// referenceTexts, at the default token limit and at 32 tokens (the
// prompt hook's kind of limit): cosine ≥ 0.999 for each. It runs with
// each kernel this build and CPU have (kernelChoices): the one chosen at
// start-up on every text, the slower ones on every 4th.
func TestReference(t *testing.T) {
	m := testModel(t)
	all := referenceTexts()
	if len(all) < 200 {
		t.Fatalf("only %d reference texts", len(all))
	}
	every := func(n int) []string {
		var some []string
		for i := 0; i < len(all); i += n {
			some = append(some, all[i])
		}
		return some
	}
	// The reference engine runs once per text and limit.
	refs := map[int]map[string][]float32{}
	cached := func(t *testing.T, texts []string, limit int) [][]float32 {
		if refs[limit] == nil {
			refs[limit] = map[string][]float32{}
		}
		var missing []string
		for _, s := range texts {
			if _, ok := refs[limit][s]; !ok && !slices.Contains(missing, s) {
				missing = append(missing, s)
			}
		}
		if len(missing) > 0 {
			for i, v := range reference(t, missing, limit) {
				refs[limit][missing[i]] = v
			}
		}
		out := make([][]float32, len(texts))
		for i, s := range texts {
			out[i] = refs[limit][s]
		}
		return out
	}
	for i, k := range kernelChoices() {
		texts := all
		switch {
		case raceEnabled || testing.Short():
			// Minutes under the race detector: every 8th text there; the
			// whole set runs in the builds without it.
			texts = every(8)
		case i > 0:
			texts = every(4)
		}
		t.Run(k.kernel, func(t *testing.T) {
			forceKernels(t, k)
			for _, limit := range []int{DefaultMaxTokens, 32} {
				t.Run(fmt.Sprint(limit), func(t *testing.T) {
					sub := texts
					if limit != DefaultMaxTokens {
						sub = texts[:len(texts)/3]
						sub = append(sub, texts[len(texts)-8:]...)
					}
					want := cached(t, sub, limit)
					got, err := m.EmbedBatch(context.Background(), sub, limit)
					if err != nil {
						t.Fatal(err)
					}
					if len(sub) < 2 {
						t.Fatal("no texts")
					}
					minCos, sum := 1.0, 0.0
					for i := range sub {
						c := cosine(got[i], want[i])
						sum += c
						minCos = min(minCos, c)
						if !(c >= 0.999) {
							t.Errorf("text %d %q: cosine %.6f with the reference, tokens %v", i, trim(sub[i]), c, m.Tokens(sub[i], limit))
						}
					}
					t.Logf("%d texts, limit %d tokens, kernel %s: cosine min %.7f (1−min %.1e), mean %.7f", len(sub), limit, kernel, minCos, 1-minCos, sum/float64(len(sub)))
				})
			}
		})
	}
}

func trim(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
