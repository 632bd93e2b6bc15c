package host

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// The seed corpora are in testdata/fuzz: go test runs them. A longer run is
// go test -run=NONE -fuzz=FuzzClip -fuzzminimizetime=2s ./internal/host (the
// default minimisation, 60 s per new input, stalls on long results).

var validToolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// FuzzNamespaced: whatever names a server and its tools have, the name the
// model sees is a valid OpenAI tool name, the same every time, and a name
// that is already valid is kept as it is.
func FuzzNamespaced(f *testing.F) {
	f.Add("cmdb", "get_asset")
	f.Fuzz(func(t *testing.T, server, tool string) {
		got := Namespaced(server, tool)
		if !validToolName.MatchString(got) {
			t.Fatalf("Namespaced(%q, %q) = %q: not a valid tool name", server, tool, got)
		}
		if want := notAllowedInName.ReplaceAllString(server+"__"+tool, "_"); got != want[:min(len(want), 64)] {
			t.Fatalf("Namespaced(%q, %q) = %q, want the expression's %q", server, tool, got, want)
		}
		if again := Namespaced(server, tool); again != got {
			t.Fatalf("Namespaced(%q, %q) = %q, then %q", server, tool, got, again)
		}
		if plain := server + "__" + tool; validToolName.MatchString(plain) && got != plain {
			t.Fatalf("Namespaced(%q, %q) = %q, want the valid name %q kept", server, tool, got, plain)
		}
	})
}

// FuzzClip: a result cut to a budget fits it, keeps a prefix of the text
// whole (no character cut in two), and ends with the note; a budget smaller
// than the note gives the note alone, whole.
func FuzzClip(f *testing.F) {
	f.Add(strings.Repeat("é", 300), uint16(250))
	// The budget is a uint16: real budgets are a few kilobytes.
	f.Fuzz(func(t *testing.T, text string, budget16 uint16) {
		budget := int(budget16)
		if budget <= 0 || len(text) <= budget {
			return // the host cuts only a result over a positive budget
		}
		got := clip(text, budget)
		if budget <= len(clipNote(budget)) {
			if got != clipNote(budget) {
				t.Fatalf("clip to %d, under the note's size: %q, want the note whole", budget, got)
			}
			return
		}
		if len(got) > budget {
			t.Fatalf("clip to %d: %d bytes", budget, len(got))
		}
		note := "\n[result cut to " // the start of every note
		i := strings.LastIndex(got, note)
		if i < 0 {
			t.Fatalf("clip to %d: %q does not end with a note", budget, got)
		}
		if kept := got[:i]; !strings.HasPrefix(text, kept) || (utf8.ValidString(text) && !utf8.ValidString(kept)) {
			t.Fatalf("clip to %d kept %q, not a whole prefix of the text", budget, kept)
		}
		if got[i:] != clipNote(budget) {
			t.Fatalf("clip to %d: note %q, want %q", budget, got[i:], clipNote(budget))
		}
	})
}
