package oauth

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// RefusedMetadataError is a server whose protected resource metadata
// (RFC 9728) names another resource than the server: RFC 9728 section 3.3
// says to refuse it, and the MCP authorization specification then leaves
// no authorization server to ask. Without it being said, the person saw
// the 404 of the fallback that follows (the server's origin taken for its
// authorization server).
type RefusedMetadataError struct {
	// MetadataURL is where the refused document was served.
	MetadataURL string
	// Resource is what it names; Want is the server's own URL.
	Resource, Want string
}

func (e *RefusedMetadataError) Error() string {
	return fmt.Sprintf("the protected resource metadata at %s names the resource %q, not this server's %q: refused (RFC 9728 section 3.3), so no authorization server is trusted for it",
		e.MetadataURL, e.Resource, e.Want)
}

// maxMetadataBytes bounds a metadata document.
const maxMetadataBytes = 1 << 20

// resourceMetadata finds the server's protected resource metadata where the
// MCP authorization specification says to look, in its order: the
// resource_metadata of the 401's challenge, the well-known URL at the
// endpoint's path, the well-known URL at the root (whose resource is the
// server's origin). A document naming another resource is refused and the
// next place is tried, as the go-sdk's flows do. It returns the first
// document accepted; nil and no error when no place serves one (a
// 2025-03-26 server, whose origin is its own authorization server); and a
// *RefusedMetadataError when documents were found and all refused.
func (h *Handler) resourceMetadata(ctx context.Context, serverURL string, challenges []oauthex.Challenge) (*oauthex.ProtectedResourceMetadata, error) {
	var refused *RefusedMetadataError
	for _, place := range metadataPlaces(serverURL, challenges) {
		named, found := h.namedResource(ctx, place.url)
		if !found {
			continue
		}
		if named != place.resource {
			if refused == nil {
				refused = &RefusedMetadataError{MetadataURL: place.url, Resource: named, Want: place.resource}
			}
			continue
		}
		// The go-sdk's reader checks the rest (the authorization servers'
		// URLs) as its flows do.
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, place.url, place.resource, h.opts.HTTPClient)
		if err == nil && prm != nil {
			return prm, nil
		}
	}
	if refused != nil {
		return nil, refused
	}
	return nil, nil
}

type metadataPlace struct{ url, resource string }

// metadataPlaces lists where protected resource metadata may be, with the
// resource each document must name.
func metadataPlaces(serverURL string, challenges []oauthex.Challenge) []metadataPlace {
	var out []metadataPlace
	for _, c := range challenges {
		if u := c.Params["resource_metadata"]; u != "" {
			out = append(out, metadataPlace{u, serverURL})
			break
		}
	}
	ru, err := url.Parse(serverURL)
	if err != nil {
		return out
	}
	mu := *ru
	mu.RawQuery, mu.Fragment = "", ""
	mu.Path = "/.well-known/oauth-protected-resource/" + strings.TrimLeft(ru.Path, "/")
	out = append(out, metadataPlace{mu.String(), serverURL})
	mu.Path = "/.well-known/oauth-protected-resource"
	origin := *ru
	origin.Path, origin.RawPath = "", ""
	return append(out, metadataPlace{mu.String(), origin.String()})
}

// namedResource fetches a metadata document and returns the resource it
// names; found is false when there is no readable document there.
func (h *Handler) namedResource(ctx context.Context, metadataURL string) (resource string, found bool) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, metadataURL, nil)
	if err != nil {
		return "", false
	}
	req.Header.Set("Accept", "application/json")
	resp, err := h.opts.HTTPClient.Do(req)
	if err != nil {
		return "", false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		return "", false
	}
	var doc struct {
		Resource *string `json:"resource"`
	}
	if json.NewDecoder(io.LimitReader(resp.Body, maxMetadataBytes)).Decode(&doc) != nil || doc.Resource == nil {
		return "", false
	}
	return *doc.Resource, true
}
