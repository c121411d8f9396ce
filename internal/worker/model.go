package worker

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/engram-memory/engram/internal/config"
	"github.com/engram-memory/engram/internal/embed/minilm"
)

// The sentence embedder's model: installed once into cfg.ModelDir() (a
// runtime file converted from the published weights), then opened by the
// worker and mapped by every prompt hook.

// ModelState says whether the sentence embedder can run, and why not.
type ModelState struct {
	Installed bool   `json:"installed"`
	Enabled   bool   `json:"enabled"`
	Dir       string `json:"dir"`
	// Source is the directory it is installed from (ENGRAM_EMBED_MODEL_DIR),
	// when set.
	Source  string    `json:"source,omitempty"`
	Updated time.Time `json:"updated,omitzero"`
	// Problem says why an installed or configured model is not usable.
	Problem string `json:"problem,omitempty"`
	// Kernel names the matrix kernels this build runs the model with
	// ("avx512-vnni" or "avx512-bf16" for the worker's batches, with
	// avx2-fma for prompts; "avx2-fma"; "neon" on arm64; or "go": eight
	// times slower).
	Kernel string `json:"kernel"`
	// Format is the installed runtime file's format version (2: float16
	// matrices, half the bytes a prompt reads; 1: float32); Outdated, that
	// installing the model again would write a faster one on this
	// machine (scripts/install.sh then does).
	Format   int  `json:"format,omitempty"`
	Outdated bool `json:"outdated,omitempty"`
}

// Model reports the sentence embedder's state without opening it.
func Model(cfg config.Config) ModelState {
	st := ModelState{Dir: cfg.ModelDir(), Enabled: cfg.SentenceEmbedder, Source: cfg.EmbedModelDir, Kernel: minilm.Kernel()}
	fi, err := os.Stat(filepath.Join(cfg.ModelDir(), minilm.RuntimeFile))
	switch {
	case err == nil:
		st.Installed, st.Updated = true, fi.ModTime()
		if v, err := minilm.FileVersion(cfg.ModelDir()); err == nil {
			st.Format, st.Outdated = v, v < minilm.PreferredVersion()
		}
	case !errors.Is(err, fs.ErrNotExist):
		st.Problem = err.Error()
	}
	return st
}

// InstallModel converts a model directory in the Hugging Face layout into
// cfg.ModelDir(). With pinned, the files must be the published ones
// (minilm.Verify); a directory of the user's own is checked for its
// structure only. The runtime file is replaced atomically: a prompt hook
// that has the old one mapped keeps reading it.
func InstallModel(cfg config.Config, src string, pinned bool) error {
	if err := minilm.Install(src, cfg.ModelDir(), pinned); err != nil {
		return err
	}
	m, err := minilm.Open(cfg.ModelDir())
	if err != nil {
		return fmt.Errorf("installed model does not open: %w", err)
	}
	defer m.Close()
	return m.Check()
}

// OpenModel opens the sentence embedder when it is enabled, installing it
// first from ENGRAM_EMBED_MODEL_DIR when that is set and the installed
// model is missing or older than the source's weights. It returns nil and
// no error when there is no model to use.
func OpenModel(cfg config.Config) (*minilm.Model, error) {
	if !cfg.SentenceEmbedder {
		return nil, nil
	}
	if cfg.EmbedModelDir != "" && sourceNewer(cfg) {
		if err := InstallModel(cfg, cfg.EmbedModelDir, false); err != nil {
			return nil, fmt.Errorf("install the sentence embedder from ENGRAM_EMBED_MODEL_DIR=%s: %w", cfg.EmbedModelDir, err)
		}
	}
	m, err := minilm.Open(cfg.ModelDir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sentence embedder in %s: %w", cfg.ModelDir(), err)
	}
	return m, nil
}

// sourceNewer reports whether ENGRAM_EMBED_MODEL_DIR's files changed after
// the installed runtime file was written (or there is none).
func sourceNewer(cfg config.Config) bool {
	fi, err := os.Stat(filepath.Join(cfg.ModelDir(), minilm.RuntimeFile))
	if err != nil {
		return true
	}
	newer := false
	entries, _ := os.ReadDir(cfg.EmbedModelDir)
	for _, e := range entries {
		if info, err := e.Info(); err == nil && info.ModTime().After(fi.ModTime()) {
			newer = true
		}
	}
	return newer
}

// Describe says in one line whether memories are found by meaning.
func (st ModelState) Describe() string {
	switch {
	case st.Problem != "":
		return "sentence embedder: unusable (" + st.Problem + "); memories are found by their words only"
	case !st.Enabled:
		return "sentence embedder: turned off (ENGRAM_SENTENCE_EMBEDDER=false); memories are found by their words only"
	case st.Installed && st.Outdated:
		return "sentence embedder: " + minilm.Name + " in " + st.Dir + " (kernels: " + st.Kernel + "; its file is of format " +
			strconv.Itoa(st.Format) + ", which this machine reads slower than a new conversion: run scripts/install.sh again, or engram-worker model install DIR)"
	case st.Installed:
		format := ""
		if st.Format == 2 {
			format = ", float16 matrices"
		}
		return "sentence embedder: " + minilm.Name + " in " + st.Dir + " (kernels: " + st.Kernel + format + ")"
	case st.Source != "":
		return "sentence embedder: to be installed from " + st.Source + " at the next worker cycle"
	}
	return "sentence embedder: not installed (scripts/install.sh fetches it with npm; or engram-worker model install DIR); memories are found by their words only"
}
