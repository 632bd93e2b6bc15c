package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hosteval/hosteval/internal/catalog"
	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/scenario"
)

// catalogServers writes a servers file naming the cmdb and tickets fixture
// servers (built for the package by TestMain) and returns their folder.
func catalogServers(t *testing.T) (dir, serversFile string) {
	t.Helper()
	dir = fixtureBin
	serversFile = filepath.Join(t.TempDir(), "servers.yaml")
	yaml := "servers:\n  cmdb:\n    command: " + filepath.Join(dir, "cmdb") + "\n  tickets:\n    command: " + filepath.Join(dir, "tickets") + "\n"
	if err := os.WriteFile(serversFile, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, serversFile
}

// runCLI runs hosteval in-process, without signals.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }}
	code = runEnv(context.Background(), e, args)
	return code, out.String(), errOut.String()
}

func readCatalogString(t *testing.T, doc string) *catalog.Catalog {
	t.Helper()
	c, err := catalog.Read(strings.NewReader(doc))
	if err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	return c
}

// startServers starts a host on the servers of a servers file.
func startServers(t *testing.T, servers string) *host.Host {
	t.Helper()
	specs, err := scenario.LoadServers(servers)
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.Start(context.Background(), host.Options{Servers: specs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func TestCatalogCommand(t *testing.T) {
	dir, servers := catalogServers(t)

	code, doc, stderr := runCLI(t, "catalog", "-servers-file", servers, "-json")
	if code != exitOK {
		t.Fatalf("catalog -json: exit %d, stderr:\n%s", code, stderr)
	}
	whole := readCatalogString(t, doc)

	t.Run("the host's exact bytes", func(t *testing.T) {
		h := startServers(t, servers)
		defs := h.ToolDefs()
		if got, want := whole.Total.Bytes, len(h.ToolsJSON()); got != want {
			t.Errorf("total bytes = %d, want len(ToolsJSON()) = %d", got, want)
		}
		if got := (catalog.Size{Bytes: whole.Total.Bytes, Tokens: whole.Total.Tokens}); got != (catalog.Size{Bytes: defs.Bytes, Tokens: defs.Tokens}) {
			t.Errorf("total = %+v, want the host's ToolDefs %+v", got, defs)
		}
		type tool struct {
			Name, Server  string
			Bytes, Tokens int
		}
		var want, got []tool
		for _, ht := range h.Offered() {
			want = append(want, tool{ht.Name, ht.Server, ht.Bytes, ht.Tokens()})
		}
		for _, ct := range whole.Tools {
			got = append(got, tool{ct.Name, ct.Server, ct.Bytes, ct.Tokens})
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("tools (-host +catalog):\n%s", diff)
		}
		if len(got) != 4 {
			t.Errorf("%d tools, want cmdb's 2 and tickets' 2", len(got))
		}
	})

	t.Run("-as listed", func(t *testing.T) {
		code, doc, stderr := runCLI(t, "catalog", "-servers-file", servers, "-as", "listed", "-json")
		if code != exitOK {
			t.Fatalf("exit %d, stderr:\n%s", code, stderr)
		}
		listed := readCatalogString(t, doc)
		if listed.Form != catalog.FormListed || whole.Form != catalog.FormSent {
			t.Errorf("forms %q and %q, want listed and sent", listed.Form, whole.Form)
		}
		h := startServers(t, servers)
		var names []string
		for i, ht := range h.Offered() {
			ct := listed.Tools[i]
			names = append(names, ct.Server+" "+ct.Name)
			def, err := ht.ListedDef()
			if err != nil {
				t.Fatal(err)
			}
			if ct.Bytes != len(def) {
				t.Errorf("%s: %d bytes, want the listed definition's %d", ct.Name, ct.Bytes, len(def))
			}
			// The server's own name and description, its schema as sent:
			// go-sdk servers write "type" first, a re-encoded map would not.
			var fn struct {
				Function struct {
					Name        string          `json:"name"`
					Description string          `json:"description"`
					Parameters  json.RawMessage `json:"parameters"`
				} `json:"function"`
			}
			json.Unmarshal(def, &fn)
			if fn.Function.Name != ht.MCP.Name || fn.Function.Description != ht.MCP.Description || !strings.HasPrefix(string(fn.Function.Parameters), `{"type":"object"`) {
				t.Errorf("%s listed as %s", ht.Name, def)
			}
		}
		if diff := cmp.Diff([]string{"cmdb find_assets", "cmdb get_asset", "tickets list_tickets", "tickets open_ticket"}, names); diff != "" {
			t.Errorf("tools (-want +got):\n%s", diff)
		}
		// Without the prefix and with shorter names, listed costs less.
		if listed.Total.Bytes >= whole.Total.Bytes || listed.Total.Tokens >= whole.Total.Tokens {
			t.Errorf("listed %d bytes, %d tokens; sent %d, %d: want listed smaller", listed.Total.Bytes, listed.Total.Tokens, whole.Total.Bytes, whole.Total.Tokens)
		}
		code, out, _ := runCLI(t, "catalog", "-servers-file", servers, "-as", "listed")
		if code != exitOK || !strings.Contains(out, "counted as listed: the servers' own tool names and descriptions") || strings.Contains(out, "cmdb__") {
			t.Errorf("exit %d; want the listed form named and no server__ names:\n%s", code, out)
		}
	})

	t.Run("-add is a server like the file's", func(t *testing.T) {
		code, fromFile, stderr := runCLI(t, "catalog", "-servers-file", servers, "-servers", "cmdb", "-json")
		if code != exitOK {
			t.Fatalf("exit %d, stderr:\n%s", code, stderr)
		}
		code, added, stderr := runCLI(t, "catalog", "-servers-file", filepath.Join(dir, "missing.yaml"), "-add", "cmdb="+filepath.Join(dir, "cmdb"), "-json")
		if code != exitOK {
			t.Fatalf("exit %d, stderr:\n%s", code, stderr)
		}
		if diff := cmp.Diff(fromFile, added); diff != "" {
			t.Errorf("-add cmdb=... differs from -servers cmdb (-servers +add):\n%s", diff)
		}
	})

	t.Run("text", func(t *testing.T) {
		code, out, stderr := runCLI(t, "catalog", "-servers-file", servers, "-requests", "5")
		if code != exitOK || stderr != "" {
			t.Fatalf("exit %d, stderr:\n%s", code, stderr)
		}
		for _, want := range []string{
			"Tools\n", "Servers\n", "Findings\n", "cmdb__get_asset", "tickets__open_ticket",
			"4 tools offered: " + strconv.Itoa(whole.Total.Bytes) + " bytes, " + strconv.Itoa(whole.Total.Tokens) + " tokens",
			"per turn of 5 model requests: " + strconv.Itoa(5*whole.Total.Tokens) + " tokens",
			"server_prefix",
			`counted as sent: the tools array hosteval sends, with server__tool names, "[server] " before each description`,
		} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("-before", func(t *testing.T) {
		before := filepath.Join(t.TempDir(), "catalog.json")
		if err := os.WriteFile(before, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, stderr := runCLI(t, "catalog", "-servers-file", servers, "-tools", "cmdb__get_asset,tickets__open_ticket", "-before", before, "-json")
		if code != exitOK {
			t.Fatalf("exit %d, stderr:\n%s", code, stderr)
		}
		var got struct {
			Compare *catalog.Comparison `json:"compare"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		var changes []string
		for _, tc := range got.Compare.Tools {
			changes = append(changes, tc.Change+" "+tc.Name)
		}
		if diff := cmp.Diff([]string{"removed cmdb__find_assets", "removed tickets__list_tickets"}, changes); diff != "" {
			t.Errorf("changes (-want +got):\n%s", diff)
		}
		if got.Compare.Unchanged != 2 || got.Compare.Before.Bytes != whole.Total.Bytes {
			t.Errorf("compare = %+v, want 2 unchanged and %d bytes before", got.Compare, whole.Total.Bytes)
		}

		code, out, _ = runCLI(t, "catalog", "-servers-file", servers, "-before", before)
		if code != exitOK || !strings.Contains(out, "Compared with before") || !strings.Contains(out, "4 unchanged, 0 changed, 0 added, 0 removed") {
			t.Errorf("exit %d; want a comparison with 4 unchanged:\n%s", code, out)
		}
	})

	t.Run("errors", func(t *testing.T) {
		notCatalog := filepath.Join(t.TempDir(), "summary.json")
		if err := os.WriteFile(notCatalog, []byte(`{"schema":1,"run":{}}`), 0o644); err != nil {
			t.Fatal(err)
		}
		sent := filepath.Join(t.TempDir(), "sent.json")
		if err := os.WriteFile(sent, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name   string
			args   []string
			code   int
			stderr string
		}{
			{"argument", []string{"extra"}, exitUsage, `catalog: unexpected argument "extra"`},
			{"requests", []string{"-requests", "0"}, exitUsage, "-requests 0: want 1 or more"},
			{"long tokens", []string{"-long-tokens", "-1"}, exitUsage, "-long-tokens -1: want 1 or more"},
			{"add without command", []string{"-add", "x="}, exitUsage, `invalid value "x=" for flag -add: server x: no command`},
			{"add without name", []string{"-add", "/bin/true"}, exitUsage, "want name=command [args]"},
			{"add twice", []string{"-add", "x=a", "-add", "x=b"}, exitUsage, "server x is added twice"},
			{"add a file's name", []string{"-servers", "cmdb", "-add", "cmdb=" + filepath.Join(dir, "cmdb")}, exitUsage, "-add cmdb: the servers file has a server of that name"},
			{"before missing", []string{"-before", filepath.Join(dir, "nope.json")}, exitUsage, "-before: open"},
			{"before not a catalog", []string{"-before", notCatalog}, exitUsage, `want "hosteval.catalog"`},
			{"before of another form", []string{"-as", "listed", "-before", sent}, exitUsage, "was counted as sent, and this catalog as listed: compare like with like (-as sent)"},
			{"as", []string{"-as", "raw"}, exitUsage, `-as "raw": want sent or listed`},
			{"protocol", []string{"-protocol", "1999"}, exitUsage, "-protocol"},
			{"unknown tool", []string{"-tools", "cmdb__nope"}, exitUsage, "-tools names tools no server offers: cmdb__nope"},
			{"server does not start", []string{"-servers", "cmdb", "-add", "broken=" + filepath.Join(dir, "no-such-server")}, exitInfra, "server broken: "},
			{"no servers file", []string{"-servers-file", filepath.Join(dir, "missing.yaml")}, exitUsage, "missing.yaml"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				args := append([]string{"catalog", "-servers-file", servers}, tt.args...)
				code, out, stderr := runCLI(t, args...)
				if code != tt.code || !strings.Contains(stderr, tt.stderr) {
					t.Errorf("exit %d, stderr:\n%s\nwant exit %d and %q", code, stderr, tt.code, tt.stderr)
				}
				if out != "" {
					t.Errorf("stdout = %q, want nothing", out)
				}
			})
		}
	})
}

func TestAddFlag(t *testing.T) {
	var a addFlag
	for _, v := range []string{"everything=node 'my dir/index.js' stdio", "fs=npx -y server-filesystem /tmp"} {
		if err := a.Set(v); err != nil {
			t.Fatal(err)
		}
	}
	want := addFlag{
		{Name: "everything", Command: "node", Args: []string{"my dir/index.js", "stdio"}},
		{Name: "fs", Command: "npx", Args: []string{"-y", "server-filesystem", "/tmp"}},
	}
	if diff := cmp.Diff(want, a); diff != "" {
		t.Errorf("-add (-want +got):\n%s", diff)
	}
	if got := a.String(); got != "everything,fs" {
		t.Errorf("String() = %q, want everything,fs", got)
	}
	for _, bad := range []string{"no-equals", "=cmd", "a b=cmd", "x=   "} {
		if err := a.Set(bad); err == nil {
			t.Errorf("Set(%q) = nil, want an error", bad)
		}
	}
}
