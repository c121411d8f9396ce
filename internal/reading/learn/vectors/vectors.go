// Package vectors gives the sentence vectors the MiniLM reading is
// trained and measured with, from the published model files.
package vectors

import (
	"fmt"
	"os"
	"sync"

	"github.com/engram-memory/engram/internal/embed/minilm"
	"github.com/engram-memory/engram/internal/reading"
)

// Open converts the published MiniLM model in src into a temporary
// directory and returns a sentence-vector function over it (remembering
// each sentence's vector; safe for concurrent use) and a function that
// closes the model and removes the directory.
func Open(src string) (func(string) []float32, func(), error) {
	tmp, err := os.MkdirTemp("", "engram-reading-")
	if err != nil {
		return nil, nil, err
	}
	if err := minilm.Convert(src, tmp); err != nil {
		os.RemoveAll(tmp)
		return nil, nil, fmt.Errorf("convert %s: %w", src, err)
	}
	mm, err := minilm.Open(tmp)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, nil, err
	}
	var mu sync.Mutex
	seen := map[string][]float32{}
	vec := func(s string) []float32 {
		mu.Lock()
		v, ok := seen[s]
		mu.Unlock()
		if ok {
			return v
		}
		v = mm.EmbedText(s, reading.VecTokens)
		mu.Lock()
		seen[s] = v
		mu.Unlock()
		return v
	}
	return vec, func() { mm.Close(); os.RemoveAll(tmp) }, nil
}
