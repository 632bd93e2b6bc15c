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
	got := readSentResult(raw)
	if got.Typed != (want.ResultType != nil) || (got.Typed && got.ResultType != *want.ResultType) {
		t.Fatalf("%s: resultType %q (typed %v), want %v", raw, got.ResultType, got.Typed, deref(want.ResultType))
	}
	if !sameState(got.RequestState, want.RequestState) {
		t.Fatalf("%s: requestState %q, want %q", raw, got.RequestState, want.RequestState)
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

// TestRewriteParamsIsTheDecoders: params rewritten on the bytes are what
// decoding them into a map, setting the fields and encoding it gives.
func TestRewriteParamsIsTheDecoders(t *testing.T) {
	rewrites := []map[string]json.RawMessage{
		{"requestState": json.RawMessage(`"\ud800 as sent"`)},
		{"requestState": json.RawMessage(` { "n" : [1, 2] } `)},
		{"cursor": json.RawMessage(`""`)},
	}
	for _, params := range paramsCases {
		for _, rw := range rewrites {
			got, ok := rewriteParams([]byte(params), rw)
			if !ok {
				continue
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal([]byte(params), &m); err != nil {
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
	}
	if _, ok := rewriteParams([]byte(paramsCases[0]), rewrites[0]); !ok {
		t.Errorf("rewriteParams refused the SDK's params")
	}
}
