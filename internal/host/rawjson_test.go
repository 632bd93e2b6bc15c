package host

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"testing"
)

func TestTraceparent(t *testing.T) {
	for _, step := range []int{0, 1, 9, 10, 255, 256, 1 << 20, 1<<63 - 1, -1} {
		want := fmt.Sprintf("00-%s-%016x-01", "4bf92f3577b34da6a3ce929d0e0e4736", step)
		if got := traceparent("4bf92f3577b34da6a3ce929d0e0e4736", step); got != want {
			t.Errorf("traceparent(step %d) = %q, want %q", step, got, want)
		}
	}
}

// sentResultCases are results as servers send them, and the unusual
// spellings readSentResult leaves to encoding/json.
var sentResultCases = []string{
	`{"content":[{"type":"text","text":"ok \"quoted\" {not a brace}"}],"structuredContent":{"a":[1,2,{"b":null}]},"resultType":"complete"}`,
	`{"resultType":"input_required","inputRequests":{"q":{"method":"elicitation/create"}},"requestState":"c3RhdGU="}`,
	`{"resultType":"input_required","requestState":{"n":1, "s":"x"}}`,
	` { "resultType" : "complete" , "requestState" : null } `,
	`{"resultType":null,"requestState":"a"}`,
	`{"resultType":"a","resultType":"b"}`,
	`{"ResultType":"odd"}`,
	`{"resultTYPE":"odd","requeststate":"s"}`,
	`{"result\u0054ype":"escaped"}`,
	`{"resultType":"\u0063omplete"}`,
	`{"resultType":7}`,
	`{"resultType":["x"]}`,
	`{}`,
	`[]`,
	`null`,
	`{"content":[]}`,
	`{"isError":true,"content":[{"type":"text","text":"\\"}]}`,
}

// TestReadSentResult: what readSentResult reads is what encoding/json
// decodes.
func TestReadSentResult(t *testing.T) {
	for _, raw := range sentResultCases {
		checkSentResult(t, []byte(raw))
	}
}

func checkSentResult(t *testing.T, raw []byte) {
	t.Helper()
	var want struct {
		ResultType   *string         `json:"resultType"`
		RequestState json.RawMessage `json:"requestState"`
	}
	json.Unmarshal(raw, &want)
	for _, paths := range []Paths{PathsFast, PathsSDK} {
		got := readSentResult(raw, paths)
		if got.Typed != (want.ResultType != nil) || (got.Typed && got.ResultType != *want.ResultType) {
			t.Fatalf("%s (%s): resultType %q (typed %v), want %v", raw, paths, got.ResultType, got.Typed, deref(want.ResultType))
		}
		if !sameState(got.RequestState, want.RequestState) {
			t.Fatalf("%s (%s): requestState %q, want %q", raw, paths, got.RequestState, want.RequestState)
		}
	}
}

// sameState compares requestStates as the call reads them: absent and
// null are alike.
func sameState(a, b json.RawMessage) bool {
	norm := func(s json.RawMessage) string {
		if string(s) == "null" {
			return ""
		}
		return string(s)
	}
	return norm(a) == norm(b)
}

