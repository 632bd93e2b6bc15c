package oauthtest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// ResourceOptions configure a Resource.
type ResourceOptions struct {
	// Scopes every request needs; a 401 names them in its challenge.
	Scopes []string
	// ToolScopes are the scopes a tools/call of a tool needs besides
	// Scopes: a token without them gets 403 insufficient_scope, and the
	// client is expected to step up.
	ToolScopes map[string][]string
	// Sessions serves 2025-11-25 sessions (Mcp-Session-Id) instead of the
	// stateless 2026-07-28 server.
	Sessions bool
	// MetadataResource, when set, is the resource the protected resource
	// metadata names instead of the server's URL: a document a client
	// must refuse (RFC 9728 section 3.3).
	MetadataResource string
}

// Resource is an MCP server behind auth.RequireBearerToken, which
// publishes its protected resource metadata (RFC 9728) naming the
// authorization server.
type Resource struct {
	// URL is the MCP endpoint.
	URL string
	// MetadataURL is where the protected resource metadata is served.
	MetadataURL string

	mu       sync.Mutex
	refusals map[int]int
	bearers  map[string]bool
}

// NewResource serves server behind as's tokens until the test ends.
func NewResource(t testing.TB, as *Server, server *mcp.Server, opts ResourceOptions) *Resource {
	t.Helper()
	r := &Resource{refusals: map[int]int{}, bearers: map[string]bool{}}
	mux := http.NewServeMux()
	srv := httptest.NewServer(r.count(mux))
	t.Cleanup(srv.Close)
	r.URL = srv.URL + "/mcp"
	r.MetadataURL = srv.URL + "/.well-known/oauth-protected-resource/mcp"

	supported := slices.Clone(opts.Scopes)
	for _, scopes := range opts.ToolScopes {
		for _, s := range scopes {
			if !slices.Contains(supported, s) {
				supported = append(supported, s)
			}
		}
	}
	slices.Sort(supported)
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:             cmp.Or(opts.MetadataResource, r.URL),
		AuthorizationServers: []string{as.URL},
		ScopesSupported:      supported,
	}))
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{Stateless: !opts.Sessions})
	bearer := auth.RequireBearerToken(as.Verify, &auth.RequireBearerTokenOptions{
		ResourceMetadataURL: r.MetadataURL, Scopes: opts.Scopes,
	})
	mux.Handle("/mcp", bearer(r.stepUp(opts, mcpHandler)))
	return r
}

// Refusals returns how many requests were answered 401 and 403.
func (r *Resource) Refusals() (unauthorized, forbidden int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.refusals[http.StatusUnauthorized], r.refusals[http.StatusForbidden]
}

// Bearers returns how many distinct bearer tokens reached the endpoint.
func (r *Resource) Bearers() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.bearers)
}

// stepUp refuses a tools/call whose tool needs scopes the token lacks, the
// way the MCP specification's step-up flow describes: 403 with an
// insufficient_scope challenge naming every scope the call needs.
func (r *Resource) stepUp(opts ResourceOptions, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if len(opts.ToolScopes) == 0 || req.Method != http.MethodPost {
			next.ServeHTTP(w, req)
			return
		}
		body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		json.Unmarshal(body, &msg)
		need := opts.ToolScopes[msg.Params.Name]
		if msg.Method != "tools/call" || len(need) == 0 {
			next.ServeHTTP(w, req)
			return
		}
		info := auth.TokenInfoFromContext(req.Context())
		for _, s := range need {
			if info == nil || !slices.Contains(info.Scopes, s) {
				all := append(slices.Clone(opts.Scopes), need...)
				w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q, resource_metadata=%q`,
					strings.Join(all, " "), r.MetadataURL))
				http.Error(w, "insufficient scope", http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, req)
	})
}

// count records refusals and the bearer tokens seen.
func (r *Resource) count(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if b, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer "); ok {
			r.mu.Lock()
			r.bearers[b] = true
			r.mu.Unlock()
		}
		next.ServeHTTP(&statusWriter{ResponseWriter: w, r: r}, req)
	})
}

type statusWriter struct {
	http.ResponseWriter
	r *Resource
}

func (w *statusWriter) WriteHeader(code int) {
	if code == http.StatusUnauthorized || code == http.StatusForbidden {
		w.r.mu.Lock()
		w.r.refusals[code]++
		w.r.mu.Unlock()
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the Flusher of the stream.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// NoteIn and NoteOut are the arguments and result of NotesServer's tools.
type NoteIn struct {
	Key string `json:"key"`
}

type NoteOut struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// NotesServer returns a small MCP server to protect: lookup (read-only)
// answers "value of <key>"; write_note answers "wrote <key>".
func NotesServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "lookup", Description: "Look a note up.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in NoteIn) (*mcp.CallToolResult, NoteOut, error) {
			return nil, NoteOut{Key: in.Key, Value: "value of " + in.Key}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "write_note", Description: "Write a note."},
		func(_ context.Context, _ *mcp.CallToolRequest, in NoteIn) (*mcp.CallToolResult, NoteOut, error) {
			return nil, NoteOut{Key: in.Key, Value: "wrote " + in.Key}, nil
		})
	return s
}
