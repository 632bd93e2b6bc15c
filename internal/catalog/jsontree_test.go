package catalog

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestReencode(t *testing.T) {
	tests := []struct {
		name string
		in   string
		// same is set when re-encoding gives back the input; out is what it
		// gives otherwise.
		same bool
		out  string
	}{
		{"host definition", defFindAssets, true, ""},
		{"number literals", `{"a":1e+21,"b":1.50,"c":-0,"d":12345678901234567890}`, true, ""},
		{"key order", `{"z":1,"a":{"y":2,"b":3}}`, true, ""},
		{"duplicate keys", `{"a":1,"a":2}`, true, ""},
		{"empty containers", `{"a":{},"b":[],"c":[[]]}`, true, ""},
		{"literals", `[null,true,false,"",0]`, true, ""},
		{"html kept", `{"d":"a <b> & c"}`, true, ""},
		{"line separator", `{"d":"\u2028 and \u2029"}`, true, ""},
		{"control and quote", `{"d":"tab\there \"q\" \\ \u0001"}`, true, ""},
		{"unicode", `{"d":"héllo ✓ 日本"}`, true, ""},
		{"escaped html", `{"d":"\u003cb\u003e"}`, false, `{"d":"<b>"}`},
		{"escaped slash", `{"d":"a\/b"}`, false, `{"d":"a/b"}`},
		{"escaped letter", `{"d":"caf\u00e9"}`, false, `{"d":"café"}`},
		{"whitespace", `{"a": [1, 2]}`, false, `{"a":[1,2]}`},
		{"invalid UTF-8", "{\"d\":\"\xff\"}", false, `{"d":"` + "\ufffd" + `"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := parseJSON([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			got, err := encodeJSON(v)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.out
			if tt.same {
				want = tt.in
			}
			if string(got) != want {
				t.Errorf("re-encoded %s\n got %s\nwant %s", tt.in, got, want)
			}
		})
	}
}

func TestObjectChanges(t *testing.T) {
	v, err := parseJSON([]byte(`{"a":1,"$schema":"x","b":{"c":2}}`))
	if err != nil {
		t.Fatal(err)
	}
	o := v.(*object)
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"without", o.without("$schema"), `{"a":1,"b":{"c":2}}`},
		{"without absent", o.without("zzz"), `{"a":1,"$schema":"x","b":{"c":2}}`},
		{"with", o.with("b", "new"), `{"a":1,"$schema":"x","b":"new"}`},
		{"unchanged original", o, `{"a":1,"$schema":"x","b":{"c":2}}`},
	}
	for _, tt := range tests {
		got, err := encodeJSON(tt.v)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tt.want {
			t.Errorf("%s: got %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestEscapeHTML(t *testing.T) {
	tests := []struct {
		in, want string
		n        int
	}{
		{`{"d":"plain"}`, `{"d":"plain"}`, 0},
		{`{"d":"a<b>&c"}`, `{"d":"a\u003cb\u003e\u0026c"}`, 3},
		{`{"d":"<<"}`, `{"d":"\u003c\u003c"}`, 2},
	}
	for _, tt := range tests {
		got, n := escapeHTML([]byte(tt.in))
		if string(got) != tt.want || n != tt.n {
			t.Errorf("escapeHTML(%s) = %s, %d; want %s, %d", tt.in, got, n, tt.want, tt.n)
		}
		// It must agree with encoding/json's own escaping.
		var std bytes.Buffer
		json.HTMLEscape(&std, []byte(tt.in))
		if std.String() != string(got) {
			t.Errorf("escapeHTML(%s) = %s, json.HTMLEscape gives %s", tt.in, got, std.String())
		}
	}
}
