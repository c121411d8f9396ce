package llm

import (
	"context"
	"encoding/json"
	"fmt"
)

// JSONer is what the extractor and the judge need of a model: one call
// whose reply is a JSON object of out's type. *Client is one; the Claude
// Code backend (package claudellm) is another.
type JSONer interface {
	JSON(ctx context.Context, system, user, schemaName string, out any) error
	Model() string
}

// Schema is the JSON schema of an output type, for backends that send it
// themselves.
type Schema struct{ s *schema }

// SchemaOf returns the schema of the type out points to (a struct).
func SchemaOf(out any) (Schema, error) {
	s, err := schemaFor(out)
	return Schema{s}, err
}

// Text is the strict schema, marshalled: every property required, optional
// ones nullable, no additional properties.
func (s Schema) Text() string { return s.s.text }

// Decode checks raw (one JSON object) against the schema's shape and
// decodes it into out; a reply that is not JSON or not of that shape is
// ErrMalformed.
func (s Schema) Decode(raw []byte, out any) error {
	var data any
	if err := json.Unmarshal(raw, &data); err != nil {
		return fmt.Errorf("%w: not JSON (%v): %q", ErrMalformed, err, clip(string(raw), 200))
	}
	if !s.s.validate(data) {
		return fmt.Errorf("%w: JSON does not match the schema: %q", ErrMalformed, clip(string(raw), 200))
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return nil
}
