package model

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// fuzzRequest builds a request from a fuzzer's values: shape's bits
// choose which messages are there and which fields are empty.
func fuzzRequest(shape uint8, text, id, name, args, tools string) Request {
	var msgs []Message
	if shape&1 != 0 {
		msgs = append(msgs, Message{Role: RoleSystem, Content: text})
	}
	msgs = append(msgs, Message{Role: RoleUser, Content: text + id})
	call := ToolCall{ID: id, Name: name, Arguments: args}
	if shape&2 != 0 {
		call = ToolCall{ID: id} // a function all empty
	}
	content := ""
	if shape&4 != 0 {
		content = text
	}
	if shape&8 != 0 {
		msgs = append(msgs,
			Message{Role: RoleAssistant, Content: content, ToolCalls: []ToolCall{call, {ID: name, Name: args}}},
			Message{Role: RoleTool, Content: args, ToolCallID: id, Name: name})
	}
	msgs = append(msgs, Message{Role: RoleAssistant, Content: content})
	if shape&16 != 0 {
		msgs = append(msgs, Message{Role: "narrator", Content: text}) // no such role
	}
	return Request{Messages: msgs, ToolsJSON: json.RawMessage(tools)}
}

// FuzzRequestBody holds the hand-written request encoder (appendRequest)
// to openai-go's (libraryBody), byte for byte, and both to one error.
func FuzzRequestBody(f *testing.F) {
	f.Add(uint8(0), "who owns jump-prod-02?", "call_1", "cmdb__get_asset", `{"hostname":"jump-prod-02"}`, "gpt-oss-120b", 0.0, false, 0, "", `[{"type":"function","function":{"name":"cmdb__get_asset","parameters":{"type":"object"}}}]`)
	f.Add(uint8(0xff), "<b>&amp;</b>\u2028\u2029\x00\x1f\"\\\t\n\r\b\f\xff", "", "", "", "o3-mini", 1e-7, true, 4096, "high", ` [ ] `)
	f.Add(uint8(8), "é😀", "id", "n", "{", "gpt-4o", 0.7, true, 1, "low", "null")
	f.Add(uint8(12), "", "", "", "", "", 1e21, true, 0, "", `{"not":"an array"}`)
	f.Add(uint8(5), "x", "y", "z", "w", "m", math.Inf(1), true, 0, "", "")
	f.Add(uint8(9), "x", "y", "z", "w", "m", -0.0, true, 3, "", "[1,")
	f.Add(uint8(2), "x", "y", "z", "w", "m", 123456789.125, true, 3, "", "[\n  {\"a\": \"<&>\"}\n]")
	f.Fuzz(func(t *testing.T, shape uint8, text, id, name, args, modelName string, temp float64, hasTemp bool, maxTokens int, effort, tools string) {
		cfg := OpenAIConfig{Model: modelName, MaxTokens: max(0, maxTokens), ReasoningEffort: effort}
		if hasTemp {
			cfg.Temperature = &temp
		}
		req := fuzzRequest(shape, text, id, name, args, tools)
		fast := &OpenAI{cfg: cfg, checked: &checkedTools{}}
		lib := &OpenAI{cfg: cfg, library: true}
		want, werr := lib.requestBody(req)
		// The second time, the tools array comes from the check's memory.
		for range 2 {
			got, gerr := fast.requestBody(req)
			if (gerr == nil) != (werr == nil) || (gerr != nil && gerr.Error() != werr.Error()) {
				t.Fatalf("errors differ:\nfast:    %v\nlibrary: %v", gerr, werr)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("bodies differ:\nfast:    %s\nlibrary: %s", got, want)
			}
		}
	})
}

// TestRequestBody: the body of a call's round trip, written out by hand.
func TestRequestBody(t *testing.T) {
	temp := 0.5
	m := &OpenAI{cfg: OpenAIConfig{Model: "gpt-oss-120b", MaxTokens: 256, Temperature: &temp}}
	tools := `[{"type":"function","function":{"name":"a"}}]`
	req := Request{
		Messages: []Message{
			{Role: RoleUser, Content: "who owns <x>?"},
			{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "a", Arguments: `{"h":"x"}`}}},
			{Role: RoleTool, Content: "Ann\n", ToolCallID: "c1"},
		},
		ToolsJSON: json.RawMessage(tools),
	}
	want := `{"messages":[{"content":"who owns <x>?","role":"user"},` +
		`{"tool_calls":[{"id":"c1","function":{"arguments":"{\"h\":\"x\"}","name":"a"},"type":"function"}],"role":"assistant"},` +
		`{"content":"Ann\n","tool_call_id":"c1","role":"tool"}],` +
		`"model":"gpt-oss-120b","max_tokens":256,"temperature":0.5,"tool_choice":"auto","tools":` + tools + `}`
	for _, library := range []bool{false, true} {
		m.library = library
		got, err := m.requestBody(req)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("library %v:\n got %s\nwant %s", library, got, want)
		}
	}
}

