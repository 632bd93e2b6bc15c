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
// An entry is a file named by a key of the endpoint and the request,
// holding the exchange as JSON. It holds both, and a request must equal
// its request and come for its endpoint to be answered, so that the key
// is a name and never a promise: an answer of one endpoint (a base URL;
// the model is in the request) never answers for another.
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
	// Endpoint is the SHA-256 of the URL the request was sent to: a URL
	// may carry a key, and none is ever written.
	Endpoint  string          `json:"endpoint_sha256"`
	Request   json.RawMessage `json:"request"`
	Status    int             `json:"status"`
	LatencyMS float64         `json:"latency_ms"`
	Response  json.RawMessage `json:"response"`
}

func (c *Cache) file(key string) string {
	return filepath.Join(c.dir, key[:2], key+".json")
}

// entryKey names the entry of a request to an endpoint.
func entryKey(endpoint string, canon []byte) string {
	return keyOf(append([]byte(endpointDigest(endpoint)+"\n"), canon...))
}

func endpointDigest(endpoint string) string { return keyOf([]byte(endpoint)) }

// Get returns the stored answer of endpoint (the URL a request is sent
// to) to the request body, if any.
func (c *Cache) Get(endpoint string, body []byte) (Exchange, bool) {
	canon, err := Canonical(body)
	if err != nil {
		c.misses.Add(1)
		return Exchange{}, false
	}
	data, err := os.ReadFile(c.file(entryKey(endpoint, canon)))
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
	if stored, err := Canonical(e.Request); err != nil || !bytes.Equal(stored, canon) || e.Endpoint != endpointDigest(endpoint) {
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

// Put stores an exchange with endpoint. Writers of the same key write the
// same content, and each replaces the file whole, so concurrent cases need
// no lock.
func (c *Cache) Put(endpoint string, ex Exchange) error {
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
		Endpoint:  endpointDigest(endpoint),
		Request:   canon,
		Status:    ex.Status,
		LatencyMS: float64(ex.Latency.Microseconds()) / 1000,
		Response:  ex.Response,
	})
	if err == nil {
		err = writeAtomic(c.file(entryKey(endpoint, canon)), buf.Bytes())
	}
	if err != nil {
		c.errs.Add(1)
		return fmt.Errorf("response cache: %w", err)
	}
	return nil
}
