package replay

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// A request or answer body is held as an ordered JSON tree: nil, bool,
// json.Number, string, []any or *object. Key order is kept because it is
// what the endpoint received, and a cassette written in that order reads
// like the request.
type object struct {
	keys []string
	vals []any
}

func (o *object) get(key string) (any, bool) {
	for i, k := range o.keys {
		if k == key {
			return o.vals[i], true
		}
	}
	return nil, false
}

// maxDepth bounds the nesting of a body; no chat request comes near it.
const maxDepth = 256

// parse reads one JSON value and nothing after it.
func parse(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := parseValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("text after the JSON value")
	}
	return v, nil
}

func parseValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested more than %d deep", maxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &object{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := parseValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				o.keys = append(o.keys, k.(string))
				o.vals = append(o.vals, v)
			}
			_, err := dec.Token() // '}'
			return o, err
		case '[':
			a := []any{}
			for dec.More() {
				v, err := parseValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			_, err := dec.Token() // ']'
			return a, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return t, nil // nil, bool, json.Number, string
	}
}

// encode writes v compactly: no insignificant whitespace, strings in one
// fixed encoding (no HTML escaping), numbers as they were written.
func encode(buf *bytes.Buffer, v any) {
	switch t := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		if t {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	case json.Number:
		buf.WriteString(string(t))
	case string:
		encodeString(buf, t)
	case []any:
		buf.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				buf.WriteByte(',')
			}
			encode(buf, e)
		}
		buf.WriteByte(']')
	case *object:
		buf.WriteByte('{')
		for i, k := range t.keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			encodeString(buf, k)
			buf.WriteByte(':')
			encode(buf, t.vals[i])
		}
		buf.WriteByte('}')
	default:
		panic(fmt.Sprintf("replay: encode %T", v))
	}
}

func encodeString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)           // a string always encodes
	buf.Truncate(buf.Len() - 1) // Encode's newline
}

func compact(v any) []byte {
	var buf bytes.Buffer
	encode(&buf, v)
	return buf.Bytes()
}

// Canonical returns body in the form its key is computed from: parsed and
// re-encoded compactly, keys in the order sent. Whitespace and string
// escapes do not decide an answer (an endpoint parses the JSON before its
// chat template renders it), so they do not change the key; key order and
// every value do.
func Canonical(body []byte) ([]byte, error) {
	v, err := parse(body)
	if err != nil {
		return nil, fmt.Errorf("request body is not JSON: %w", err)
	}
	return compact(v), nil
}

// Key is the content address of a request: the hex SHA-256 of its
// [Canonical] form.
func Key(body []byte) (string, error) {
	c, err := Canonical(body)
	if err != nil {
		return "", err
	}
	return keyOf(c), nil
}

func keyOf(canonical []byte) string {
	sum := sha256.Sum256(canonical)
	return hex.EncodeToString(sum[:])
}
