package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hosteval/hosteval/internal/goldenfile"
)

// tools is rendered the way the host renders it: indented, HTML characters
// unescaped.
const tools = `[
  {"type": "function", "function": {"name": "cmdb__get_asset", "description": "[cmdb] Get one asset by hostname, e.g. jump-prod-02 (a < b & c).",
    "parameters": {"type": "object", "properties": {"hostname": {"type": "string"}}, "required": ["hostname"]}}},
  {"type": "function", "function": {"name": "tickets__open_ticket", "description": "[tickets] Open a ticket.", "parameters": {"type": "object"}}}
]`

// body is a request as the openai model sends it.
func body(t testing.TB, temperature string, tools string, messages ...string) []byte {
	t.Helper()
	b := `{"messages":[` + strings.Join(messages, ",") + `],"model":"gpt-oss-120b"`
	if temperature != "" {
		b += `,"temperature":` + temperature
	}
	if tools != "" {
		b += `,"tool_choice":"auto","tools":` + tools
	}
	b += "}"
	if !json.Valid([]byte(b)) {
		t.Fatalf("test body is not JSON: %s", b)
	}
	return []byte(b)
}

const (
	sys      = `{"role":"system","content":"You are the help desk's assistant.\nAnswer in one sentence.\n"}`
	question = `{"role":"user","content":"Who owns jump-prod-02?"}`
	call     = `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"cmdb__get_asset","arguments":"{\"hostname\":\"jump-prod-02\"}"}}]}`
	result   = `{"role":"tool","tool_call_id":"call_1","content":"{\"hostname\":\"jump-prod-02\",\"owner\":\"platform\"}"}`
)

func completion(message, finish string) []byte {
	return []byte(`{"id":"chatcmpl-1","object":"chat.completion","created":1767225600,"model":"gpt-oss-120b","choices":[{"index":0,"message":` +
		message + `,"logprobs":null,"finish_reason":"` + finish + `"}],"usage":{"prompt_tokens":412,"total_tokens":449,"completion_tokens":37,"prompt_tokens_details":null}}`)
}

var (
	toolCallAnswer = completion(`{"role":"assistant","content":null,"reasoning_content":"The user wants the owner.\nCall cmdb.","tool_calls":[{"id":"chatcmpl-tool-9f","type":"function","function":{"name":"cmdb__get_asset","arguments":"{\"hostname\": \"jump-prod-02\"}"}}]}`, "tool_calls")
	finalAnswer    = completion(`{"role":"assistant","content":"The platform team owns jump-prod-02.","tool_calls":[]}`, "stop")
)

func TestKey(t *testing.T) {
	base := body(t, "0.2", tools, sys, question)
	tests := []struct {
		name string
		b    []byte
		same bool
	}{
		{"identical", body(t, "0.2", tools, sys, question), true},
		{"tools compacted", body(t, "0.2", strings.Join(strings.Fields(tools), " "), sys, question), true},
		{"html escaped", bytes.ReplaceAll(base, []byte("<"), []byte(`\u003c`)), true},
		{"indented", indent(t, base), true},
		{"temperature", body(t, "0", tools, sys, question), false},
		{"temperature written 0.20", body(t, "0.20", tools, sys, question), false},
		{"description", body(t, "0.2", strings.Replace(tools, "Get one asset", "Fetch one asset", 1), sys, question), false},
		{"message", body(t, "0.2", tools, sys, strings.Replace(question, "02", "03", 1)), false},
		{"key order", []byte(strings.Replace(string(base), `"messages":`, `"zz":1,"messages":`, 1)), false},
		{"no tools", body(t, "0.2", "", sys, question), false},
	}
	want, err := Key(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Key(tt.b)
			if err != nil {
				t.Fatal(err)
			}
			if (got == want) != tt.same {
				t.Errorf("Key equal to the base's = %v, want %v", got == want, tt.same)
			}
		})
	}
	if _, err := Key([]byte(`{"a":1} {}`)); err == nil {
		t.Error("Key of two JSON values: no error, want one")
	}
}

