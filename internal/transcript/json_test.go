package transcript

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

var jsonSeeds = []string{
	`{}`, `[]`, `""`, `0`, `-0.5e+10`, `1E5`, `true`, `false`, `null`, ` {"a" : [1, 2.5, "x", {"b": null}] } `,
	`{"type":"user","message":{"content":[{"type":"text","text":"hi \"there\" \\"}]}}`,
	`{"a":1,"a":2}`, `{"k\u0041":"v"}`, `"\ud83d\ude00\ud800"`, "\"\xff\xfe\"", `[[[[]]]]`,
	`{"a":}`, `{"a" 1}`, `[1,]`, `01`, `1.`, `-`, `"\x"`, `"` + "\x01" + `"`, `tru`, `{"a":1}x`, `"\u12"`,
	strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth),
	strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1),
}

func TestValidMatchesEncodingJSON(t *testing.T) {
	for _, s := range jsonSeeds {
		checkValid(t, []byte(s))
	}
}

func checkValid(t *testing.T, b []byte) {
	t.Helper()
	if got, want := valid(b), json.Valid(b); got != want {
		t.Fatalf("valid(%.200q)=%v, encoding/json says %v", b, got, want)
	}
	if !json.Valid(b) {
		return
	}
	v := bytes.TrimSpace(b)
	switch v[0] {
	case '{':
		var want map[string]json.RawMessage
		if err := json.Unmarshal(v, &want); err != nil {
			t.Fatal(err)
		}
		got := map[string]json.RawMessage{}
		eachField(v, func(k, val []byte) {
			got[str([]byte(`"`+string(k)+`"`))] = json.RawMessage(val)
		})
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("eachField(%.200q)=%v, encoding/json says %v", v, got, want)
		}
	case '[':
		var want []json.RawMessage
		if err := json.Unmarshal(v, &want); err != nil {
			t.Fatal(err)
		}
		var got []json.RawMessage
		eachElem(v, func(e []byte) { got = append(got, e) })
		if len(got) != len(want) || (len(got) > 0 && !reflect.DeepEqual(got, want)) {
			t.Fatalf("eachElem(%.200q)=%q, encoding/json says %q", v, got, want)
		}
	case '"':
		var want string
		if err := json.Unmarshal(v, &want); err != nil {
			t.Fatal(err)
		}
		if got := str(v); got != want {
			t.Fatalf("str(%.200q)=%q, encoding/json says %q", v, got, want)
		}
	}
}

// FuzzValid holds the validator and the field walker to encoding/json.
func FuzzValid(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkValid(t, b)
	})
}
