package host

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"
)

// checkWithoutTTL: withoutTTL gives the SDK the members the decoder's way
// does, and reports the same.
func checkWithoutTTL(t *testing.T, in string) {
	t.Helper()
	if !json.Valid([]byte(in)) {
		return // the SDK decoded the message: its result is valid JSON
	}
	got, gotOK := withoutTTL(json.RawMessage(in), PathsFast)
	var want json.RawMessage
	wantOK := false
	if strings.Contains(in, `"ttlMs"`) { // as withoutTTL looks first
		want, wantOK = withoutTTLDecoded(json.RawMessage(in))
	}
	if gotOK != wantOK {
		t.Fatalf("withoutTTL(%s) reports %v, the decoder %v", in, gotOK, wantOK)
	}
	if !gotOK {
		return
	}
	if g, w := compactMembers(t, got), compactMembers(t, want); !maps.Equal(g, w) {
		t.Fatalf("withoutTTL(%s) = %s, the decoder gives %s", in, got, want)
	}
	if sdk, ok := withoutTTL(json.RawMessage(in), PathsSDK); !ok || string(sdk) != string(want) {
		t.Fatalf("withoutTTL(%s) with paths sdk = %s, %v; want the decoder's %s", in, sdk, ok, want)
	}
}

func compactMembers(t *testing.T, data []byte) map[string]string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	out := map[string]string{}
	for k, v := range m {
		c, err := marshalCompact(v)
		if err != nil {
			t.Fatal(err)
		}
		out[k] = string(c)
	}
	return out
}

func TestWithoutTTL(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{`{"tools":[{"name":"a"}]}`, "", false},
		{`{"tools":[{"name":"a"}],"ttlMs":60000}`, `{"tools":[{"name":"a"}]}`, true},
		{`{"ttlMs": 5, "nextCursor": "x", "tools": []}`, `{"nextCursor":"x","tools":[]}`, true},
		{`{"tools":[{"name":"a","_meta":{"ttlMs":1}}]}`, "", false},
		{`{"ttlMs":1}`, `{}`, true},
	}
	for _, tt := range tests {
		got, ok := withoutTTL(json.RawMessage(tt.in), PathsFast)
		if ok != tt.ok || (ok && string(got) != tt.want) {
			t.Errorf("withoutTTL(%s) = %s, %v; want %s, %v", tt.in, got, ok, tt.want, tt.ok)
		}
		checkWithoutTTL(t, tt.in)
	}
}

func FuzzWithoutTTL(f *testing.F) {
	for _, s := range []string{`{"tools":[],"ttlMs":1}`, `{"ttl\u004ds":1,"tools":[]}`, `{"ttlMs":1,"ttlMs":2}`, `{"a":"\"ttlMs\"","ttlMs":null}`, ` { "ttlMs" : 1 , "x" : [ 1 , 2 ] } `} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkWithoutTTL(t, s)
	})
}