// TestToolsChecked: the check's memory answers only for the very array it
// checked; another array, of the same length or not, is checked itself.
func TestToolsChecked(t *testing.T) {
	m := &OpenAI{cfg: OpenAIConfig{Model: "m"}, checked: &checkedTools{}}
	a := []byte(`[{"type":"function","function":{"name":"a"}}]`)
	b := []byte(`[{"type":"function","function":{"name":"b"}}]`)
	tests := []struct {
		tools   []byte
		want    string // the body's tools, "" for none
		wantErr bool
	}{
		{a, string(a), false},
		{a, string(a), false},
		{b, string(b), false},
		{a[:len(a)-1], "", true}, // the same memory, shorter: not JSON
		{[]byte(" [ ] "), "", false},
		{a, string(a), false},
	}
	for i, tt := range tests {
		body, err := m.requestBody(Request{Messages: []Message{{Role: RoleUser, Content: "q"}}, ToolsJSON: tt.tools})
		if (err != nil) != tt.wantErr {
			t.Fatalf("%d: error %v, want error %v", i, err, tt.wantErr)
		}
		if err != nil {
			continue
		}
		want := `{"messages":[{"content":"q","role":"user"}],"model":"m"}`
		if tt.want != "" {
			want = `{"messages":[{"content":"q","role":"user"}],"model":"m","tool_choice":"auto","tools":` + tt.want + `}`
		}
		if string(body) != want {
			t.Errorf("%d: body\n got %s\nwant %s", i, body, want)
		}
	}
}

// FuzzReasoningShortcut: an answer mayNameReasoning passes over has no
// reasoning reasoningOf would find, however its keys are spelt.
func FuzzReasoningShortcut(f *testing.F) {
	f.Add(`{"choices":[{"message":{"role":"assistant","content":"hi"}}]}`)
	f.Add(`{"choices":[{"message":{"reasoning_content":"Look it up."}}]}`)
	f.Add(`{"choices":[{"message":{"REASONING":"upper"}}]}`)
	f.Add(`{"choices":[{"message":{"rea\u017foning":"long s"}}]}`)
	f.Add(`{"choices":[{"message":{"reasonin\u0067":"escaped"}}]}`)
	f.Add("{\"choices\":[{\"message\":{\"rea\u017foning\":\"long s, raw\"}}]}")
	f.Fuzz(func(t *testing.T, data string) {
		if got := reasoningOf([]byte(data)); got != "" && !mayNameReasoning([]byte(data)) {
			t.Errorf("mayNameReasoning(%q) = false, but reasoningOf finds %q", data, got)
		}
	})
}

// TestParseCompletionReasoning: the reasoning is read under both names,
// and none is found where none is.
func TestParseCompletionReasoning(t *testing.T) {
	tests := []struct{ data, want string }{
		{`{"choices":[{"message":{"role":"assistant","content":"hi"}}]}`, ""},
		{`{"choices":[{"message":{"role":"assistant","reasoning_content":"a"}}]}`, "a"},
		{`{"choices":[{"message":{"role":"assistant","reasoning":"b"}}]}`, "b"},
		{`{"choices":[{"message":{"role":"assistant","Reasoning":"c"}}]}`, "c"},
		{"{\"choices\":[{\"message\":{\"role\":\"assistant\",\"rea\u017foning\":\"d\"}}]}", "d"},
	}
	for _, tt := range tests {
		for _, library := range []bool{false, true} {
			c, err := parseCompletion([]byte(tt.data), library)
			if err != nil || c.reasoning != tt.want {
				t.Errorf("parseCompletion(%s, library %v): reasoning %q, %v; want %q", tt.data, library, c.reasoning, err, tt.want)
			}
		}
	}
}