func indent(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	if err := json.Indent(&buf, b, "", "    "); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestCassetteFile pins the file format: what a reviewer reads in a diff.
func TestCassetteFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "case.yaml")
	c, err := Open(path, Record)
	if err != nil {
		t.Fatal(err)
	}
	exchanges := fileExchanges(t)
	for _, ex := range exchanges {
		if err := c.Add(ex); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "cassette.yaml")
	goldenfile.Check(t, golden, got)

	// Replaying it answers every request with what was recorded.
	r, err := Open(golden, Replay)
	if err != nil {
		t.Fatal(err)
	}
	for i, ex := range exchanges {
		got, ok, err := r.Find(indent(t, ex.Request))
		if err != nil || !ok {
			t.Fatalf("Find(request %d) = %v, %v", i+1, ok, err)
		}
		if got.Status != ex.Status || got.Latency != ex.Latency {
			t.Errorf("request %d: status, latency = %d, %s; want %d, %s", i+1, got.Status, got.Latency, ex.Status, ex.Latency)
		}
		if !jsonEqual(got.Response, ex.Response) && string(got.Response) != string(ex.Response) {
			t.Errorf("request %d: response = %s, want %s", i+1, got.Response, ex.Response)
		}
	}
	if rep, rec := r.Stats(); rep != 4 || rec != 0 {
		t.Errorf("Stats() = %d replayed, %d recorded; want 4, 0", rep, rec)
	}
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && cmp.Equal(x, y)
}

// TestCassetteRoundTrip writes text that YAML could misread and checks
// that every request reads back with its key.
func TestCassetteRoundTrip(t *testing.T) {
	texts := []string{
		"", " ", "true", "null", "123", "1e5", "0x1F", "~", "- item", "key: value", "# not a comment", "'quoted'", `"dq"`,
		"line one\nline two", "line one\nline two\n", "trailing \nspaces", "\nleading newline", " leading space\nx",
		"ends with two\n\n", "tab\there", "carriage\r\nreturn", "nul \x00 and bell \a", "bom \uFEFF", "emoji 🚲 and é",
		"ünïcödé\nline", "\u2028line separator", "a\\b", strings.Repeat("long ", 400), "{{template}}", "--- \n...",
	}
	for i, text := range texts {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			roundTrip(t, text)
		})
	}
}

func FuzzCassetteRoundTrip(f *testing.F) {
	f.Add("line one\nline two\n")
	f.Add("a: b\n- c")
	f.Fuzz(func(t *testing.T, text string) {
		roundTrip(t, text)
	})
}

func roundTrip(t *testing.T, text string) {
	t.Helper()
	content, _ := json.Marshal(text)
	req := body(t, "1.50", tools, `{"role":"user","content":`+string(content)+`,"n":12345678901234567890,"x":-0,"e":1E+5,"o":{},"a":[]}`)
	path := filepath.Join(t.TempDir(), "c.yaml")
	c, err := Open(path, Record)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Add(Exchange{Request: req, Status: 200, Response: completion(`{"role":"assistant","content":`+string(content)+`}`, "stop")}); err != nil {
		t.Fatalf("Add: %v", err)
	}
	r, err := Open(path, Replay)
	if err != nil {
		t.Fatal(err)
	}
	ex, ok, err := r.Find(req)
	if err != nil || !ok {
		data, _ := os.ReadFile(path)
		t.Fatalf("Find = %v, %v\n%s", ok, err, data)
	}
	var got struct {
		Choices []struct{ Message struct{ Content string } }
	}
	if err := json.Unmarshal(ex.Response, &got); err != nil || len(got.Choices) != 1 {
		t.Fatalf("response %s: %v", ex.Response, err)
	}
	var want string // text as JSON holds it (each invalid byte a U+FFFD)
	if err := json.Unmarshal(content, &want); err != nil {
		t.Fatal(err)
	}
	if got.Choices[0].Message.Content != want {
		t.Errorf("content = %q, want %q", got.Choices[0].Message.Content, want)
	}
}

