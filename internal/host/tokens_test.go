package host

import (
	"testing"

	"github.com/hosteval/hosteval/internal/tokens"
)

// TestTokensCountedWhenAsked checks that starting a host counts no tokens
// (a command that reports none never loads the vocabulary), and that the
// figures, once asked for, are the counts of the exact bytes.
func TestTokensCountedWhenAsked(t *testing.T) {
	counts := tokens.NewCache()
	h := startHost(t, Options{Servers: []ServerSpec{fixture("cmdb")}, Tokens: counts})
	if n := counts.Len(); n != 0 {
		t.Fatalf("Start counted %d texts, want none", n)
	}
	tool := h.Offered()[0]
	if got, want := tool.Tokens(), tokens.Count(string(tool.Def)); got != want || got == 0 {
		t.Errorf("%s: Tokens() = %d, want %d", tool.Name, got, want)
	}
	if got, want := h.ToolDefs().Tokens, tokens.Count(string(h.ToolsJSON())); got != want || got == 0 {
		t.Errorf("ToolDefs().Tokens = %d, want %d", got, want)
	}
	if n := counts.Len(); n != 2 {
		t.Errorf("the cache holds %d texts, want 2 (a definition and the array)", n)
	}
}
