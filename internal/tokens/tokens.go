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

// Cache remembers the counts of texts seen before. A batch run renders the
// same tool definitions for every case; counting them once instead of in
// every case is a third of what a case with shared servers costs. A nil
// *Cache counts without remembering. It is safe for concurrent use.
type Cache struct {
	mu sync.Mutex
	m  map[string]int
}

// maxCached bounds a Cache: past it, the cache starts over (a run has a few
// catalogs, not thousands).
const maxCached = 4096

// NewCache returns an empty cache.
func NewCache() *Cache { return &Cache{m: map[string]int{}} }

// Count returns the number of o200k_base tokens in s.
func (c *Cache) Count(s string) int {
	if c == nil {
		return Count(s)
	}
	c.mu.Lock()
	n, ok := c.m[s]
	c.mu.Unlock()
	if ok {
		return n
	}
	n = Count(s)
	c.mu.Lock()
	if len(c.m) >= maxCached {
		clear(c.m)
	}
	c.m[s] = n
	c.mu.Unlock()
	return n
}