func TestCassetteModes(t *testing.T) {
	dir := t.TempDir()
	first := body(t, "0", tools, sys, question)
	second := body(t, "0", tools, sys, question, call, result)

	if _, err := Open(filepath.Join(dir, "none.yaml"), Replay); err == nil || !strings.Contains(err.Error(), "not recorded yet") {
		t.Errorf("Open(missing, Replay) error = %v, want not recorded yet", err)
	}
	if _, err := Open(filepath.Join(dir, "x.yaml"), "playback"); err == nil {
		t.Error("Open with an unknown mode: no error")
	}

	// Fallback on a missing file: an empty cassette that records misses.
	path := filepath.Join(dir, "case.yaml")
	c, err := Open(path, Fallback)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := c.Find(first); ok || err != nil {
		t.Fatalf("Find in an empty fallback cassette = %v, %v; want a plain miss", ok, err)
	}
	if err := c.Add(Exchange{Request: first, Status: 200, Response: toolCallAnswer}); err != nil {
		t.Fatal(err)
	}

	// Fallback again: the first request replays, the second is recorded.
	c, err = Open(path, Fallback)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := c.Find(first); !ok || err != nil {
		t.Fatalf("Find(first) = %v, %v; want it replayed", ok, err)
	}
	if _, ok, _ := c.Find(second); ok {
		t.Fatal("Find(second) found before it was recorded")
	}
	if err := c.Add(Exchange{Request: second, Status: 200, Response: finalAnswer}); err != nil {
		t.Fatal(err)
	}
	if rep, rec := c.Stats(); rep != 1 || rec != 1 {
		t.Errorf("Stats() = %d, %d; want 1 replayed, 1 recorded", rep, rec)
	}

	// Replay: both are there; nothing may be added.
	r, err := Open(path, Replay)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range [][]byte{first, second} {
		if _, ok, err := r.Find(b); !ok || err != nil {
			t.Fatalf("Find = %v, %v; want replayed", ok, err)
		}
	}
	if err := r.Add(Exchange{Request: first, Status: 200, Response: finalAnswer}); err == nil {
		t.Error("Add in Replay mode: no error")
	}

	// Record starts afresh: the old exchanges are gone once it writes.
	rec, err := Open(path, Record)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := rec.Find(first); ok {
		t.Error("Record mode answered from the old cassette")
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "exchanges: []") {
		t.Errorf("a Record cassette closed with nothing recorded:\n%s\nwant an empty list", data)
	}
}

func TestCassetteRepeatedRequest(t *testing.T) {
	// The same request recorded twice (temperature > 0 gave two answers) is
	// answered in the order recorded, then the last again.
	path := filepath.Join(t.TempDir(), "c.yaml")
	c, err := Open(path, Record)
	if err != nil {
		t.Fatal(err)
	}
	req := body(t, "1", "", question)
	for _, a := range []string{"one", "two"} {
		if err := c.Add(Exchange{Request: req, Status: 200, Response: completion(`{"role":"assistant","content":"`+a+`"}`, "stop")}); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Open(path, Replay)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for range 3 {
		ex, _, err := r.Find(req)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(ex.Response[bytes.Index(ex.Response, []byte(`"content"`)):][11:14]))
	}
	if want := []string{"one", "two", "two"}; !cmp.Equal(got, want) {
		t.Errorf("answers = %q, want %q", got, want)
	}
}

