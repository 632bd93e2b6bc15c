package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
)

// A definition is changed and re-encoded to measure what one thing in it
// costs. A map[string]any would sort the envelope's keys ("function" before
// "type") and turn numbers into float64, so every "saving" would include
// the reordering: the tree below keeps key order, duplicate keys and number
// literals, and its encoding matches encoding/json's compact form with HTML
// escaping off. Values are *object, []any, string, json.Number, bool or nil.

type object struct {
	members []member
}

type member struct {
	key   string
	value any
}

// get returns the value of the first member named key.
func (o *object) get(key string) (any, bool) {
	for _, m := range o.members {
		if m.key == key {
			return m.value, true
		}
	}
	return nil, false
}

// without returns a copy of o without the members named key.
func (o *object) without(key string) *object {
	c := &object{members: make([]member, 0, len(o.members))}
	for _, m := range o.members {
		if m.key != key {
			c.members = append(c.members, m)
		}
	}
	return c
}

// with returns a copy of o with the value of the members named key replaced.
func (o *object) with(key string, value any) *object {
	c := &object{members: slices.Clone(o.members)}
	for i := range c.members {
		if c.members[i].key == key {
			c.members[i].value = value
		}
	}
	return c
}

// parseJSON parses one JSON value, keeping key order and number literals.
func parseJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := parseValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the JSON value")
	}
	return v, nil
}

func parseValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil // string, json.Number, bool or nil
	}
	switch d {
	case '{':
		o := &object{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			key, ok := kt.(string)
			if !ok {
				return nil, fmt.Errorf("object key %v is not a string", kt)
			}
			v, err := parseValue(dec)
			if err != nil {
				return nil, err
			}
			o.members = append(o.members, member{key, v})
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		return o, nil
	case '[':
		a := []any{}
		for dec.More() {
			v, err := parseValue(dec)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		return a, nil
	}
	return nil, fmt.Errorf("unexpected %v", d)
}

// encodeJSON encodes v compactly, without HTML escaping.
func encodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := writeValue(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeValue(b *bytes.Buffer, v any) error {
	switch v := v.(type) {
	case *object:
		b.WriteByte('{')
		for i, m := range v.members {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeString(b, m.key); err != nil {
				return err
			}
			b.WriteByte(':')
			if err := writeValue(b, m.value); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeValue(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case string:
		return writeString(b, v)
	case json.Number:
		b.WriteString(string(v))
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case nil:
		b.WriteString("null")
	default:
		return fmt.Errorf("cannot encode %T", v)
	}
	return nil
}

// writeString lets encoding/json escape s, so that the escapes are those
// of the encoder the host renders with.
func writeString(b *bytes.Buffer, s string) error {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return err
	}
	b.Truncate(b.Len() - 1) // Encode's newline
	return nil
}

// escapeHTML returns data with every <, > and & written as \u003c, \u003e
// and \u0026, as encoding/json does by default and some SDKs do always.
// In JSON text these bytes occur only inside strings, so replacing them
// there is the whole difference between the two encodings.
func escapeHTML(data []byte) (escaped []byte, n int) {
	out := make([]byte, 0, len(data))
	for _, c := range data {
		switch c {
		case '<', '>', '&':
			out = append(out, `\u00`...)
			out = append(out, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xF])
			n++
		default:
			out = append(out, c)
		}
	}
	return out, n
}
