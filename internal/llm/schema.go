package llm

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sync"

	"github.com/sashabaranov/go-openai/jsonschema"
)

// schema is what JSON needs to know about one output type.
type schema struct {
	// strict is sent as json_schema with strict: every property required,
	// optional ones (omitempty, nullable:"true") as anyOf [T, null].
	strict *jsonschema.Definition
	// check validates replies: the same shape, but optional fields may be
	// missing (json_object mode enforces nothing, and local models drop
	// them) and enums are not checked, because value sets are the caller's
	// to judge (an unknown "type" may map to a default rather than fail the
	// whole reply).
	check *jsonschema.Definition
	// text is strict marshalled, appended to the prompt in json_object mode.
	text string
}

var schemas sync.Map // reflect.Type → *schema

// schemaFor returns the schema of the type out points to.
func schemaFor(out any) (*schema, error) {
	t := reflect.TypeOf(out)
	if t == nil || t.Kind() != reflect.Pointer || reflect.ValueOf(out).IsNil() {
		return nil, fmt.Errorf("llm: JSON needs a non-nil pointer to decode into, got %T", out)
	}
	t = t.Elem()
	if s, ok := schemas.Load(t); ok {
		return s.(*schema), nil
	}
	zero := reflect.New(t).Elem().Interface()
	strict, err := jsonschema.GenerateSchemaForType(zero)
	if err != nil {
		return nil, fmt.Errorf("llm: schema of %v: %w", t, err)
	}
	if strict.Type != jsonschema.Object {
		return nil, fmt.Errorf("llm: JSON output must be an object (a struct), got %v", t)
	}
	makeStrict(strict, true)
	check, _ := jsonschema.GenerateSchemaForType(zero)
	makeStrict(check, false)
	walk(check, func(d *jsonschema.Definition) { d.Enum = nil })
	b, err := json.Marshal(strict)
	if err != nil {
		return nil, fmt.Errorf("llm: schema of %v: %w", t, err)
	}
	s := &schema{strict: strict, check: check, text: string(b)}
	schemas.Store(t, s)
	return s, nil
}

// makeStrict rewrites a generated schema into what OpenAI's strict mode
// accepts: a property that was optional (omitempty, nullable:"true")
// becomes nullable, as anyOf [T, null] since strict mode knows no
// "nullable"; with requireAll every object lists all its properties as
// required.
func makeStrict(d *jsonschema.Definition, requireAll bool) {
	walk(d, func(d *jsonschema.Definition) {
		if d.Type != jsonschema.Object || d.Properties == nil {
			return
		}
		names := make([]string, 0, len(d.Properties))
		for name, p := range d.Properties {
			names = append(names, name)
			if p.Nullable || !slices.Contains(d.Required, name) {
				p.Nullable = false
				desc := p.Description
				p.Description = ""
				d.Properties[name] = jsonschema.Definition{
					Description: desc,
					AnyOf:       []jsonschema.Definition{p, {Type: jsonschema.Null}},
				}
			}
		}
		if requireAll {
			slices.Sort(names)
			d.Required = names
		}
		d.AdditionalProperties = false
	})
}

// walk calls f on d and every definition inside it, children first.
func walk(d *jsonschema.Definition, f func(*jsonschema.Definition)) {
	for name, p := range d.Properties {
		walk(&p, f)
		d.Properties[name] = p
	}
	for name, p := range d.Defs {
		walk(&p, f)
		d.Defs[name] = p
	}
	if d.Items != nil {
		walk(d.Items, f)
	}
	for i := range d.AnyOf {
		walk(&d.AnyOf[i], f)
	}
	f(d)
}

// validate reports whether data (decoded JSON) has the shape of s.
func (s *schema) validate(data any) bool {
	return jsonschema.Validate(*s.check, data, jsonschema.WithDefs(jsonschema.CollectDefs(*s.check)))
}

var badName = regexp.MustCompile(`[^a-zA-Z0-9_-]+`)

// schemaName makes name acceptable as a json_schema name
// (^[a-zA-Z0-9_-]{1,64}$).
func schemaName(name string) string {
	name = badName.ReplaceAllString(name, "_")
	if len(name) > 64 {
		name = name[:64]
	}
	if name == "" {
		name = "reply"
	}
	return name
}
