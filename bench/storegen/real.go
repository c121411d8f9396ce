package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sync"

	"github.com/engram-memory/engram/internal/embed/minilm"
	"github.com/engram-memory/engram/internal/extract"
	"github.com/engram-memory/engram/internal/ingest"
	"github.com/engram-memory/engram/internal/recall"
)

// Real sentence vectors for the records the timed prompts are about.
//
// With -dense every record gets a vector under the sentence embedder's
// name, but a fixed projection of its lexical vector is not near a
// prompt's real embedding in meaning: the hook's gate would let nothing
// through and the timing would leave out the reading, gating and
// formatting of the bites it injects. So with -real-vectors, the records
// that share enough of an injecting prompt's terms (about(): the episodes
// and beliefs a user asking that prompt would want back) get the model's
// own vector of the text the worker embeds (ingest.TextFor; a belief's
// statement), and the bulk keeps the projection: embedding 100k texts
// would take the better part of an hour. The vectors are kept in a cache
// file keyed by the model's name and the text, so the stores of every size
// (whose record i is the same text) embed each text once.

// aboutPrompt is a prompt of prompts.json meant to inject something: its
// terms, and the share of them a record's text must hold to be about it.
type aboutPrompt struct {
	terms []string
	min   float32
}

func aboutPrompts() ([]aboutPrompt, error) {
	var ps []benchPrompt
	if err := json.Unmarshal(promptsJSON, &ps); err != nil {
		return nil, fmt.Errorf("prompts.json: %w", err)
	}
	var out []aboutPrompt
	for _, p := range ps {
		if p.Injects {
			if p.RealCoverage <= 0 || p.RealCoverage > 1 {
				return nil, fmt.Errorf("prompts.json: %s: real_coverage %g: want (0, 1]", p.Kind, p.RealCoverage)
			}
			out = append(out, aboutPrompt{terms: recall.Terms(p.Prompt), min: float32(p.RealCoverage)})
		}
	}
	return out, nil
}

// about reports whether text holds the share of some prompt's terms that
// prompt asks for (recall.Coverage: distinct terms, by stem, as the FTS
// index and the hook see them).
func about(prompts []aboutPrompt, text string) bool {
	for _, p := range prompts {
		if len(p.terms) > 0 && recall.Coverage(p.terms, text) >= p.min {
			return true
		}
	}
	return false
}

// vectorCache maps (model, text) to the model's vector; safe for the
// generating goroutines. The file: "engram-bench-vectors-1\n", then records
// of a 32-byte key and minilm.Dim little-endian float32s.
type vectorCache struct {
	path  string
	model *minilm.Model // nil: only cached vectors can be used

	mu       sync.Mutex
	vecs     map[[32]byte][]float32
	added    map[[32]byte][]float32
	real     int // records given a real vector (episodes and beliefs)
	embedded int // of which embedded in this run
}

const cacheMagic = "engram-bench-vectors-1\n"

func openVectorCache(path, modelDir string) (*vectorCache, error) {
	c := &vectorCache{path: path, vecs: map[[32]byte][]float32{}, added: map[[32]byte][]float32{}}
	f, err := os.Open(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		defer f.Close()
		r := bufio.NewReaderSize(f, 1<<20)
		magic := make([]byte, len(cacheMagic))
		if _, err := io.ReadFull(r, magic); err != nil || string(magic) != cacheMagic {
			return nil, fmt.Errorf("%s: not a vector cache of this format (remove it to start anew)", path)
		}
		rec := make([]byte, 32+4*minilm.Dim)
		for {
			if _, err := io.ReadFull(r, rec); err == io.EOF {
				break
			} else if err != nil {
				return nil, fmt.Errorf("%s: truncated record (remove it to start anew): %w", path, err)
			}
			var k [32]byte
			copy(k[:], rec)
			v := make([]float32, minilm.Dim)
			for i := range v {
				v[i] = math.Float32frombits(binary.LittleEndian.Uint32(rec[32+4*i:]))
			}
			c.vecs[k] = v
		}
	}
	if modelDir != "" {
		m, err := minilm.Open(modelDir)
		if err != nil {
			return nil, fmt.Errorf("-model %s: %w", modelDir, err)
		}
		c.model = m
	}
	return c, nil
}

func cacheKey(text string) [32]byte {
	return sha256.Sum256([]byte(minilm.Name + "\x00" + fmt.Sprint(minilm.DocTokens) + "\x00" + text))
}

// vector is the model's vector of text, from the cache or embedded now.
func (c *vectorCache) vector(text string) ([]float32, error) {
	k := cacheKey(text)
	c.mu.Lock()
	v, ok := c.vecs[k]
	c.real++
	c.mu.Unlock()
	if ok {
		return v, nil
	}
	if c.model == nil {
		return nil, fmt.Errorf("no cached vector for %.40q and no -model to embed it", text)
	}
	vs, err := minilm.Documents{Model: c.model}.Embed(context.Background(), []string{text})
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.vecs[k], c.added[k] = vs[0], vs[0]
	c.embedded++
	c.mu.Unlock()
	return vs[0], nil
}

// close appends the vectors embedded in this run to the cache file
// (written anew and renamed into place) and releases the model.
func (c *vectorCache) close() error {
	if c.model != nil {
		defer c.model.Close()
	}
	if len(c.added) == 0 {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(c.path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(c.path), ".vectors-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriterSize(tmp, 1<<20)
	w.WriteString(cacheMagic)
	buf := make([]byte, 4*minilm.Dim)
	for k, v := range c.vecs {
		w.Write(k[:])
		for i, x := range v {
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(x))
		}
		w.Write(buf)
	}
	if err := w.Flush(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), c.path)
}

// episodeText is the text the worker embeds for an episode with the
// sentence embedder.
func episodeText(summary, context string) string {
	return ingest.TextFor(minilm.Name, extract.Draft{Summary: summary, Context: context})
}
