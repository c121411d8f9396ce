package setup

// A JSON document edited in place: a parse that keeps the byte offsets of
// every value, and edits that splice text into the original bytes. Whatever
// an edit does not touch stays byte for byte as the user wrote it (key order,
// indentation, spacing, escapes, number spelling, line endings).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ErrInvalidJSON is wrapped by the error returned for a settings file that is
// not valid JSON. Such a file is never modified.
var ErrInvalidJSON = errors.New("not valid JSON")

type jkind uint8

const (
	jObject jkind = iota + 1
	jArray
	jString
	jOther // number, true, false, null
)

// jnode is one value of a parsed document; start and end are byte offsets,
// end exclusive.
type jnode struct {
	kind       jkind
	start, end int
	members    []jmember // jObject
	elems      []*jnode  // jArray
	str        string    // jString: the decoded value
}

type jmember struct {
	key              string
	keyStart, keyEnd int // the key's quotes included
	val              *jnode
}

// member returns the value of key, or nil. A key given twice is an error:
// the client would silently take one of them and an edit of the other would
// be lost.
func (n *jnode) member(key string) (*jnode, int, error) {
	idx := -1
	for i, m := range n.members {
		if m.key == key {
			if idx >= 0 {
				return nil, 0, fmt.Errorf("key %q appears twice in the same object", key)
			}
			idx = i
		}
	}
	if idx < 0 {
		return nil, -1, nil
	}
	return n.members[idx].val, idx, nil
}

// items is the number of members or elements of a container.
func (n *jnode) items() int {
	if n.kind == jObject {
		return len(n.members)
	}
	return len(n.elems)
}

// itemSpan is where item i of a container starts (its key, for a member)
// and ends.
func (n *jnode) itemSpan(i int) (start, end int) {
	if n.kind == jObject {
		return n.members[i].keyStart, n.members[i].val.end
	}
	return n.elems[i].start, n.elems[i].end
}

// parseDoc parses a whole document. Validity is decided by encoding/json,
// whose error gives the position; the positional parser below then only
// walks text already known to be valid.
func parseDoc(b []byte) (*jnode, error) {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := lineCol(b, int(se.Offset))
			return nil, fmt.Errorf("%w: line %d, column %d: %v", ErrInvalidJSON, line, col, se)
		}
		return nil, fmt.Errorf("%w: %v", ErrInvalidJSON, err)
	}
	p := &jparser{b: b}
	p.ws()
	n, err := p.value()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidJSON, err)
	}
	return n, nil
}

// lineCol turns the offset encoding/json reports (bytes read when the error
// was found) into a 1-based line and column of the offending byte.
func lineCol(b []byte, off int) (line, col int) {
	if off > 0 {
		off-- // the byte that could not be read is the last one consumed
	}
	off = min(off, len(b))
	line = 1 + bytes.Count(b[:off], []byte("\n"))
	col = off - (bytes.LastIndexByte(b[:off], '\n') + 1) + 1
	return line, col
}

type jparser struct {
	b []byte
	i int
}

func (p *jparser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jparser) errf(format string, a ...any) error {
	return fmt.Errorf("byte %d: "+format, append([]any{p.i}, a...)...)
}

func (p *jparser) value() (*jnode, error) {
	if p.i >= len(p.b) {
		return nil, p.errf("unexpected end")
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		return p.str()
	default:
		start := p.i
		for p.i < len(p.b) && !strings.ContainsRune(" \t\r\n,]}", rune(p.b[p.i])) {
			p.i++
		}
		if p.i == start {
			return nil, p.errf("unexpected %q", c)
		}
		return &jnode{kind: jOther, start: start, end: p.i}, nil
	}
}

func (p *jparser) str() (*jnode, error) {
	start := p.i
	p.i++ // opening quote
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case '\\':
			p.i += 2
			continue
		case '"':
			p.i++
			n := &jnode{kind: jString, start: start, end: p.i}
			if err := json.Unmarshal(p.b[start:p.i], &n.str); err != nil {
				return nil, p.errf("bad string: %v", err)
			}
			return n, nil
		}
		p.i++
	}
	return nil, p.errf("unterminated string")
}

func (p *jparser) object() (*jnode, error) {
	n := &jnode{kind: jObject, start: p.i}
	p.i++
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		n.end = p.i
		return n, nil
	}
	for {
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return nil, p.errf("expected a key")
		}
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		p.ws()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return nil, p.errf("expected ':'")
		}
		p.i++
		p.ws()
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		n.members = append(n.members, jmember{key: k.str, keyStart: k.start, keyEnd: k.end, val: v})
		p.ws()
		if p.i >= len(p.b) {
			return nil, p.errf("unexpected end in object")
		}
		switch p.b[p.i] {
		case ',':
			p.i++
			p.ws()
		case '}':
			p.i++
			n.end = p.i
			return n, nil
		default:
			return nil, p.errf("expected ',' or '}'")
		}
	}
}

