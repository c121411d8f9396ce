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
