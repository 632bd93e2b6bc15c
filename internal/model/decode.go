package model

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/openai/openai-go/v3"
)

// A completion read by hand. openai-go's decoder (ChatCompletion's
// UnmarshalJSON) parses the answer with gjson and fills every field of
// the completion by reflection, a map per object: against a fast endpoint
// a tenth of a run's CPU, for the handful of fields the host reads.
// readCompletion takes those fields from the bytes in one pass and gives
// up, for the library's decoder to say, on anything whose reading it does
// not know to be the library's: a value of another type than the field's,
// a key twice, a key with an escape, a key that differs from a known one
// only in case. FuzzReadCompletion holds the two equal on any input. With
// HOSTEVAL_TRANSPORT=sdk (EndpointsOptions.Library) every answer goes
// through the library's decoder.

// chatAnswer is what the host reads of a completion: its first choice,
// its usage and how many choices it had.
type chatAnswer struct {
	choices int
	// message is whether the first choice has a message (openai-go's
	// JSON.Message.Valid); messageRaw its text when it has none, "" when
	// it was left out.
	message    bool
	messageRaw string
	content    string
	refusal    string
	finish     string
	calls      []answerCall
	usage      *answerUsage
	// reasoning is the first choice's reasoning, which openai-go does not
	// read (reasoningOf).
	reasoning string
}

// answerCall is one of the first choice's tool calls.
type answerCall struct {
	id, typ, name, arguments string
	// customName and customInput are a custom tool's call (type custom).
	customName, customInput string
}

// answerUsage is a completion's usage.
type answerUsage struct {
	prompt, completion, total, cached int64
}

// parseCompletion reads a Chat Completions answer with one choice or
// more, with openai-go's decoder when library is set.
func parseCompletion(data []byte, library bool) (chatAnswer, error) {
	if !json.Valid(data) {
		return chatAnswer{}, fmt.Errorf("the answer is not a chat completion: not JSON: %.60q", data)
	}
	c, ok := chatAnswer{}, false
	if !library {
		c, ok = readCompletion(data)
	}
	if !ok {
		var err error
		if c, err = libraryCompletion(data); err != nil {
			return c, fmt.Errorf("the answer is not a chat completion: %w", err)
		}
	}
	if c.choices == 0 {
		return c, errors.New("the answer has no choices")
	}
	return c, nil
}

// libraryCompletion reads a completion with openai-go's decoder, and its
// reasoning with encoding/json.
func libraryCompletion(data []byte) (chatAnswer, error) {
	var res openai.ChatCompletion
	if err := res.UnmarshalJSON(data); err != nil {
		return chatAnswer{}, err
	}
	c := chatAnswer{choices: len(res.Choices)}
	if mayNameReasoning(data) {
		c.reasoning = reasoningOf(data)
	}
	if res.JSON.Usage.Valid() {
		c.usage = &answerUsage{
			prompt: res.Usage.PromptTokens, completion: res.Usage.CompletionTokens,
			total: res.Usage.TotalTokens, cached: res.Usage.PromptTokensDetails.CachedTokens,
		}
	}
	if len(res.Choices) == 0 {
		return c, nil
	}
	choice := res.Choices[0]
	c.finish = string(choice.FinishReason)
	if c.message = choice.JSON.Message.Valid(); !c.message {
		c.messageRaw = choice.JSON.Message.Raw()
	}
	msg := choice.Message
	c.content, c.refusal = msg.Content, msg.Refusal
	for _, tc := range msg.ToolCalls {
		c.calls = append(c.calls, answerCall{
			id: tc.ID, typ: tc.Type, name: tc.Function.Name, arguments: tc.Function.Arguments,
			customName: tc.Custom.Name, customInput: tc.Custom.Input,
		})
	}
	return c, nil
}

// reasoningOf is the first choice's reasoning, which openai-go does not
// read: vLLM before 0.10, SGLang and llama.cpp's server name it
// reasoning_content; vLLM since and Ollama, reasoning.
func reasoningOf(data []byte) string {
	var extra struct {
		Choices []struct {
			Message struct {
				ReasoningContent string `json:"reasoning_content"`
				Reasoning        string `json:"reasoning"`
			} `json:"message"`
		} `json:"choices"`
	}
	if json.Unmarshal(data, &extra) == nil && len(extra.Choices) > 0 {
		return cmp.Or(extra.Choices[0].Message.ReasoningContent, extra.Choices[0].Message.Reasoning)
	}
	return ""
}

// mayNameReasoning reports whether data may have a key encoding/json
// takes for reasoningOf's: "reasoning" in any case, with U+017F for an
// s (encoding/json folds it), or spelt with a \u escape. An answer that
// cannot is not decoded a second time for it: a twentieth of a run's CPU
// against a fast endpoint (FuzzReasoningShortcut holds it to decoding).
func mayNameReasoning(data []byte) bool {
	if bytes.Contains(data, []byte(`\u`)) || bytes.Contains(data, []byte("\u017f")) {
		return true
	}
	const key = "reasoning"
	for i := 0; i+len(key) <= len(data); i++ {
		if data[i]|0x20 == 'r' && bytes.EqualFold(data[i:i+len(key)], []byte(key)) {
			return true
		}
	}
	return false
}

