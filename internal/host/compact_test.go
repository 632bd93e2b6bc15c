package host

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// modelJSONCases are values as a JSON decoder gives them, with what makes
// encoding/json's output particular: key order, escapes, float formats,
// binary data to scrub, and empty and nil containers.
var modelJSONCases = []any{
	nil, true, false, 0.0, math.Copysign(0, -1), 1.0, -42.0, 0.1, 1e20, 1e21, 123456789012345678.0,
	1e-6, 1e-7, 5e-324, math.MaxFloat64, 3.14159,
	"", "plain", "quote \" backslash \\ slash /", "\b\f\n\r\t\x00\x01\x1f\x7f", "<html> & co",
	"é ü 中文 🎉", "line\u2028sep\u2029para", "bad \xff\xfe utf-8", "\ufffd",
	[]any{}, []any(nil), map[string]any{}, map[string]any(nil),
	map[string]any{"b": 1.0, "a": 2.0, "A": 3.0, "é": 4.0, "": 5.0, "a\nb": 6.0, "z\"": []any{"x", nil, map[string]any{"k": false}}},
	map[string]any{"hostname": "jump-prod-02", "tags": []any{"prod", "ssh"}, "cpu": 4.0, "owner": map[string]any{"team": "sre", "oncall": nil}},
	// Binary data: a note in place of each piece.
	map[string]any{"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
	map[string]any{"content": []any{map[string]any{"type": "audio", "data": "AAAA"}, "text"}, "n": 1.0},
	map[string]any{"uri": "file:///x.bin", "blob": "AAECAw==", "mimeType": "application/octet-stream"},
	map[string]any{"logo": "data:image/png;base64,iVBORw0KGgo=", "long": strings.Repeat("Ab0+", 80), "hex": strings.Repeat("ab01", 80)},
	[]any{[]any{[]any{map[string]any{"deep": map[string]any{"b": "2", "a": "1"}}}}},
}

// TestModelJSONIsTheEncoders: the hand-written encoder writes what
// marshalCompact(scrubBinary(v)) writes, byte for byte.
func TestModelJSONIsTheEncoders(t *testing.T) {
	for _, v := range modelJSONCases {
		checkModelJSON(t, v)
	}
}

func checkModelJSON(t *testing.T, v any) {
	t.Helper()
	want, err := marshalCompact(scrubBinary(v))
	if err != nil {
		t.Fatalf("marshalCompact(%#v): %v", v, err)
	}
	var keys []string
	got, ok := appendModelJSON(nil, v, &keys)
	if !ok {
		t.Fatalf("appendModelJSON(%#v) refused it", v)
	}
	if string(got) != string(want) {
		t.Fatalf("appendModelJSON(%#v)\n got %s\nwant %s", v, got, want)
	}
	if len(keys) != 0 {
		t.Fatalf("appendModelJSON(%#v) left %d keys on the stack", v, len(keys))
	}
}

// TestModelJSONRefusesOtherValues: a value no JSON decoder gives is not
// guessed at; the caller falls back to encoding/json.
func TestModelJSONRefusesOtherValues(t *testing.T) {
	for _, v := range []any{json.Number("1"), 3, map[string]string{"a": "b"}, math.Inf(1), []any{math.NaN()}, map[string]any{"x": struct{}{}}} {
		var keys []string
		if _, ok := appendModelJSON(nil, v, &keys); ok {
			t.Errorf("appendModelJSON(%#v) = ok, want refused", v)
		}
	}
}

// FuzzModelJSON: for any JSON text, the decoded value is written as the
// reflection encoder writes it.
func FuzzModelJSON(f *testing.F) {
	for _, v := range modelJSONCases {
		data, _ := json.Marshal(v)
		f.Add(data)
	}
	f.Add([]byte(`{"a":"\ud800","b":"\u2028","c":1.0e+3,"d":-0.0,"e":[{},[]],"a":2}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var v any
		if json.Unmarshal(data, &v) != nil {
			return
		}
		checkModelJSON(t, v)
	})
}
