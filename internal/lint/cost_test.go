package lint

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// listedDefEncoder is listedDef as encoding/json writes it, the reference
// the hand-assembled one is held to.
func listedDefEncoder(t *tool) (json.RawMessage, error) {
	var params bytes.Buffer
	if len(t.rawInput) == 0 {
		params.WriteString(`{"type":"object"}`)
	} else if err := json.Compact(&params, t.rawInput); err != nil {
		return nil, err
	}
	fn := struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	}{t.name, t.description, params.Bytes()}
	def := struct {
		Type     string `json:"type"`
		Function any    `json:"function"`
	}{"function", fn}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(def); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// FuzzListedDef: listedDef writes what encoding/json writes of the same
// definition, or fails where it fails.
func FuzzListedDef(f *testing.F) {
	for _, s := range []string{`{"name":"a","description":"A <b> & \"c\"\u2028.","inputSchema":{ "type" : "object" , "properties":{"x":{"type":"string"}}}}`,
		`{"name":"a"}`, `{"name":"a","description":"","inputSchema":[1, 2]}`, `{"name":"\u00e9\ud800","description":"\u0000\t\n"}`,
		`{"name":"a","inputSchema":{"a":1e5,"b":-0.0}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		srv := &server{}
		tl := readTool(srv, 0, json.RawMessage(raw))
		got, err := listedDef(tl)
		want, werr := listedDefEncoder(tl)
		if (err != nil) != (werr != nil) || !bytes.Equal(got, want) {
			t.Errorf("listedDef(%s) = %s, %v; encoding/json: %s, %v", raw, got, err, want, werr)
		}
	})
}

// decodeToolUnmarshal is decodeTool as json.Unmarshal and a decoder per
// member do it: the reference.
func decodeToolUnmarshal(raw []byte) (map[string]any, json.RawMessage, bool) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || fields == nil {
		return nil, nil, false
	}
	tree := make(map[string]any, len(fields))
	for k, v := range fields {
		dec := json.NewDecoder(bytes.NewReader(v))
		dec.UseNumber()
		var val any
		if dec.Decode(&val) != nil {
			return nil, nil, false
		}
		tree[k] = val
	}
	return tree, fields["inputSchema"], true
}

// FuzzDecodeTool: decodeTool reads what json.Unmarshal reads, refuses
// what it refuses, and keeps the inputSchema's bytes as it does.
func FuzzDecodeTool(f *testing.F) {
	for _, s := range []string{`{"name":"a","inputSchema": {"type" : "object"} }`, `null`, `[]`, `{"a":1} {}`, `{"a":1}  `,
		`{"a":1,"a":2,"inputSchema":1,"inputSchema":{"b":1.50}}`, `{"a":"\ud800x"}`, `{"a":}`, ` {"inputSchema":null}`, `"x"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		tree, input, ok := decodeTool([]byte(raw))
		wtree, winput, wok := decodeToolUnmarshal([]byte(raw))
		if ok != wok || !reflect.DeepEqual(tree, wtree) || !bytes.Equal(input, winput) {
			t.Errorf("decodeTool(%q) = %v, %q, %v; json.Unmarshal: %v, %q, %v", raw, tree, input, ok, wtree, winput, wok)
		}
	})
}
