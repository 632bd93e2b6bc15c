package main

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// stateTTL is how long a confirmation may take: a requestState expires this
// long after the round that issued it.
const stateTTL = 10 * time.Minute

// stateAAD binds a sealed state to this use, so that a ciphertext made
// under the same key for something else cannot be passed off as one.
var stateAAD = []byte("github.com/hosteval/hosteval/tickets/requestState/v1")

// errBadState is every reason to refuse a requestState that says nothing
// about which check failed: a forger learns nothing from the answer.
var errBadState = errors.New("invalid or expired requestState")

// state is what a requestState proves: that this server asked about exactly
// this call, recently, once.
type state struct {
	Tool    string    `json:"tool"`
	Args    string    `json:"args"` // hex SHA-256 of the canonical arguments
	Expires time.Time `json:"exp"`
	Nonce   string    `json:"nonce"` // random, single-use
}

// sealer seals and opens requestStates with AES-256-GCM under one key.
type sealer struct {
	aead cipher.AEAD
}

// parseKey reads a 32-byte key written as 64 hex characters.
func parseKey(s string) ([]byte, error) {
	if len(s) != 64 {
		return nil, fmt.Errorf("want 64 hex characters (32 bytes), got %d characters", len(s))
	}
	key, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("want 64 hex characters (32 bytes): %w", err)
	}
	return key, nil
}

func newKey() []byte {
	key := make([]byte, 32)
	rand.Read(key) // never fails (crypto/rand)
	return key
}

func newSealer(key []byte) (*sealer, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("state key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("state key: %w", err)
	}
	return &sealer{aead: aead}, nil
}

// issue returns a fresh sealed state for a call of tool with these
// arguments, valid until now+stateTTL.
func (s *sealer) issue(tool, argsDigest string, now time.Time) string {
	n := make([]byte, 16)
	rand.Read(n)
	st := state{Tool: tool, Args: argsDigest, Expires: now.Add(stateTTL).UTC(), Nonce: hex.EncodeToString(n)}
	plain, _ := json.Marshal(st) // strings and a time: cannot fail
	iv := make([]byte, s.aead.NonceSize())
	rand.Read(iv)
	sealed := s.aead.Seal(iv, iv, plain, stateAAD)
	return base64.RawURLEncoding.EncodeToString(sealed)
}

// open checks a sealed state against the call it came back with and
// returns it. Any failure is errBadState.
func (s *sealer) open(token, tool, argsDigest string, now time.Time) (state, error) {
	sealed, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(sealed) < s.aead.NonceSize()+s.aead.Overhead() {
		return state{}, errBadState
	}
	iv, ciphertext := sealed[:s.aead.NonceSize()], sealed[s.aead.NonceSize():]
	plain, err := s.aead.Open(nil, iv, ciphertext, stateAAD)
	if err != nil {
		return state{}, errBadState
	}
	var st state
	if err := json.Unmarshal(plain, &st); err != nil {
		return state{}, errBadState
	}
	if st.Tool != tool || st.Args != argsDigest || st.Nonce == "" || !now.Before(st.Expires) {
		return state{}, errBadState
	}
	return st, nil
}

// digest is the hex SHA-256 of the canonical JSON of args: a struct, so the
// field order, and hence the bytes, are fixed.
func digest(args any) string {
	b, _ := json.Marshal(args)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// nonces remembers the nonces of states already answered, until they
// expire. It is per process: a second instance sharing the key does not see
// what this one has used, so a replay sent to another instance within the
// state's lifetime is not caught.
type nonces struct {
	mu   sync.Mutex
	used map[string]time.Time // nonce -> expiry of its state
}

// use marks nonce as used and reports whether it was fresh.
func (n *nonces) use(nonce string, expires, now time.Time) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	for k, exp := range n.used {
		if !now.Before(exp) {
			delete(n.used, k) // an expired state is refused anyway
		}
	}
	if _, ok := n.used[nonce]; ok {
		return false
	}
	if n.used == nil {
		n.used = make(map[string]time.Time)
	}
	n.used[nonce] = expires
	return true
}
