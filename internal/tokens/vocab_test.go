package tokens

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/tiktoken-go/tokenizer"
)

var update = flag.Bool("update", false, "rewrite o200k_base.vocab from tiktoken-go's table")

// libraryTokens returns tiktoken-go's o200k_base tokens in rank order.
func libraryTokens(t testing.TB) []string {
	t.Helper()
	lib, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for r := uint(0); ; r++ {
		tok, err := lib.Decode([]uint{r})
		if err != nil {
			break
		}
		out = append(out, tok)
	}
	return out
}

// TestVocabularyFile checks that the embedded vocabulary is tiktoken-go's
// o200k_base table, rank for rank, and that every token is found at its
// rank; with -update it rewrites the file (go generate does).
func TestVocabularyFile(t *testing.T) {
	toks := libraryTokens(t)
	if len(toks) != 199998 {
		t.Fatalf("tiktoken-go has %d o200k_base tokens, want 199998", len(toks))
	}
	want := encodeVocab(toks)
	if *update {
		if err := os.WriteFile("o200k_base.vocab", want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal([]byte(vocabFile), want) {
		t.Fatalf("o200k_base.vocab (%d bytes) is not tiktoken-go's table encoded (%d bytes): run go generate ./internal/tokens", len(vocabFile), len(want))
	}
	v, err := parseVocab(vocabFile)
	if err != nil {
		t.Fatal(err)
	}
	if v.n != len(toks) {
		t.Fatalf("the file has %d tokens, want %d", v.n, len(toks))
	}
	for r, tok := range toks {
		if got := v.token(uint32(r)); got != tok {
			t.Fatalf("token %d = %q, want %q", r, got, tok)
		}
		if got, ok := v.rank(tok); !ok || got != uint32(r) {
			t.Fatalf("rank(%q) = %d, %v; want %d", tok, got, ok, r)
		}
	}
	for _, s := range []string{"", "not a token at all, surely", "\x00\x01\x02\x03"} {
		if r, ok := v.rank(s); ok {
			t.Errorf("rank(%q) = %d, want none", s, r)
		}
	}
}

func TestParseVocabRejects(t *testing.T) {
	tests := []struct {
		name string
		file string
	}{
		{"empty", ""},
		{"wrong magic", "o200kv0\n" + vocabFile[len(vocabMagic):]},
		{"truncated", vocabFile[:len(vocabFile)/2]},
		{"extra bytes", vocabFile + "x"},
	}
	for _, tt := range tests {
		if _, err := parseVocab(tt.file); err == nil {
			t.Errorf("%s: parseVocab accepted it", tt.name)
		}
	}
}
