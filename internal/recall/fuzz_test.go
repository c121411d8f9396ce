package recall

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/engram-memory/engram/internal/embed"
)

// fuzzFiles are valid recollection files of every shape the worker writes:
// a project file with lexical vectors, a global one with a vocabulary, a
// search index segment with seqs, deletions and dense vectors.
func fuzzFiles() [][]byte {
	local := embed.NewLocal()
	r := rand.New(rand.NewPCG(3, 4))
	texts := []string{
		"we deploy the billing service with flyctl", "User prefers pnpm over npm",
		"not as a comment, but as a document attached to the issue directly", "日本語のテキスト é",
	}
	project := &File{Embedder: local.Name(), CreatedAt: now, Scope: "project", ProjectPath: "/p",
		Docs: 40, StopDocs: 20, Common: []TermDocs{{Term: "test", Docs: 30}}}
	global := &File{Embedder: local.Name(), CreatedAt: now, Scope: "global", Docs: 3,
		Vocab: NewBloom(10)}
	segment := &File{Embedder: local.Name(), Dense: "minilm-l6-v2-384", CreatedAt: now, Scope: "search",
		Dels: []int64{2, 9}}
	for i, t := range texts {
		it := Item{Kind: KindEpisode, ID: fmt.Sprintf("ep_%012d", i), Text: t, Detail: "User: " + t,
			ProjectPath: "/p", At: now, Importance: 0.5, Stability: 1, Scope: "project", SessionID: "s1",
			Vec: local.EmbedText(t), Stated: i%2 == 0}
		project.Items = append(project.Items, it)
		global.Vocab.Add(stemHash([]byte(Stem("deploy"))))
		b := Item{Kind: KindBelief, ID: fmt.Sprintf("bl_%012d", i), Text: t, Confidence: 0.8, Evidence: 3}
		global.Items = append(global.Items, b)
		it.Seq = int64(10 + i)
		it.Terms = t + " flyctl"
		if i != 1 {
			it.Dense = randUnit(r, 384)
		}
		segment.Items = append(segment.Items, it)
	}
	return [][]byte{project.Encode(), global.Encode(), segment.Encode()}
}

// FuzzDecode: whatever bytes a recollection file holds (a torn write, a
// disk error, another program's file), reading it gives an error or
// answers, never a panic.
func FuzzDecode(f *testing.F) {
	for _, data := range fuzzFiles() {
		f.Add(data, uint32(0), byte(0))
		f.Add(data, uint32(len(data)/3), byte(0x80))
		f.Add(data[:len(data)/2], uint32(7), byte(1))
	}
	q := make([]float32, 384)
	q[0] = 1
	lq := embed.NewLocal().EmbedText("deploy billing")
	f.Fuzz(func(t *testing.T, data []byte, at uint32, flip byte) {
		if len(data) > 0 {
			data = append([]byte(nil), data...)
			data[int(at)%len(data)] ^= flip
		}
		v, err := DecodeView(data)
		if err == nil {
			for i := range min(v.Len(), 64) {
				it, err := v.Item(i)
				_ = v.Seq(i)
				_ = v.Cos(i, lq)
				_ = v.DenseCos(i, q)
				if err == nil {
					_ = it.Cos(lq)
					_ = it.DenseCos(q)
				}
			}
			for _, w := range []string{"deploy", "billing", "test", "flyctl"} {
				h := stemHash([]byte(Stem(w)))
				_ = v.TermDocs(Stem(w))
				_ = v.MayHold(h)
				n := 0
				v.Postings(h, func(int) { n++ })
			}
		}
		// What Decode accepts can be written again (a damaged file's
		// values may be nonsense, so the copy need not read back the same).
		if g, err := Decode(data); err == nil {
			_, _ = Decode(g.Encode())
		}
	})
}

// TestBloomProbesBounded: a damaged probe count is refused, not looped over.
func TestBloomProbesBounded(t *testing.T) {
	f := &File{Scope: "global", CreatedAt: now, Vocab: NewBloom(4)}
	f.Vocab.Add(stemHash([]byte(Stem("deploy"))))
	f.Vocab.K = maxBloomProbes
	if _, err := Decode(f.Encode()); err != nil {
		t.Fatalf("a file with %d probes: %v", maxBloomProbes, err)
	}
	f.Vocab.K = 1 << 30
	if _, err := DecodeView(f.Encode()); err == nil {
		t.Fatalf("a file with %d probes was accepted", f.Vocab.K)
	}
}
