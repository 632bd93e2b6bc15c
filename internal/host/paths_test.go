package host

import (
	"context"
	"os"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestPaths: HOSTEVAL_TRANSPORT is read once, when the host starts, into
// its options; an option set explicitly wins; a value that is neither
// fast nor sdk stops the host; and sdk connects a stdio server through the
// go-sdk's own IOTransport.
func TestPaths(t *testing.T) {
	tests := []struct {
		env     string
		option  Paths
		want    Paths
		wantErr string
	}{
		{"", "", PathsFast, ""},
		{"fast", "", PathsFast, ""},
		{"sdk", "", PathsSDK, ""},
		{"sdk", PathsFast, PathsFast, ""},
		{"", PathsSDK, PathsSDK, ""},
		{"SDK", "", "", `HOSTEVAL_TRANSPORT="SDK" (or Options.Paths): want "fast" or "sdk"`},
	}
	for _, tt := range tests {
		t.Run(tt.env+"/"+string(tt.option), func(t *testing.T) {
			t.Setenv(PathsEnv, tt.env)
			h, err := Start(context.Background(), Options{Paths: tt.option})
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("Start: error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			if h.opts.Paths != tt.want {
				t.Errorf("paths %q, want %q", h.opts.Paths, tt.want)
			}
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			defer w.Close()
			transport, _ := h.stdio(r, w, nil)
			sdk, isSDK := transport.(*sdkPipe)
			if isSDK {
				_, isSDK = sdk.Transport.(*mcp.IOTransport)
			}
			_, isOwn := transport.(*stdioTransport)
			if isSDK != (tt.want == PathsSDK) || isOwn != (tt.want == PathsFast) {
				t.Errorf("stdio transport %T, want the %s one", transport, tt.want)
			}
		})
	}
}
