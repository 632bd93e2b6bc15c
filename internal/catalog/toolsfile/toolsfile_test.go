package toolsfile

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestToolsFileRoundTrip: a tools file keeps each tool's bytes (compacted)
// one a line, and reads back as written; a bare tools/list result reads
// too.
func TestToolsFileRoundTrip(t *testing.T) {
	tools := []json.RawMessage{
		json.RawMessage(`{"name": "b_tool", "inputSchema": {"type": "object", "properties": {"z": {}, "a": {}}}}`),
		json.RawMessage(`{"name":"a_tool","description":"<x> & y"}`),
	}
	var b bytes.Buffer
	if err := Write(&b, Tools{Server: "s", Protocol: "2026-07-28", ServerName: "srv", ServerVersion: "1.0",
		Instructions: "Use <b> first.\nThen a.", Tools: tools}); err != nil {
		t.Fatal(err)
	}
	want := `{"kind":"hosteval.tools","schema":1,"server":"s","protocol":"2026-07-28","server_name":"srv","server_version":"1.0","instructions":"Use <b> first.\nThen a.","tools":[
{"name":"b_tool","inputSchema":{"type":"object","properties":{"z":{},"a":{}}}},
{"name":"a_tool","description":"<x> & y"}
]}
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Fatalf("file (-want +got):\n%s", diff)
	}
	got, err := Read(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if got.Server != "s" || got.Protocol != "2026-07-28" || got.ServerName != "srv" || got.Instructions != "Use <b> first.\nThen a." || len(got.Tools) != 2 ||
		string(got.Tools[0]) != `{"name":"b_tool","inputSchema":{"type":"object","properties":{"z":{},"a":{}}}}` {
		t.Errorf("read back %+v", got)
	}
	bare, err := Read([]byte(`{"tools":[{"name":"x"}],"_meta":{}}`))
	if err != nil || len(bare.Tools) != 1 || bare.Server != "" {
		t.Errorf("a bare tools/list result: %+v, %v", bare, err)
	}
}

func TestReadToolsRefuses(t *testing.T) {
	tests := []struct{ name, data, want string }{
		{"not JSON", `tools`, "read tools: invalid character"},
		{"another kind", `{"kind":"hosteval.catalog","schema":1,"tools":[]}`, `kind "hosteval.catalog", want "hosteval.tools"`},
		{"a newer schema", `{"kind":"hosteval.tools","schema":2,"tools":[]}`, "schema 2, want 1"},
		{"no tools", `{"kind":"hosteval.tools","schema":1}`, `no "tools" list`},
		{"a tool not an object", `{"tools":[1]}`, "tool 1 is not an object"},
		{"a page of several", `{"tools":[],"nextCursor":"2"}`, "save every page"},
	}
	for _, tt := range tests {
		_, err := Read([]byte(tt.data))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
}