func TestCassetteMiss(t *testing.T) {
	path := filepath.Join(t.TempDir(), "case.yaml")
	c, err := Open(path, Record)
	if err != nil {
		t.Fatal(err)
	}
	recorded := [][]byte{
		body(t, "0.2", tools, sys, question),
		body(t, "0.2", tools, sys, question, call, result),
	}
	for _, b := range recorded {
		if err := c.Add(Exchange{Request: b, Status: 200, Response: finalAnswer}); err != nil {
			t.Fatal(err)
		}
	}
	// The same exchanges as a version 1 cassette, which repeats the tools
	// in each request: its misses read the same.
	pathV1 := filepath.Join(t.TempDir(), "case-v1.yaml")
	v1, err := encodeVersion(c.exchanges, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pathV1, v1, 0o644); err != nil {
		t.Fatal(err)
	}
	changedResult := strings.Replace(result, "platform", "security", 1)
	tests := []struct {
		name    string
		before  int // requests found before this one
		req     []byte
		nearest int
		want    []string
	}{
		{
			name: "description changed", req: body(t, "0.2", strings.Replace(tools, "Get one asset", "Fetch one asset", 1), sys, question), nearest: 1,
			want: []string{`tool cmdb__get_asset: description changed: "[cmdb] Get one asset by hostname, e.g. jump-prod-02 (a < b & c)." -> "[cmdb] Fetch one asset by hostname, e.g. jump-prod-02 (a < b & c)."`},
		},
		{
			name: "parameters changed", req: body(t, "0.2", strings.Replace(tools, `"hostname": {"type": "string"}`, `"hostname": {"type": "integer"}`, 1), sys, question), nearest: 1,
			want: []string{`tool cmdb__get_asset: parameters.properties.hostname.type changed: "string" -> "integer"`},
		},
		{
			name: "tool added and removed", req: body(t, "0.2", strings.Replace(tools, "tickets__open_ticket", "tickets__list_tickets", 1), sys, question), nearest: 1,
			want: []string{"tool tickets__list_tickets: added", "tool tickets__open_ticket: removed"},
		},
		{
			name: "temperature", req: body(t, "0", tools, sys, question), nearest: 1,
			want: []string{"temperature 0.2 -> 0"},
		},
		{
			name: "a server answered differently", before: 1, req: body(t, "0.2", tools, sys, question, call, changedResult), nearest: 2,
			want: []string{`message 4 differs: content "{\"hostname\":\"jump-prod-02\",\"owner\":\"platform\"}" -> "{\"hostname\":\"jump-prod-02\",\"owner\":\"security\"}"`},
		},
		{
			name: "a long text is cut around the change", before: 1, nearest: 2,
			req:  body(t, "0.2", tools, sys, question, call, strings.Replace(result, "platform", "platform"+strings.Repeat(" and more", 20)+" (ops)", 1)),
			want: []string{`message 4 differs: content "...\"jump-prod-02\",\"owner\":\"platform\"}" -> "...\"jump-prod-02\",\"owner\":\"platform and more and more and more and ..."`},
		},
		{
			name: "another question", req: body(t, "0.2", tools, sys, `{"role":"user","content":"Who owns jump-prod-03? The one in the basement."}`), nearest: 1,
			want: []string{`message 2 differs: content "Who owns jump-prod-02?" -> "Who owns jump-prod-03? The one in the basement."`},
		},
		{
			name: "model and a new parameter", req: []byte(strings.Replace(string(body(t, "0.2", tools, sys, question)), `"gpt-oss-120b"`, `"gpt-oss-20b","max_tokens":256`, 1)), nearest: 1,
			want: []string{`model "gpt-oss-120b" -> "gpt-oss-20b"`, "max_tokens (absent) -> 256"},
		},
		{
			name: "one message more", before: 1, req: body(t, "0.2", tools, sys, question, call, result, `{"role":"user","content":"Thanks."}`), nearest: 2,
			want: []string{"5 messages, recorded 4"},
		},
	}
	for _, tt := range tests {
		for _, path := range []string{path, pathV1} {
			t.Run(tt.name+"/"+filepath.Base(path), func(t *testing.T) {
				testMiss(t, path, recorded, tt.before, tt.req, tt.nearest, tt.want)
			})
		}
	}
}

