package model

import (
	"encoding/json"
	"math"
	"strconv"
	"sync/atomic"
	"unicode/utf8"

	"github.com/openai/openai-go/v3"
)

// A model request's body, written by hand. openai-go's encoder
// (ChatCompletionNewParams.MarshalJSON) walks the params by reflection,
// through a union per message: against a fast endpoint, a twelfth of a
// run's CPU. appendRequest writes the same bytes directly for what Next
// sends (FuzzRequestBody holds the two equal, byte for byte); anything it
// does not know (a role of no message type, a temperature JSON has no
// number for) goes to the library's code, which says what is wrong. With
// HOSTEVAL_TRANSPORT=sdk (EndpointsOptions.Library) every request goes
// through the library's code.

// requestBody is the body of Next's request: the conversation, the
// sampling parameters and the tools array, spliced in as the host
// rendered it.
func (m *OpenAI) requestBody(req Request) ([]byte, error) {
	if !m.library && knownRoles(req.Messages) {
		tools, err := m.toolsChecked(req)
		if err != nil {
			return nil, err
		}
		if b, ok := m.appendRequest(make([]byte, 0, 512+len(tools)+bodySize(req.Messages)), req.Messages, tools); ok {
			return b, nil
		}
	}
	return m.libraryBody(req)
}

// checkedTools remembers the last tools array toolsArray accepted, by
// its address and length: the host sends the same array, rendered once
// per tool table, with every request of a run, and checking it again on
// each (json.Valid over a catalog) was a fiftieth of a run's CPU against
// a fast endpoint. The host never writes to an array it has handed on.
type checkedTools struct {
	last atomic.Pointer[checkedArray]
}

type checkedArray struct {
	// in is the array as the request had it, kept so that its memory is
	// not another array's while it is remembered.
	in  json.RawMessage
	out json.RawMessage // what toolsArray returned for it
}

// toolsChecked is toolsArray(req), from m's memory when req's ToolsJSON
// is the array it checked last.
func (m *OpenAI) toolsChecked(req Request) (json.RawMessage, error) {
	if m.checked == nil || len(req.ToolsJSON) == 0 {
		return toolsArray(req)
	}
	in := req.ToolsJSON
	if last := m.checked.last.Load(); last != nil && &last.in[0] == &in[0] && len(last.in) == len(in) {
		return last.out, nil
	}
	out, err := toolsArray(req)
	if err == nil {
		m.checked.last.Store(&checkedArray{in: in, out: out})
	}
	return out, err
}

// libraryBody is requestBody through openai-go's types and encoder.
func (m *OpenAI) libraryBody(req Request) ([]byte, error) {
	params := openai.ChatCompletionNewParams{Model: m.cfg.Model}
	var err error
	if params.Messages, err = chatMessages(req.Messages); err != nil {
		return nil, err
	}
	tools, err := toolsArray(req)
	if err != nil {
		return nil, err
	}
	if tools != nil {
		params.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{
			OfAuto: openai.String(string(openai.ChatCompletionToolChoiceOptionAutoAuto)),
		}
	}
	m.sampling(&params)
	return spliceTools(params, tools)
}

// knownRoles reports whether every message has a role chatMessages maps.
func knownRoles(msgs []Message) bool {
	for _, msg := range msgs {
		switch msg.Role {
		case RoleSystem, RoleUser, RoleTool, RoleAssistant:
		default:
			return false
		}
	}
	return true
}

// bodySize estimates the bytes of the messages, for the buffer.
func bodySize(msgs []Message) int {
	n := 0
	for _, msg := range msgs {
		n += len(msg.Content) + 48
		for _, c := range msg.ToolCalls {
			n += len(c.ID) + len(c.Name) + len(c.Arguments) + 80
		}
	}
	return n
}

// appendRequest writes the body openai-go writes for the params Next
// builds, in its order of keys: messages, model, max_completion_tokens,
// max_tokens, temperature, reasoning_effort, tool_choice, then the tools.
// ok is false for what it leaves to the library (a temperature that is
// not a finite number).
func (m *OpenAI) appendRequest(b []byte, msgs []Message, tools json.RawMessage) ([]byte, bool) {
	b = append(b, '{')
	first := true
	key := func(k string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, k...)
		b = append(b, '"', ':')
	}
	if len(msgs) > 0 {
		key("messages")
		b = append(b, '[')
		for i, msg := range msgs {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendMessage(b, msg)
		}
		b = append(b, ']')
	}
	if m.cfg.Model != "" {
		key("model")
		b = appendString(b, m.cfg.Model)
	}
	if m.cfg.MaxTokens > 0 {
		if m.cfg.IsReasoning() {
			key("max_completion_tokens")
		} else {
			key("max_tokens")
		}
		b = strconv.AppendInt(b, int64(m.cfg.MaxTokens), 10)
	}
	if t := m.cfg.Temperature; t != nil {
		if math.IsInf(*t, 0) || math.IsNaN(*t) {
			return nil, false
		}
		key("temperature")
		b = appendFloat(b, *t)
	}
	if m.cfg.ReasoningEffort != "" {
		key("reasoning_effort")
		b = appendString(b, m.cfg.ReasoningEffort)
	}
	if tools != nil {
		key("tool_choice")
		b = append(b, `"auto"`...)
		key("tools")
		b = append(b, tools...)
	}
	return append(b, '}'), true
}

// appendMessage writes one message as chatMessages maps it.
func appendMessage(b []byte, msg Message) []byte {
	b = append(b, '{')
	switch msg.Role {
	case RoleAssistant:
		// An assistant message that only calls tools has no content, as
		// the endpoint itself sent it.
		sep := false
		if msg.Content != "" || len(msg.ToolCalls) == 0 {
			b = append(b, `"content":`...)
			b = appendString(b, msg.Content)
			sep = true
		}
		if len(msg.ToolCalls) > 0 {
			if sep {
				b = append(b, ',')
			}
			b = append(b, `"tool_calls":[`...)
			for i, c := range msg.ToolCalls {
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, `{"id":`...)
				b = appendString(b, c.ID)
				// The function is left out when it is all empty, as
				// openai-go leaves out a zero struct.
				if c.Name != "" || c.Arguments != "" {
					b = append(b, `,"function":{"arguments":`...)
					b = appendString(b, c.Arguments)
					b = append(b, `,"name":`...)
					b = appendString(b, c.Name)
					b = append(b, '}')
				}
				b = append(b, `,"type":"function"}`...)
			}
			b = append(b, ']')
		}
		if sep || len(msg.ToolCalls) > 0 {
			b = append(b, ',')
		}
		b = append(b, `"role":"assistant"`...)
	case RoleTool:
		b = append(b, `"content":`...)
		b = appendString(b, msg.Content)
		b = append(b, `,"tool_call_id":`...)
		b = appendString(b, msg.ToolCallID)
		b = append(b, `,"role":"tool"`...)
	default: // system, user
		b = append(b, `"content":`...)
		b = appendString(b, msg.Content)
		b = append(b, `,"role":`...)
		b = appendString(b, string(msg.Role))
	}
	return append(b, '}')
}

// appendFloat writes a number as encoding/json does (ES6's rules: no
// exponent between 1e-6 and 1e21, and no zero padding in one).
func appendFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 to e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string as encoding/json does without
// HTML escaping: the short escapes, \u00XX for other control characters,
// U+2028 and U+2029 escaped, each invalid UTF-8 byte as \ufffd.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
