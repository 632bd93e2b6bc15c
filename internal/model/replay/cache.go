package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"
)

// Cache is a content-addressed store of the endpoint's successful answers,
// for development: a rerun with an unchanged request is answered from
// disk, at no cost and at once. One Cache serves every case of a run at
// the same time; several runs may share its folder.
//
// An entry is a file named by the request's [Key] holding the exchange as
// JSON. It holds the request too, and a request must equal it to be
// answered, so that the key is a name and never a promise.
type Cache struct {
	dir    string
	hits   atomic.Int64
	misses atomic.Int64
	errs   atomic.Int64
}

// CacheStats counts what a [Cache] did: requests answered, requests not
// found, and entries that could not be read or written (each then counted
// as a miss, never failing a case).
type CacheStats struct {
	Hits   int64 `json:"hits"`
	Misses int64 `json:"misses"`
	Errors int64 `json:"errors,omitempty"`
}

// DefaultCacheDir is where the cache lives unless told otherwise:
// os.UserCacheDir()/hosteval/responses.
func DefaultCacheDir() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("response cache: %w", err)
	}
	return filepath.Join(dir, "hosteval", "responses"), nil
}

// OpenCache opens (creating it) the cache in dir.
func OpenCache(dir string) (*Cache, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("response cache: %w", err)
	}
	return &Cache{dir: dir}, nil
}

// Dir is the cache's folder.
func (c *Cache) Dir() string { return c.dir }

// Stats returns the counts so far.
func (c *Cache) Stats() CacheStats {
	return CacheStats{Hits: c.hits.Load(), Misses: c.misses.Load(), Errors: c.errs.Load()}
}

// entry is a cache file.
type entry struct {
	Request   json.RawMessage `json:"request"`
	Status    int             `json:"status"`
	LatencyMS float64         `json:"latency_ms"`
	Response  json.RawMessage `json:"response"`
}

func (c *Cache) file(key string) string {
	return filepath.Join(c.dir, key[:2], key+".json")
}

// Get returns the stored answer to the request body, if any.
func (c *Cache) Get(body []byte) (Exchange, bool) {
	canon, err := Canonical(body)
	if err != nil {
		c.misses.Add(1)
		return Exchange{}, false
	}
	data, err := os.ReadFile(c.file(keyOf(canon)))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			c.errs.Add(1)
		}
		c.misses.Add(1)
		return Exchange{}, false
	}
	var e entry
	if err := json.Unmarshal(data, &e); err != nil || e.Status == 0 || len(e.Response) == 0 {
		c.errs.Add(1)
		c.misses.Add(1)
		return Exchange{}, false
	}
	if stored, err := Canonical(e.Request); err != nil || !bytes.Equal(stored, canon) {
		c.misses.Add(1)
		return Exchange{}, false
	}
	c.hits.Add(1)
	return Exchange{
		Request:  body,
		Status:   e.Status,
		Response: e.Response,
		Latency:  time.Duration(math.Round(e.LatencyMS*1000)) * time.Microsecond,
	}, true
}

// Put stores an exchange. Writers of the same key write the same content,
// and each replaces the file whole, so concurrent cases need no lock.
func (c *Cache) Put(ex Exchange) error {
	canon, err := Canonical(ex.Request)
	if err == nil && !json.Valid(ex.Response) {
		err = errors.New("the answer is not JSON")
	}
	if err != nil {
		c.errs.Add(1)
		return fmt.Errorf("response cache: %w", err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // the answer as it came, not re-escaped
	err = enc.Encode(entry{
		Request:   canon,
		Status:    ex.Status,
		LatencyMS: float64(ex.Latency.Microseconds()) / 1000,
		Response:  ex.Response,
	})
	if err == nil {
		err = writeAtomic(c.file(keyOf(canon)), buf.Bytes())
	}
	if err != nil {
		c.errs.Add(1)
		return fmt.Errorf("response cache: %w", err)
	}
	return nil
}