// testMiss replays the first before requests recorded in the cassette at
// path, then req, which must miss with the nearest request and the
// changes given.
func testMiss(t *testing.T, path string, recorded [][]byte, before int, req []byte, nearest int, want []string) {
	t.Helper()
	r, err := Open(path, Replay)
	if err != nil {
		t.Fatal(err)
	}
	for i := range before {
		if _, _, err := r.Find(recorded[i]); err != nil {
			t.Fatal(err)
		}
	}
	_, ok, err := r.Find(req)
	var miss *Miss
	if ok || !errors.As(err, &miss) {
		t.Fatalf("Find = %v, %v; want a *Miss", ok, err)
	}
	if miss.Nearest != nearest || miss.Request != before+1 || miss.Path != path {
		t.Errorf("Miss = request %d, nearest %d, path %s; want %d, %d, %s", miss.Request, miss.Nearest, miss.Path, before+1, nearest, path)
	}
	if diff := cmp.Diff(want, miss.Changes); diff != "" {
		t.Errorf("Changes mismatch (-want +got):\n%s", diff)
	}
	wantErr := fmt.Sprintf("cassette %s: request %d is not recorded; against recorded request %d: %s", path, before+1, nearest, strings.Join(want, "; "))
	if err.Error() != wantErr {
		t.Errorf("error = %s\nwant    %s", err, wantErr)
	}
}

func TestCassetteMissEmpty(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte("hosteval_cassette: 1\nexchanges: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path, Replay)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = r.Find(body(t, "0", "", question))
	if want := "cassette " + path + ": request 1 is not recorded (the cassette is empty); record it again with -record"; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
}

func TestCassetteBadFiles(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"not a mapping", "- 1\n", "not a cassette"},
		{"no version", "exchanges: []\n", "hosteval_cassette: version 0, want 1 to 2"},
		{"future version", "hosteval_cassette: 3\nexchanges: []\n", "version 3, want 1 to 2"},
		{"tools in version 1", "hosteval_cassette: 1\ntools: {}\nexchanges: []\n", "line 2: unknown field tools (a version 1 cassette)"},
		{"tools not a mapping", "hosteval_cassette: 2\ntools: []\nexchanges: []\n", "line 2: tools: want a mapping"},
		{"tools not a list", "hosteval_cassette: 2\ntools: {abc: {}}\nexchanges: []\n", "tools.abc: want a list of tools"},
		{"tools twice", "hosteval_cassette: 2\ntools: {abc: [], abc: []}\nexchanges: []\n", "tools.abc: given twice"},
		{"unknown tools", "hosteval_cassette: 2\ntools: {abc: []}\nexchanges:\n  - request: {tools: !tools abd}\n    status: 200\n    response: {}\n", "line 4: request.tools: no abd in the cassette's tools"},
		{"tools named elsewhere", "hosteval_cassette: 2\ntools: {abc: []}\nexchanges:\n  - request: {functions: !tools abc}\n    status: 200\n    response: {}\n", "request.functions: only tools may name the cassette's tools"},
		{"tools named deeper", "hosteval_cassette: 2\ntools: {abc: []}\nexchanges:\n  - request: {x: {tools: !tools abc}}\n    status: 200\n    response: {}\n", "!tools values have no JSON form"},
		{"unknown field", "hosteval_cassette: 1\nexchange: []\n", "line 2: unknown field exchange"},
		{"no response", "hosteval_cassette: 1\nexchanges:\n  - request: {model: m}\n    status: 200\n", "exchanges[0]: line 3: response: required"},
		{"alias", "hosteval_cassette: 1\nexchanges:\n  - request: &r {model: m}\n    status: 200\n    response: *r\n", "aliases are not allowed"},
		{"yaml number", "hosteval_cassette: 1\nexchanges:\n  - request: {n: 0x1F}\n    status: 200\n    response: {}\n", "0x1F is not a JSON number"},
		{"bad latency", "hosteval_cassette: 1\nexchanges:\n  - request: {}\n    status: 200\n    latency_ms: -1\n    response: {}\n", "latency_ms: want milliseconds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.yaml")
			if err := os.WriteFile(path, []byte(tt.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Open(path, Replay)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("Open error = %v, want it to name %s and contain %q", err, path, tt.want)
			}
		})
	}
}

func TestCassetteConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	c, err := Open(path, Fallback)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			req := body(t, "0", "", fmt.Sprintf(`{"role":"user","content":"q%d"}`, i))
			if _, ok, err := c.Find(req); ok || err != nil {
				t.Errorf("Find = %v, %v", ok, err)
			}
			if err := c.Add(Exchange{Request: req, Status: 200, Response: finalAnswer}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	r, err := Open(path, Replay)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		if _, ok, err := r.Find(body(t, "0", "", fmt.Sprintf(`{"role":"user","content":"q%d"}`, i))); !ok || err != nil {
			t.Errorf("request q%d: %v, %v", i, ok, err)
		}
	}
}

