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