func (p *jparser) array() (*jnode, error) {
	n := &jnode{kind: jArray, start: p.i}
	p.i++
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		n.end = p.i
		return n, nil
	}
	for {
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		n.elems = append(n.elems, v)
		p.ws()
		if p.i >= len(p.b) {
			return nil, p.errf("unexpected end in array")
		}
		switch p.b[p.i] {
		case ',':
			p.i++
			p.ws()
		case ']':
			p.i++
			n.end = p.i
			return n, nil
		default:
			return nil, p.errf("expected ',' or ']'")
		}
	}
}

// Values to insert: an ordered object, an array, or a string.
type (
	jobj []jkv
	jkv  struct {
		k string
		v any // jobj, jarr or string
	}
	jarr []any
)

// jstyle is how the document is laid out, so that inserted text looks like
// the text around it.
type jstyle struct {
	pretty bool   // one member per line
	unit   string // one level of indentation
	colon  string // between a key and its value
	nl     string // "\n" or "\r\n"
}

func detectStyle(b []byte, root *jnode) jstyle {
	st := jstyle{pretty: true, unit: "  ", colon: ": ", nl: "\n"}
	if bytes.Contains(b, []byte("\r\n")) {
		st.nl = "\r\n"
	}
	if root.kind != jObject || len(root.members) == 0 {
		return st
	}
	first := root.members[0]
	st.colon = string(b[first.keyEnd:first.val.start])
	lead := string(b[root.start+1 : first.keyStart])
	if i := strings.LastIndexByte(lead, '\n'); i >= 0 {
		if u := lead[i+1:]; u != "" {
			st.unit = u
		}
	} else {
		st.pretty = false
	}
	return st
}

func quoteJSON(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(buf.String(), "\n")
}

// render lays out v; ind is the indentation of the line v starts on.
func (st jstyle) render(v any, ind string) string {
	var parts []string
	var open, close string
	switch v := v.(type) {
	case string:
		return quoteJSON(v)
	case jobj:
		open, close = "{", "}"
		for _, kv := range v {
			parts = append(parts, quoteJSON(kv.k)+st.colon+st.render(kv.v, ind+st.unit))
		}
	case jarr:
		open, close = "[", "]"
		for _, e := range v {
			parts = append(parts, st.render(e, ind+st.unit))
		}
	default:
		panic(fmt.Sprintf("setup: cannot render %T", v))
	}
	if len(parts) == 0 {
		return open + close
	}
	if !st.pretty {
		sep := ","
		if strings.HasSuffix(st.colon, " ") {
			sep = ", "
		}
		return open + strings.Join(parts, sep) + close
	}
	inner := ind + st.unit
	return open + st.nl + inner + strings.Join(parts, ","+st.nl+inner) + st.nl + ind + close
}

// lineIndent is the leading white space of the line holding offset off.
func lineIndent(b []byte, off int) string {
	s := bytes.LastIndexByte(b[:off], '\n') + 1
	e := s
	for e < len(b) && (b[e] == ' ' || b[e] == '\t') {
		e++
	}
	return string(b[s:e])
}

// appendItem adds an item as the last one of container c. For an object, key
// is the member's key; for an array it is ignored. The separator and
// indentation are copied from the container's current last item, so that
// removing the last item (removeItem) takes back exactly these bytes.
func appendItem(b []byte, st jstyle, c *jnode, key string, v any) []byte {
	text := func(ind string, st jstyle) string {
		if c.kind == jObject {
			return quoteJSON(key) + st.colon + st.render(v, ind)
		}
		return st.render(v, ind)
	}
	if n := c.items(); n > 0 {
		_, lastEnd := c.itemSpan(n - 1)
		lastStart, _ := c.itemSpan(n - 1)
		ws := lastStart
		for ws > c.start+1 && strings.IndexByte(" \t\r\n", b[ws-1]) >= 0 {
			ws--
		}
		sep := string(b[ws:lastStart])
		item := ""
		if i := strings.LastIndexByte(sep, '\n'); i >= 0 {
			item = text(sep[i+1:], st)
		} else { // an inline container stays inline
			flat := st
			flat.pretty = false
			item = text("", flat)
		}
		return splice(b, lastEnd, lastEnd, ","+sep+item)
	}
	if !st.pretty {
		return splice(b, c.start+1, c.end-1, text("", st))
	}
	base := lineIndent(b, c.start)
	inner := base + st.unit
	return splice(b, c.start+1, c.end-1, st.nl+inner+text(inner, st)+st.nl+base)
}

// removeItem deletes item i of container c with one separator: the one after
// it, or, for the last item, the one before it (the inverse of appendItem).
func removeItem(b []byte, c *jnode, i int) []byte {
	n := c.items()
	switch {
	case n == 1:
		return splice(b, c.start+1, c.end-1, "")
	case i < n-1:
		s, _ := c.itemSpan(i)
		next, _ := c.itemSpan(i + 1)
		return splice(b, s, next, "")
	default:
		_, prevEnd := c.itemSpan(i - 1)
		_, e := c.itemSpan(i)
		return splice(b, prevEnd, e, "")
	}
}

func splice(b []byte, start, end int, text string) []byte {
	out := make([]byte, 0, len(b)-(end-start)+len(text))
	out = append(out, b[:start]...)
	out = append(out, text...)
	return append(out, b[end:]...)
}
