package host

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Eras remembers the servers that never answered server/discover, by their
// configuration, so that in auto mode only the first connection to each
// waits to find out: later ones go straight to initialize. A remembered
// server that then fails to connect as legacy is probed afresh (it may
// have been upgraded). Whoever runs many hosts owns one and passes it in
// Options; it is safe for concurrent use.
//
// With a file, what it learns also holds for later runs, for a day: a
// configuration such as "npx -y pkg@latest" can change what it runs
// without changing its text.
type Eras struct {
	path string

	mu    sync.Mutex
	memos map[string]eraMemo
	// failed are the configurations whose connection in the run's
	// preflight ran out of its connect budget, with the error it had
	// (Options.Preflight). Never written to the file: a server may be
	// fixed by the next run.
	failed map[string]string
}

// eraMemo is what is remembered of one server configuration.
type eraMemo struct {
	Revision string    `json:"revision"`
	Reason   string    `json:"reason"` // the era reason that decided it
	Time     time.Time `json:"time"`
}

// erasTTL is how long a remembered era is trusted from a file.
const erasTTL = 24 * time.Hour

// NewEras returns an empty memory of eras, or, with a path, one that starts
// from what the file holds and writes every change back to it. A file that
// cannot be read or written costs only a wait for discover, so it is never
// an error.
func NewEras(path string) *Eras {
	e := &Eras{path: path, memos: map[string]eraMemo{}}
	if path == "" {
		return e
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return e
	}
	var memos map[string]eraMemo
	if json.Unmarshal(data, &memos) != nil {
		return e
	}
	for k, m := range memos {
		if time.Since(m.Time) < erasTTL && m.Revision != "" {
			e.memos[k] = m
		}
	}
	return e
}

func (e *Eras) recall(key string) (eraMemo, bool) {
	if e == nil {
		return eraMemo{}, false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	m, ok := e.memos[key]
	return m, ok
}

func (e *Eras) remember(key string, m eraMemo) {
	if e == nil {
		return
	}
	m.Time = time.Now().UTC()
	e.mu.Lock()
	defer e.mu.Unlock()
	e.memos[key] = m
	e.save()
}

// rememberFailure keeps the preflight's verdict on a server that never
// connected.
func (e *Eras) rememberFailure(key, why string) {
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.failed == nil {
		e.failed = map[string]string{}
	}
	e.failed[key] = why
}

// failedBefore returns the preflight's verdict on a server that never
// connected, if there is one.
func (e *Eras) failedBefore(key string) (string, bool) {
	if e == nil {
		return "", false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	why, ok := e.failed[key]
	return why, ok
}

func (e *Eras) forget(key string) {
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.memos, key)
	e.save()
}

// save writes the memos to the file, whole, through a rename so that a
// reader never sees half of it. The caller holds mu.
func (e *Eras) save() {
	if e.path == "" {
		return
	}
	data, err := json.MarshalIndent(e.memos, "", "  ")
	if err != nil {
		return
	}
	if os.MkdirAll(filepath.Dir(e.path), 0o755) != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(e.path), ".eras-*.json")
	if err != nil {
		return
	}
	_, werr := tmp.Write(append(data, '\n'))
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), e.path) != nil {
		os.Remove(tmp.Name())
	}
}

// eraKey identifies a server configuration: what decides which program
// answers. It is a hash, so that the environment (API keys) and headers
// never reach the file.
func eraKey(spec ServerSpec) string {
	headers := make([]string, 0, len(spec.Headers))
	for _, k := range slices.Sorted(maps.Keys(spec.Headers)) {
		headers = append(headers, k+": "+spec.Headers[k])
	}
	parts := []string{spec.Command, strings.Join(spec.Args, "\x00"), strings.Join(spec.Env, "\x00"), spec.Dir,
		spec.URL, strings.Join(headers, "\x00")}
	if spec.InheritEnv {
		parts = append(parts, "inherit-env")
	}
	if spec.Transport != nil {
		parts = append(parts, fmt.Sprintf("transport %p", spec.Transport))
	}
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x01")))
	return hex.EncodeToString(sum[:16])
}