func deref(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// FuzzReadSentResult: for any valid JSON text, readSentResult reads what
// encoding/json decodes.
func FuzzReadSentResult(f *testing.F) {
	for _, raw := range sentResultCases {
		f.Add([]byte(raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		checkSentResult(t, raw)
	})
}

// argumentsCases are arguments as models write them, and the spellings
// flatArguments leaves to the decoder.
var argumentsCases = []string{
	`{"hostname": "jump-prod-02"}`,
	`{"service":"customer-db","env":"prod","limit":2,"dry":false,"x":null,"t":true}`,
	` { "a" : -0.5e+3 , "b" : 0 , "a" : "again" } `,
	`{}`, `{ }`, ` {}  `,
	`{"nested": {"a": 1}}`, `{"list": [1, 2]}`, `{"esc": "a\"b"}`, `{"e\u0073c": 1}`, `{"u": "é 中"}`,
	`{"n": 01}`, `{"n": 1.}`, `{"n": .5}`, `{"n": -}`, `{"n": 1e}`, `{"n": tru}`, `{"n": nul}`,
	`{"a":1}}`, `{"a":1} x`, `{"a":1}{"b":2}`, `[1]`, `"s"`, `3`, `null`, `{"a":1,}`, `{"a" 1}`, `{"a":1`, "{\"tab\":\"a\tb\"}",
	"{\"bad\":\"\xff\"}",
}

// TestFlatArgumentsIsTheDecoders: what flatArguments reads is what the
// decoder reads.
func TestFlatArgumentsIsTheDecoders(t *testing.T) {
	for _, text := range argumentsCases {
		checkFlatArguments(t, text)
	}
	if _, ok := flatArguments(argumentsCases[1]); !ok {
		t.Errorf("flatArguments(%s) refused a flat object", argumentsCases[1])
	}
}

func checkFlatArguments(t *testing.T, text string) {
	t.Helper()
	fast, fastProblem := parseArguments(text, 1<<20, PathsFast)
	sdk, sdkProblem := parseArguments(text, 1<<20, PathsSDK)
	if !reflect.DeepEqual(fast, sdk) || fastProblem != sdkProblem {
		t.Fatalf("parseArguments(%q) = %#v %q, with paths sdk %#v %q", text, fast, fastProblem, sdk, sdkProblem)
	}
	got, ok := flatArguments(text)
	if !ok {
		return
	}
	want, problem := decodeArguments(text)
	if problem != "" {
		t.Fatalf("flatArguments(%q) = %v, but the decoder says %s", text, got, problem)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("flatArguments(%q) = %#v, want %#v", text, got, want)
	}
}

// FuzzFlatArguments: for any text, flatArguments reads what the decoder
// reads, or leaves it to the decoder.
func FuzzFlatArguments(f *testing.F) {
	for _, text := range argumentsCases {
		f.Add(text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		checkFlatArguments(t, text)
	})
}

// paramsCases are request params as the SDK writes them, and spellings
// rewriteParams leaves to the decoder.
var paramsCases = []string{
	`{"_meta":{"dev.hosteval/step":2,"progressToken":"hosteval-3"},"name":"open_ticket","arguments":{"host":"jump-prod-02","summary":"brute <force> & co"},"inputResponses":{"q":{"action":"accept","content":{"priority":"P1"}}},"requestState":"mangled"}`,
	`{"name":"open_ticket","arguments":{"b":1,"a":[1, 2]}}`,
	`{"cursor":"x","_meta":{}}`,
	` { "name" : "x" , "requestState" : "a" , "requestState" : "b" } `,
	`{"name":"x","name":"y"}`,
	`{"n\u0061me":"x"}`,
	"{\"bad\xff\":1}",
	"{\"sep\u2028\":1}",
	`{}`,
	`[]`,
	`{"a":tru}`,
}

// paramsRewrites are the fields the watch sets on the bytes.
var paramsRewrites = []map[string]json.RawMessage{
	{"requestState": json.RawMessage(`"\ud800 as sent"`)},
	{"requestState": json.RawMessage(` { "n" : [1, 2] } `)},
	{"cursor": json.RawMessage(`""`)},
}

// TestRewriteParamsIsTheDecoders: params rewritten on the bytes are what
// decoding them into a map, setting the fields and encoding it gives.
func TestRewriteParamsIsTheDecoders(t *testing.T) {
	for _, params := range paramsCases {
		for _, rw := range paramsRewrites {
			checkRewriteParams(t, []byte(params), rw)
		}
	}
	if _, ok := rewriteParams([]byte(paramsCases[0]), paramsRewrites[0]); !ok {
		t.Errorf("rewriteParams refused the SDK's params")
	}
}

func checkRewriteParams(t *testing.T, params []byte, rw map[string]json.RawMessage) {
	t.Helper()
	got, ok := rewriteParams(params, rw)
	if !ok {
		return
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(params, &m); err != nil {
		t.Fatalf("rewriteParams(%s) = %s, but it does not decode: %v", params, got, err)
	}
	maps.Copy(m, rw)
	want, err := marshalCompact(m)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("rewriteParams(%s, %s)\n got %s\nwant %s", params, rw, got, want)
	}
}

// FuzzRewriteParams: for any params the SDK could write, the rewrite on
// the bytes is the decoder's, or left to it.
func FuzzRewriteParams(f *testing.F) {
	for _, params := range paramsCases {
		f.Add([]byte(params), uint8(0))
	}
	f.Fuzz(func(t *testing.T, params []byte, which uint8) {
		if !json.Valid(params) {
			return // the SDK wrote them: valid JSON
		}
		checkRewriteParams(t, params, paramsRewrites[int(which)%len(paramsRewrites)])
	})
}

// toolsPageCases are tools/list results as servers send them, and the
// spellings the tool readers leave to encoding/json.
var toolsPageCases = []string{
	`{"tools":[{"name":"get_asset","description":"Look a host up.","inputSchema":{"type":"object","properties":{"hostname":{"type":"string","description":"e.g. \"jump-prod-02\""}},"required":["hostname"]},"annotations":{"readOnlyHint":true}}]}`,
	`{ "tools" : [ { "name" : "a" , "inputSchema" : { "type" : "object" } } , {"name":"b","execution":{"taskSupport":"required"}} ] , "nextCursor" : "c2" }`,
	"{\"tools\":[{\"name\":\"nl\",\"inputSchema\":{\n  \"type\": \"object\",\n\t\"properties\": {\"x y\": {\"description\": \"tab\\tin a string\"}}\n}}]}",
	`{"tools":[],"nextCursor":""}`,
	`{"tools":null,"nextCursor":null}`,
	`{"tools":[{"name":"x"}],"tools":[{"name":"y"}]}`,
	`{"Tools":[{"name":"x"}]}`,
	`{"tools":[{"Name":"x"}]}`,
	`{"tools":[{"n\u0061me":"x"}]}`,
	`{"tools":[{"name":"\u0078"}]}`,
	`{"tools":[{"name":7}]}`,
	`{"tools":[{"name":null,"execution":null,"inputSchema":null}]}`,
	`{"tools":[{"name":"x","execution":{"taskSupport":"optional","taskSupport":"required"}}]}`,
	`{"tools":[{"name":"x","execution":{"TaskSupport":"required"}}]}`,
	`{"tools":[{"name":"x","execution":"required"}]}`,
	`{"tools":[{"name":"x","execution":{"taskSupport":1}}]}`,
	`{"tools":[{"name":"x","inputSchema":true}]}`,
	`{"tools":[{"name":"x","inputSchema":{"a":1},"inputSchema":{"b":2}}]}`,
	`{"tools":[{"name":"x","INPUTSCHEMA":{"a":1}}]}`,
	`{"tools":["not a tool",3,null,[]]}`,
	`{"tools":{"name":"x"}}`,
	`{"nextCursor":7}`,
	`{"nextCursor":"a\"b"}`,
	"{\"tools\":[{\"name\":\"bad \xff\"}]}",
	`{}`,
	`[]`,
	`"tools"`,
}

// TestToolReadersAreTheDecoders: what the tool readers read of a
// tools/list result is what encoding/json decodes, and the usual shapes
// are read without it.
func TestToolReadersAreTheDecoders(t *testing.T) {
	for _, raw := range toolsPageCases {
		checkToolReaders(t, []byte(raw))
	}
	for _, raw := range toolsPageCases[:3] {
		if !readsWithoutDecoder(t, []byte(raw)) {
			t.Errorf("%s: left to encoding/json, want read from the bytes", raw)
		}
	}
	if spaceless([]byte(` {"a":1}`)) || spaceless([]byte(`{"a": 1}`)) || !spaceless([]byte(`{"a b":"c\td\"e "}`)) {
		t.Error("spaceless is wrong about whitespace outside strings")
	}
}

// readsWithoutDecoder reports whether every reader took raw's usual path.
func readsWithoutDecoder(t *testing.T, raw []byte) bool {
	t.Helper()
	page := [...]field{{name: "tools"}, {name: "nextCursor"}}
	if !readFields(raw, page[:]) {
		return false
	}
	ok := true
	elements(page[0].value, func(tool []byte) bool {
		head := [...]field{{name: "name"}, {name: "execution"}, {name: "inputSchema"}}
		ok = ok && readFields(tool, head[:])
		return true
	})
	return ok
}

func checkToolReaders(t *testing.T, raw []byte) {
	t.Helper()
	for _, paths := range []Paths{PathsFast, PathsSDK} {
		checkToolReadersOn(t, raw, paths)
	}
}

// checkToolReadersOn checks the readers of one path against encoding/json.
func checkToolReadersOn(t *testing.T, raw []byte, paths Paths) {
	t.Helper()
	var want toolsPage
	wantErr := json.Unmarshal(raw, &want)
	got, err := readToolsPage(raw, paths)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%s (%s): readToolsPage error %v, encoding/json's %v", raw, paths, err, wantErr)
	}
	if err != nil {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s (%s): readToolsPage = %q %v, want %q %v", raw, paths, got.Tools, deref(got.NextCursor), want.Tools, deref(want.NextCursor))
	}
	for _, tool := range got.Tools {
		var head struct {
			Name      string `json:"name"`
			Execution struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		}
		headErr := json.Unmarshal(tool, &head)
		name, support, ok := readToolHead(tool, paths)
		if ok != (headErr == nil) || ok && (name != head.Name || support != head.Execution.TaskSupport) {
			t.Fatalf("%s (%s): readToolHead = %q %q %v, want %q %q (error %v)", tool, paths, name, support, ok, head.Name, head.Execution.TaskSupport, headErr)
		}
		var schema struct {
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		schemaErr := json.Unmarshal(tool, &schema)
		s, err := readInputSchema(tool, paths)
		if (err != nil) != (schemaErr != nil) || string(s) != string(schema.InputSchema) {
			t.Fatalf("%s (%s): readInputSchema = %s (error %v), want %s (error %v)", tool, paths, s, err, schema.InputSchema, schemaErr)
		}
		if err == nil && json.Valid(s) {
			compacted, err := compactJSON(s)
			if err != nil || spaceless(s) != (string(compacted) == string(s)) {
				t.Fatalf("%s: spaceless %v, compacted %s", s, spaceless(s), compacted)
			}
		}
	}
}

// FuzzToolReaders: for any valid JSON text, the tool readers read what
// encoding/json decodes.
func FuzzToolReaders(f *testing.F) {
	for _, raw := range toolsPageCases {
		f.Add([]byte(raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		checkToolReaders(t, raw)
	})
}
