package record

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Shard is one of N slices of a suite's cases, K of N, counted from 1. The
// zero Shard is the whole suite. In run.json it is the text "K/N".
type Shard struct {
	K, N int
}

// ParseShard parses "K/N" with 1 <= K <= N.
func ParseShard(s string) (Shard, error) {
	k, n, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Shard{}, fmt.Errorf("shard %q: want K/N, e.g. 2/4", s)
	}
	ki, kerr := strconv.Atoi(k)
	ni, nerr := strconv.Atoi(n)
	if kerr != nil || nerr != nil {
		return Shard{}, fmt.Errorf("shard %q: want K/N with whole numbers, e.g. 2/4", s)
	}
	sh := Shard{K: ki, N: ni}
	if err := sh.Check(); err != nil {
		return Shard{}, err
	}
	return sh, nil
}

// Check reports a shard outside 1 <= K <= N.
func (s Shard) Check() error {
	if s.N < 1 || s.K < 1 || s.K > s.N {
		return fmt.Errorf("shard %d/%d: want K/N with 1 <= K <= N", s.K, s.N)
	}
	return nil
}

// IsZero reports whether s is the whole suite.
func (s Shard) IsZero() bool { return s == Shard{} }

// String is "K/N".
func (s Shard) String() string { return strconv.Itoa(s.K) + "/" + strconv.Itoa(s.N) }

// MarshalText writes "K/N".
func (s Shard) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads "K/N".
func (s *Shard) UnmarshalText(b []byte) error {
	sh, err := ParseShard(string(b))
	if err != nil {
		return err
	}
	*s = sh
	return nil
}

// ShardRun is one shard of a merged run, as run.json's shards list gives
// it: which shard, the run it was, where it was read from, and how far it
// got.
type ShardRun struct {
	Shard Shard  `json:"shard"`
	RunID string `json:"run_id"`
	// Dir is the shard's run folder as given to merge.
	Dir      string    `json:"dir"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished,omitzero"`
	// Cases is how many cases the shard set out to run; Records how many
	// it recorded.
	Cases       int  `json:"cases"`
	Records     int  `json:"records"`
	Interrupted bool `json:"interrupted,omitempty"`
	// Incomplete says why the shard holds fewer cases than it set out
	// to (Incomplete), when it does.
	Incomplete string `json:"incomplete,omitempty"`
}
