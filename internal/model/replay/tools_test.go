package replay

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// fileExchanges are the exchanges of testdata/cassette.yaml.
func fileExchanges(t *testing.T) []Exchange {
	return []Exchange{
		{Request: body(t, "0", tools, sys, question), Status: 200, Response: toolCallAnswer, Latency: 812431 * time.Microsecond},
		{Request: body(t, "0", tools, sys, question, call, result), Status: 200, Response: finalAnswer, Latency: 95 * time.Millisecond},
		{
			Request: body(t, "0", tools, sys, `{"role":"user","content":"Open a ticket."}`), Status: 500, Latency: time.Second,
			Response: []byte(`{"error":{"code":500,"message":"The model produced output that does not match the expected peg-native format","type":"server_error"}}`),
		},
		{Request: body(t, "0", "", `{"role":"user","content":"hi"}`), Status: 500, Response: []byte("upstream died\n"), Latency: time.Millisecond},
	}
}

// TestCassetteVersion1StillReplays replays testdata/cassette-v1.yaml, the
// golden file as version 1 wrote it (the tools in every request), with
// the requests of TestCassetteFile; appending to it (fallback) writes the
// whole file as version 2.
func TestCassetteVersion1StillReplays(t *testing.T) {
	exchanges := fileExchanges(t)
	for _, mode := range []Mode{Replay, Fallback} {
		t.Run(string(mode), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "v1.yaml")
			data, err := os.ReadFile(filepath.Join("testdata", "cassette-v1.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(data), "hosteval_cassette: 1\n") {
				t.Fatal("testdata/cassette-v1.yaml is not a version 1 cassette")
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := Open(path, mode)
			if err != nil {
				t.Fatal(err)
			}
			for i, ex := range exchanges {
				got, ok, err := r.Find(ex.Request)
				if err != nil || !ok {
					t.Fatalf("Find(request %d) = %v, %v", i+1, ok, err)
				}
				if got.Status != ex.Status || got.Latency != ex.Latency {
					t.Errorf("request %d: status, latency = %d, %s; want %d, %s", i+1, got.Status, got.Latency, ex.Status, ex.Latency)
				}
			}
			if mode != Fallback {
				return
			}
			next := Exchange{Request: body(t, "0", tools, `{"role":"user","content":"And jump-prod-03?"}`), Status: 200, Response: finalAnswer}
			if err := r.Add(next); err != nil {
				t.Fatal(err)
			}
			data, err = os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(data), "[cmdb] Get one asset"); !strings.Contains(string(data), "hosteval_cassette: 2\n") || n != 1 {
				t.Errorf("after an append: a version 2 file with the tools once, got get_asset's description %d times:\n%s", n, data)
			}
		})
	}
}

// catalog57 is a catalog of 57 real tools (the npm peers' servers, as
// the host renders them) and the same with one description changed.
func catalog57(t *testing.T) (tools, changed string) {
	data, err := os.ReadFile(filepath.Join("..", "..", "catalog", "testdata", "peers138.json"))
	if err != nil {
		t.Fatal(err)
	}
	var all []json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		t.Fatal(err)
	}
	if len(all) < 57 {
		t.Fatalf("peers138.json has %d tools, want 57 or more", len(all))
	}
	b, err := json.Marshal(all[:57])
	if err != nil {
		t.Fatal(err)
	}
	tools = string(b)
	changed = strings.Replace(tools, "Echoes back the input string", "Echoes the input string back", 1)
	if changed == tools {
		t.Fatal("the catalog has no echo tool to change")
	}
	return tools, changed
}

// TestCassetteKeepsEachToolsArrayOnce records a case of three exchanges
// over a catalog of 57 real tools: version 2 keeps the catalog once, the
// file a third of version 1's or less, and a request whose tools differ
// adds a second entry; every request replays.
func TestCassetteKeepsEachToolsArrayOnce(t *testing.T) {
	tools57, changed := catalog57(t)
	exchanges := []Exchange{
		{Request: body(t, "0", tools57, sys, question), Status: 200, Response: toolCallAnswer, Latency: 812 * time.Millisecond},
		{Request: body(t, "0", tools57, sys, question, call, result), Status: 200, Response: finalAnswer, Latency: 95 * time.Millisecond},
		{Request: body(t, "0", tools57, sys, question, call, result, `{"role":"user","content":"Thanks."}`), Status: 200, Response: finalAnswer, Latency: 90 * time.Millisecond},
	}
	path := filepath.Join(t.TempDir(), "case.yaml")
	c, err := Open(path, Record)
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range exchanges {
		if err := c.Add(ex); err != nil {
			t.Fatal(err)
		}
	}
	v2, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v1, err := encodeVersion(c.exchanges, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("3 exchanges over 57 tools: version 1 %d bytes, version 2 %d bytes (%.2f)", len(v1), len(v2), float64(len(v2))/float64(len(v1)))
	if 3*len(v2) > len(v1) {
		t.Errorf("version 2 is %d bytes, version 1 %d: want a third or less", len(v2), len(v1))
	}
	if n := strings.Count(string(v2), "name: everything__echo\n"); n != 1 {
		t.Errorf("the echo tool is written %d times, want once", n)
	}
	if n := len(regexp.MustCompile(`(?m)^      tools: !tools [0-9a-f]+$`).FindAllString(string(v2), -1)); n != 3 {
		t.Errorf("%d requests name their tools, want 3", n)
	}

	// A request with one description changed keeps a second array.
	if err := c.Add(Exchange{Request: body(t, "0", changed, sys, question), Status: 200, Response: toolCallAnswer}); err != nil {
		t.Fatal(err)
	}
	v2, err = os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(v2), "name: everything__echo\n"); n != 2 {
		t.Errorf("after a changed catalog the echo tool is written %d times, want twice", n)
	}
	r, err := Open(path, Replay)
	if err != nil {
		t.Fatal(err)
	}
	for i, ex := range append(exchanges, Exchange{Request: body(t, "0", changed, sys, question)}) {
		if _, ok, err := r.Find(ex.Request); err != nil || !ok {
			t.Errorf("Find(request %d) = %v, %v", i+1, ok, err)
		}
	}
}
