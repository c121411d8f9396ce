package minilm

import "context"

// QueryTokens bounds the tokens of a prompt that recall embeds: the cost of
// a prompt grows with them, and a prompt says what it is about early on.
const QueryTokens = 64

// EmbedQuery embeds a prompt for recall (its first QueryTokens tokens). The
// prompt is the user's turn, and memories are embedded as exchanges whose
// turns are labelled ("User: …"): labelled the same way, a prompt lands
// nearer to what the user said (measured on PrefEval's preferences).
func (m *Model) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return m.EmbedText("User: "+text, QueryTokens), nil
}

// OpenInstalled maps the model installed in dir when enabled is true and it
// is there; nil otherwise (recall is then by words only). Callers Close it.
func OpenInstalled(dir string, enabled bool) *Model {
	if !enabled {
		return nil
	}
	m, err := Open(dir)
	if err != nil {
		return nil
	}
	return m
}

// DocTokens bounds the tokens of a memory the worker embeds. The model was
// trained on sequences of 128 tokens; a memory's first 128 tokens hold
// what was asked and the start of the answer, and each token past them
// costs as much again.
const DocTokens = 128

// Documents is the model as the worker's embedder of memories: Embed reads
// each text's first DocTokens tokens. Its vectors are the model's, so they
// compare with the prompt's.
type Documents struct{ *Model }

// Embed embeds texts, each cut to DocTokens tokens.
func (d Documents) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return d.Model.EmbedBatch(ctx, texts, DocTokens)
}
