package model

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// vllmToolCall is a completion as vLLM writes one that calls a tool.
const vllmToolCall = `{"id":"chatcmpl-7f1c","object":"chat.completion","created":1764662400,"model":"gpt-oss-120b",` +
	`"choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":null,"annotations":null,"audio":null,"function_call":null,` +
	`"tool_calls":[{"id":"chatcmpl-tool-1","type":"function","function":{"name":"cmdb__get_asset","arguments":"{\"hostname\": \"jump-prod-02\"}"}}],` +
	`"reasoning_content":null},"logprobs":null,"finish_reason":"tool_calls","stop_reason":null}],` +
	`"usage":{"prompt_tokens":480,"total_tokens":492,"completion_tokens":12,"prompt_tokens_details":{"cached_tokens":448}},"prompt_logprobs":null}`

// completionSeeds are answers the fast reader reads (the first ones) and
// answers it leaves to the library.
var completionSeeds = []string{
	vllmToolCall,
	`{"choices":[{"message":{"role":"assistant","content":"Camille Michel owns it.\n\u00e9\ud83d\ude00"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`,
	`{"choices":[{"message":{"content":"","refusal":"I can't.","tool_calls":null},"finish_reason":"stop"}],"usage":null}`,
	`{"choices":[{"message":null,"finish_reason":"length"}]}`,
	`{"choices":[{"finish_reason":"stop"}]}`,
	`{"choices":[]}`,
	`{}`,
	`{"choices":[{"message":{"reasoning":"Look it up.","content":"a"}},{"message":{"reasoning_content":7}}]}`,
	`{"choices":[{"message":{"reasoning_content":"r\u00e9","content":"\ud800x\udc00\ud83d\ude00\ud83dA"}}]}`,
	"{\"choices\":[{\"message\":{\"content\":\"\xff\xfe bad utf-8\",\"reasoning\":\"\xff\"}}]}",
	`{"choices":[{"message":{"tool_calls":[{"function":{"name":"a","arguments":"{}"}},{"id":"c2","type":"custom","custom":{"name":"b","input":"x"}}]}}]}`,
	`{"choices":[{"message":{"tool_calls":[{"id":1,"function":{"name":"a"}}]}}]}`,
	`{"choices":[{"message":{"content":1.5}}],"usage":{"total_tokens":"12"}}`,
	`{"choices":[{"message":{"content":"a","content":"b"}}]}`,
	`{"Choices":[{"message":{"content":"a"}}],"choices":[{"message":{"content":"b"}}]}`,
	`{"choices":[{"MESSAGE":{"reasoning":"x"},"message":{"content":"b"}}]}`,
	`{"choices":[{"message":"text"}]}`,
	`{"choices":[null,{"message":{}}]}`,
	`{"choices":{"0":{}}}`,
	`{"choices":null}`,
	`[1,2]`,
	`null`,
	`{"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":1e3,"completion_tokens":12345678901234567,"total_tokens":-0,"prompt_tokens_details":null}}`,
	`{"choices":[{"message":{"con\u0074ent":"x","tool_calls":[{"id":"a","type":"function","function":null}]}}]}`,
	` { "choices" : [ { "message" : { "content" : "\"\\\/\b\f\n\r\t" } , "finish_reason" : null } ] , "usage" : { } } `,
}

// FuzzReadCompletion holds the hand-written completion reader
// (readCompletion) to openai-go's decoder (libraryCompletion): whatever
// the answer, parseCompletion reads the same fields and says the same
// error both ways.
func FuzzReadCompletion(f *testing.F) {
	for _, s := range completionSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		got, gerr := parseCompletion([]byte(data), false)
		want, werr := parseCompletion([]byte(data), true)
		if fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Fatalf("errors differ:\nfast:    %v\nlibrary: %v", gerr, werr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("answers differ:\nfast:    %+v\nlibrary: %+v", got, want)
		}
	})
}

// TestReadCompletion: the answers endpoints send are read by hand, not
// left to the library, and read as they were written.
func TestReadCompletion(t *testing.T) {
	tests := []struct {
		data string
		want chatAnswer
	}{
		{vllmToolCall, chatAnswer{
			choices: 1, message: true, finish: "tool_calls",
			calls: []answerCall{{id: "chatcmpl-tool-1", typ: "function", name: "cmdb__get_asset", arguments: `{"hostname": "jump-prod-02"}`}},
			usage: &answerUsage{prompt: 480, completion: 12, total: 492, cached: 448},
		}},
		{completionSeeds[1], chatAnswer{
			choices: 1, message: true, finish: "stop", content: "Camille Michel owns it.\né😀",
			usage: &answerUsage{prompt: 1, completion: 2, total: 3},
		}},
		{completionSeeds[2], chatAnswer{choices: 1, message: true, finish: "stop", refusal: "I can't."}},
		{completionSeeds[3], chatAnswer{choices: 1, messageRaw: "null", finish: "length"}},
		{completionSeeds[4], chatAnswer{choices: 1, finish: "stop"}},
		{`{"choices":[{"message":{"reasoning_content":"Look it up.","content":"a"}}]}`, chatAnswer{choices: 1, message: true, content: "a", reasoning: "Look it up."}},
	}
	for _, tt := range tests {
		got, ok := readCompletion([]byte(tt.data))
		if !ok {
			t.Errorf("readCompletion(%s) left it to the library", tt.data)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("readCompletion(%s)\n got %+v\nwant %+v", tt.data, got, tt.want)
		}
	}
}

// BenchmarkParseCompletion: a tool call's answer read by hand and by
// openai-go's decoder.
func BenchmarkParseCompletion(b *testing.B) {
	data := []byte(vllmToolCall)
	if !json.Valid(data) {
		b.Fatal("not JSON")
	}
	for _, library := range []bool{false, true} {
		b.Run(fmt.Sprintf("library=%v", library), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := parseCompletion(data, library); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
