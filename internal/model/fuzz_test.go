package model

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"
)

// FuzzParseCall: whatever a script's call string is, ParseCall returns;
// a call it accepts has a name without spaces or braces and arguments that
// are a JSON object. The seeds in testdata/fuzz/FuzzParseCall run with go
// test; make fuzz searches further.
func FuzzParseCall(f *testing.F) {
	f.Add("cmdb__get_asset {hostname: jump-prod-02}")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCall(s)
		if err != nil {
			return
		}
		if c.Name == "" || strings.IndexFunc(c.Name, argsStart) >= 0 {
			t.Errorf("ParseCall(%q) name %q", s, c.Name)
		}
		var args map[string]any
		if err := json.Unmarshal([]byte(c.Arguments), &args); err != nil || args == nil {
			t.Errorf("ParseCall(%q) arguments %q are not a JSON object: %v", s, c.Arguments, err)
		}
		if strings.ContainsFunc(c.Name, unicode.IsSpace) {
			t.Errorf("ParseCall(%q) name %q has a space", s, c.Name)
		}
	})
}