func TestCache(t *testing.T) {
	dir := t.TempDir()
	c, err := OpenCache(dir)
	if err != nil {
		t.Fatal(err)
	}
	req := body(t, "0", tools, sys, question)
	if _, ok := c.Get(testEndpoint, req); ok {
		t.Fatal("Get on an empty cache found something")
	}
	ex := Exchange{Request: req, Status: 200, Response: toolCallAnswer, Latency: 1500 * time.Microsecond}
	if err := c.Put(testEndpoint, ex); err != nil {
		t.Fatal(err)
	}
	got, ok := c.Get(testEndpoint, indent(t, req)) // the same request, written otherwise
	if !ok {
		t.Fatal("Get after Put: not found")
	}
	if got.Status != 200 || got.Latency != ex.Latency || !jsonEqual(got.Response, ex.Response) {
		t.Errorf("Get = %d, %s, %s; want 200, %s, the answer put", got.Status, got.Latency, got.Response, ex.Latency)
	}
	if !bytes.Contains(got.Response, []byte("<")) && bytes.Contains(ex.Response, []byte("<")) {
		t.Errorf("the answer was re-escaped: %s", got.Response)
	}

	// Another endpoint's answer to the same request is not an answer.
	if _, ok := c.Get("http://127.0.0.1:8001/v1/chat/completions", req); ok {
		t.Error("Get answered from another endpoint's entry")
	}

	// An entry whose request is not the one asked is not an answer, nor
	// is one of another endpoint under this one's key.
	canon, _ := Canonical(req)
	key := entryKey(testEndpoint, canon)
	other := body(t, "1", tools, sys, question)
	for _, e := range []entry{
		{Endpoint: endpointDigest(testEndpoint), Request: other, Status: 200, Response: finalAnswer},
		{Endpoint: endpointDigest("http://elsewhere/v1/chat/completions"), Request: canon, Status: 200, Response: finalAnswer},
	} {
		data, _ := json.Marshal(e)
		if err := os.WriteFile(c.file(key), data, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, ok := c.Get(testEndpoint, req); ok {
			t.Errorf("Get answered from the entry %s", data)
		}
	}
	if err := os.WriteFile(c.file(key), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Get(testEndpoint, req); ok {
		t.Error("Get answered from a corrupt entry")
	}
	if want := (CacheStats{Hits: 1, Misses: 5, Errors: 1}); c.Stats() != want {
		t.Errorf("Stats() = %+v, want %+v", c.Stats(), want)
	}
}

func TestCacheConcurrent(t *testing.T) {
	c, err := OpenCache(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			req := body(t, "0", "", fmt.Sprintf(`{"role":"user","content":"q%d"}`, i%4))
			if _, ok := c.Get(testEndpoint, req); !ok {
				if err := c.Put(testEndpoint, Exchange{Request: req, Status: 200, Response: finalAnswer}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	s := c.Stats()
	if s.Hits+s.Misses != 16 || s.Misses < 4 || s.Errors != 0 {
		t.Errorf("Stats() = %+v, want 16 lookups, at least 4 misses, no errors", s)
	}
	for i := range 4 {
		if _, ok := c.Get(testEndpoint, body(t, "0", "", fmt.Sprintf(`{"role":"user","content":"q%d"}`, i))); !ok {
			t.Errorf("q%d not cached", i)
		}
	}
}

func TestDefaultCacheDir(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/tmp/xdg")
	t.Setenv("HOME", "/tmp/home")
	dir, err := DefaultCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join("/tmp/xdg", "hosteval", "responses"); dir != want {
		t.Errorf("DefaultCacheDir() = %s, want %s", dir, want)
	}
}

// testEndpoint is the endpoint the cache tests' requests go to.
const testEndpoint = "http://127.0.0.1:8000/v1/chat/completions"
