package record

import (
	"encoding/json"
	"testing"
)

// TestWireLineRoundTrip: the lines of a wire trace, as the host writes
// them, decode into a WireLine and encode back to the same bytes: the
// trace's format is this type's JSON, field for field and in order
// (encoding/json escapes the directions' < and >, so the files hold
// "-\u003e" and "\u003c-").
func TestWireLineRoundTrip(t *testing.T) {
	tests := []string{
		`{"ms":12.5,"server":"cmdb","stream":"stdin","dir":"-\u003e","kind":"request","id":3,"method":"tools/call","bytes":61,"message":{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{}}}`,
		`{"ms":13,"server":"cmdb","stream":"stdout","dir":"\u003c-","kind":"error","id":3,"method":"tools/call","bytes":64,"message":{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"no"}}}`,
		`{"ms":14.25,"server":"notes","stream":"http","dir":"\u003c-","kind":"notification","method":"notifications/progress","bytes":9,"message":{"x":1}}`,
		`{"ms":0.5,"server":"cmdb","stream":"stdout","dir":"\u003c-","kind":"invalid","bytes":8,"text":"not json"}`,
		`{"ms":1,"server":"cmdb","stream":"stderr","dir":"","kind":"log","bytes":5,"text":"ready"}`,
	}
	for _, line := range tests {
		var w WireLine
		if err := json.Unmarshal([]byte(line), &w); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		got, err := json.Marshal(w)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != line {
			t.Errorf("round trip:\n got %s\nwant %s", got, line)
		}
	}
}
