// Package tokens counts o200k_base tokens, the encoding of gpt-oss and the
// GPT-4o family, with the vocabulary embedded in the binary (no download).
//
// The codec is built once per process on first use: building it costs far
// more than counting, and it is immutable and safe for concurrent use after.
package tokens

import (
	"sync"

	"github.com/tiktoken-go/tokenizer"
)

var codec = sync.OnceValue(func() tokenizer.Codec {
	c, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		// o200k_base is compiled into the tokenizer module: this cannot fail
		// unless the module itself is broken.
		panic("tokens: o200k_base unavailable: " + err.Error())
	}
	return c
})

// Count returns the number of o200k_base tokens in s.
func Count(s string) int {
	n, err := codec().Count(s)
	if err != nil {
		// Count only fails on text the codec cannot split; an estimate at the
		// usual four bytes a token is more useful to a report than a zero.
		return (len(s) + 3) / 4
	}
	return n
}