// readCompletion reads data, valid JSON, as libraryCompletion does; ok is
// false when it leaves the answer to the library.
func readCompletion(data []byte) (c chatAnswer, ok bool) {
	// encoding/json, which reads the reasoning, matches keys in any case
	// and folds U+017F to s: without it, a key it takes for one of
	// reasoningOf's differs from its name in ASCII case only, or has an
	// escape, and the readers below leave both to the library.
	if bytes.Contains(data, []byte("\u017f")) {
		return c, false
	}
	r := reader{data: data}
	r.space()
	if !r.is('{') {
		return c, false
	}
	var seenChoices, seenUsage bool
	ok = r.object(func(key []byte) bool {
		switch {
		case string(key) == "choices":
			if seenChoices {
				return false
			}
			seenChoices = true
			return r.choices(&c)
		case string(key) == "usage":
			if seenUsage {
				return false
			}
			seenUsage = true
			return r.usage(&c)
		case bytes.EqualFold(key, []byte("choices")):
			return false
		}
		return r.skip()
	})
	return c, ok
}

// reader walks a JSON text that json.Valid accepted.
type reader struct {
	data []byte
	i    int
}

func (r *reader) space() {
	for r.i < len(r.data) {
		switch r.data[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// is reports whether the next value starts with b.
func (r *reader) is(b byte) bool { return r.i < len(r.data) && r.data[r.i] == b }

// null consumes a null and reports whether there was one.
func (r *reader) null() bool {
	if r.is('n') {
		r.i += len("null")
		return true
	}
	return false
}

// object calls value for each key of the object at r, which must consume
// the key's value; ok is false when value is, or a key has an escape.
func (r *reader) object(value func(key []byte) bool) bool {
	r.i++ // {
	r.space()
	if r.is('}') {
		r.i++
		return true
	}
	for {
		key, escaped := r.str()
		if escaped {
			return false
		}
		r.space()
		r.i++ // :
		r.space()
		if !value(key) {
			return false
		}
		r.space()
		if r.data[r.i] == '}' {
			r.i++
			return true
		}
		r.i++ // ,
		r.space()
	}
}

// array calls elem for each element of the array at r, which must
// consume it.
func (r *reader) array(elem func(i int) bool) bool {
	r.i++ // [
	r.space()
	if r.is(']') {
		r.i++
		return true
	}
	for n := 0; ; n++ {
		if !elem(n) {
			return false
		}
		r.space()
		if r.data[r.i] == ']' {
			r.i++
			return true
		}
		r.i++ // ,
		r.space()
	}
}

// str consumes the string at r: its bytes between the quotes, and whether
// they have an escape.
func (r *reader) str() ([]byte, bool) {
	r.i++ // "
	start, escaped := r.i, false
	for {
		switch r.data[r.i] {
		case '"':
			s := r.data[start:r.i]
			r.i++
			return s, escaped
		case '\\':
			escaped = true
			r.i += 2
		default:
			r.i++
		}
	}
}

// skip consumes any value.
func (r *reader) skip() bool {
	switch r.data[r.i] {
	case '"':
		r.str()
	case '{', '[':
		depth := 0
		for {
			switch r.data[r.i] {
			case '"':
				r.str()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			r.i++
			if depth == 0 {
				return true
			}
		}
	default: // a number, true, false or null
		for r.i < len(r.data) {
			switch r.data[r.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return true
			}
			r.i++
		}
	}
	return true
}

// text reads a string or null (which is "") as openai-go does: the bytes
// as they are, escapes undone as gjson undoes them.
func (r *reader) text(dst *string) bool {
	if r.null() {
		return true
	}
	if !r.is('"') {
		return false
	}
	s, escaped := r.str()
	if escaped {
		*dst = unescape(s)
	} else {
		*dst = string(s)
	}
	return true
}

// stdText reads a string or null as encoding/json does: invalid UTF-8
// becomes U+FFFD.
func (r *reader) stdText(dst *string) bool {
	if r.null() {
		return true
	}
	if !r.is('"') {
		return false
	}
	start := r.i
	s, escaped := r.str()
	if !escaped && utf8.Valid(s) {
		*dst = string(s)
		return true
	}
	return json.Unmarshal(r.data[start:r.i], dst) == nil
}

// integer reads an integer or null (0) that gjson reads exactly: at most
// 15 digits, no fraction, no exponent.
func (r *reader) integer(dst *int64) bool {
	if r.null() {
		return true
	}
	start := r.i
	if r.is('-') {
		r.i++
	}
	digits := r.i
	for r.i < len(r.data) && r.data[r.i] >= '0' && r.data[r.i] <= '9' {
		r.i++
	}
	if r.i == digits || r.i-digits > 15 || (r.i < len(r.data) && (r.data[r.i] == '.' || r.data[r.i]|0x20 == 'e')) {
		return false
	}
	n, err := strconv.ParseInt(string(r.data[start:r.i]), 10, 64)
	*dst = n
	return err == nil
}

// once reports whether bit is new in seen, and sets it.
func once(seen *uint32, bit uint32) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

// choices reads the choices array: the first choice whole, the others'
// reasoning only as far as encoding/json would fail on it.
func (r *reader) choices(c *chatAnswer) bool {
	if r.null() {
		return false // openai-go keeps a null as none; left to it
	}
	if !r.is('[') {
		return false
	}
	return r.array(func(i int) bool {
		c.choices = i + 1
		if !r.is('{') {
			return false
		}
		var seen uint32
		return r.object(func(key []byte) bool {
			switch {
			case string(key) == "message":
				if !once(&seen, 1) {
					return false
				}
				if r.null() {
					if i == 0 {
						c.messageRaw = "null"
					}
					return true
				}
				if !r.is('{') {
					return false
				}
				if i == 0 {
					c.message = true
				}
				return r.message(c, i == 0)
			case string(key) == "finish_reason" && i == 0:
				return once(&seen, 2) && r.text(&c.finish)
			case bytes.EqualFold(key, []byte("message")):
				return false
			}
			return r.skip()
		})
	})
}

// message reads a choice's message: all of it when first, else only its
// reasoning's type.
func (r *reader) message(c *chatAnswer, first bool) bool {
	var seen uint32
	var content, reasoningField string
	ok := r.object(func(key []byte) bool {
		switch {
		case string(key) == "reasoning_content":
			return once(&seen, 1) && r.stdText(&content)
		case string(key) == "reasoning":
			return once(&seen, 2) && r.stdText(&reasoningField)
		case bytes.EqualFold(key, []byte("reasoning_content")), bytes.EqualFold(key, []byte("reasoning")):
			return false
		case !first:
		case string(key) == "content":
			return once(&seen, 4) && r.text(&c.content)
		case string(key) == "refusal":
			return once(&seen, 8) && r.text(&c.refusal)
		case string(key) == "tool_calls":
			return once(&seen, 16) && r.toolCalls(c)
		}
		return r.skip()
	})
	if ok && first {
		c.reasoning = cmp.Or(content, reasoningField)
	}
	return ok
}

// toolCalls reads the first choice's tool calls.
func (r *reader) toolCalls(c *chatAnswer) bool {
	if r.null() {
		return true
	}
	if !r.is('[') {
		return false
	}
	return r.array(func(int) bool {
		if !r.is('{') {
			return false
		}
		var call answerCall
		var seen uint32
		ok := r.object(func(key []byte) bool {
			switch string(key) {
			case "id":
				return once(&seen, 1) && r.text(&call.id)
			case "type":
				return once(&seen, 2) && r.text(&call.typ)
			case "function":
				if !once(&seen, 4) {
					return false
				}
				if r.null() {
					return true
				}
				if !r.is('{') {
					return false
				}
				var fseen uint32
				return r.object(func(key []byte) bool {
					switch string(key) {
					case "name":
						return once(&fseen, 1) && r.text(&call.name)
					case "arguments":
						return once(&fseen, 2) && r.text(&call.arguments)
					}
					return r.skip()
				})
			case "custom":
				return false // rare: left to the library
			}
			return r.skip()
		})
		if !ok || call.typ == "custom" {
			return false
		}
		c.calls = append(c.calls, call)
		return true
	})
}

// usage reads the completion's usage.
func (r *reader) usage(c *chatAnswer) bool {
	if r.null() {
		return true
	}
	if !r.is('{') {
		return false
	}
	u := &answerUsage{}
	var seen uint32
	ok := r.object(func(key []byte) bool {
		switch string(key) {
		case "prompt_tokens":
			return once(&seen, 1) && r.integer(&u.prompt)
		case "completion_tokens":
			return once(&seen, 2) && r.integer(&u.completion)
		case "total_tokens":
			return once(&seen, 4) && r.integer(&u.total)
		case "prompt_tokens_details":
			if !once(&seen, 8) {
				return false
			}
			if r.null() {
				return true
			}
			if !r.is('{') {
				return false
			}
			var dseen uint32
			return r.object(func(key []byte) bool {
				if string(key) == "cached_tokens" {
					return once(&dseen, 1) && r.integer(&u.cached)
				}
				return r.skip()
			})
		}
		return r.skip()
	})
	c.usage = u
	return ok
}

// unescape undoes a JSON string's escapes as gjson does: a \u escape of a
// high surrogate takes the next \u escape with it, whatever it is, and an
// unpaired surrogate is U+FFFD. s is a valid JSON string's content.
func unescape(s []byte) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			out = append(out, s[i])
			continue
		}
		i++
		switch s[i] {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := hexRune(s[i+1 : i+5])
			i += 4
			if utf16.IsSurrogate(r) && i+7 <= len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
				r = utf16.DecodeRune(r, hexRune(s[i+3:i+7]))
				i += 6
			}
			out = utf8.AppendRune(out, r)
		default: // " \ /
			out = append(out, s[i])
		}
	}
	return string(out)
}

func hexRune(h []byte) rune {
	n, _ := strconv.ParseUint(string(h), 16, 32)
	return rune(n)
}
