package lint

import (
	"bytes"
	"encoding/json"
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
