// Package embed turns text into vectors. Two embedders share the Embedder
// interface: Local (deterministic hashed lexical vectors, microseconds, used
// inside the prompt hook) and the remote one in package embed/remote (any
// OpenAI-compatible embeddings endpoint), kept in its own package so that
// the hook, which imports this one, does not link go-openai. Vectors of
// different embedders are never compared: each stored vector records its
// embedder's Name.
package embed

import "context"

// Embedder turns texts into L2-normalised vectors of a fixed dimension.
type Embedder interface {
	// Name identifies the embedder and its parameters, e.g. "local-v1-256"
	// or "remote:text-embedding-3-small:1536".
	Name() string
	Dim() int
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// SentencePrefix starts the name of every local sentence embedder (a model
// the worker and the prompt hook both run, see package embed/minilm): the
// vectors of such an embedder are the ones the search index carries as
// dense vectors, since the hook can embed a prompt with the same model.
const SentencePrefix = "minilm-"

// IsSentence reports whether name is a local sentence embedder's.
func IsSentence(name string) bool {
	return len(name) > len(SentencePrefix) && name[:len(SentencePrefix)] == SentencePrefix
}
