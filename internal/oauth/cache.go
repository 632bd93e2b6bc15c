package oauth

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// Cache keeps tokens between runs: one file per server URL, client and
// scopes, readable by the user only (files 0600 in a 0700 folder). Refresh
// tokens are kept, so that a later run refreshes instead of asking again.
// Nothing else in hosteval writes a token anywhere.
type Cache struct {
	dir string
}

// NewCache returns a cache in dir; the folder is made on the first save.
func NewCache(dir string) *Cache { return &Cache{dir: dir} }

// DefaultCache returns the cache under the user's configuration folder:
// $XDG_CONFIG_HOME/hosteval/tokens (~/.config on Linux,
// ~/Library/Application Support on macOS, %AppData% on Windows).
func DefaultCache() (*Cache, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return nil, fmt.Errorf("token cache: %w", err)
	}
	return NewCache(filepath.Join(dir, "hosteval", "tokens")), nil
}

// Dir returns the cache's folder.
func (c *Cache) Dir() string { return c.dir }

// entry is one cached token and what refreshing it needs.
type entry struct {
	Server   string `json:"server"`
	Flow     Flow   `json:"flow"`
	ClientID string `json:"client_id"`
	// ClientSecret is kept only for a dynamically registered client (no one
	// else knows it); a configured secret is never written.
	ClientSecret string `json:"client_secret,omitempty"`
	TokenURL     string `json:"token_url,omitempty"`
	// Resource is what token requests name (RFC 8707); empty in files
	// written before it was kept, where Server stands for it.
	Resource  string           `json:"resource,omitempty"`
	AuthStyle oauth2.AuthStyle `json:"auth_style,omitempty"`
	// Scopes are those granted (or, when the server did not say, requested).
	Scopes []string      `json:"scopes,omitempty"`
	Token  *oauth2.Token `json:"token"`
	Saved  time.Time     `json:"saved"`
}

// cacheKey names the cache file of a server URL and a configuration: its
// flow, its client (configured id, metadata document, or dynamic
// registration) and the scopes it asks for.
func cacheKey(serverURL string, cfg Config) string {
	scopes := slices.Sorted(slices.Values(cfg.Scopes))
	parts := []string{serverURL, string(cfg.flow()), string(cfg.registration()), cfg.ClientID, cfg.ClientMetadataURL, strings.Join(scopes, " ")}
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:16])
}

func (c *Cache) path(key string) string { return filepath.Join(c.dir, key+".json") }

// load returns the entry of key, or nil when there is none.
func (c *Cache) load(key string) (*entry, error) {
	data, err := os.ReadFile(c.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var e entry
	if err := json.Unmarshal(data, &e); err != nil || e.Token == nil {
		// A file cut short by a crash is no token: ask again.
		return nil, nil
	}
	return &e, nil
}

// save writes the entry of key whole or not at all: a temporary file
// (created 0600) renamed over the old one.
func (c *Cache) save(key string, e *entry) error {
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return err
	}
	// MkdirAll leaves an existing folder as it was.
	if err := os.Chmod(c.dir, 0o700); err != nil {
		return err
	}
	data, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(c.dir, ".token-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // after a successful rename there is nothing to remove
	if _, err := f.Write(append(data, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), c.path(key))
}
