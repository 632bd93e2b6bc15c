package host

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Reading a few top-level fields of a message as the server wrote it,
// without decoding the rest: a tools/call result is mostly its content,
// which the SDK decodes anyway, and encoding/json would scan it twice
// (validity, then the fields) and allocate as it goes. The readers here
// take the easy, usual case and leave anything unusual (a key with an
// escape, a key encoding/json would match case-insensitively, a value of
// an unexpected kind) to encoding/json, so what they return is what it
// would.

// members calls fn with the raw key (between its quotes, escapes as
// written) and raw value of each member of the JSON object data, in order.
// It reports false if data is not an object it could walk; fn returning
// false stops the walk, also with false.
func members(data []byte, fn func(key, value []byte) bool) bool {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return skipSpace(data, i+1) == len(data)
	}
	for i < len(data) {
		if data[i] != '"' {
			return false
		}
		end, ok := skipString(data, i)
		if !ok {
			return false
		}
		key := data[i+1 : end-1]
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return false
		}
		i = skipSpace(data, i+1)
		end, ok = skipValue(data, i)
		if !ok || !fn(key, data[i:end]) {
			return false
		}
		i = skipSpace(data, end)
		if i >= len(data) {
			return false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return skipSpace(data, i+1) == len(data)
		default:
			return false
		}
	}
	return false
}

func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index after the string that starts at data[i].
func skipString(data []byte, i int) (int, bool) {
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return 0, false
}

// skipValue returns the index after the value that starts at data[i]. It
// checks the nesting, not every detail: the messages it reads were decoded
// by the SDK already, so they are valid JSON.
func skipValue(data []byte, i int) (int, bool) {
	if i >= len(data) {
		return 0, false
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for ; i < len(data); i++ {
			switch data[i] {
			case '"':
				end, ok := skipString(data, i)
				if !ok {
					return 0, false
				}
				i = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1, true
				}
			}
		}
		return 0, false
	}
	start := i
	for i < len(data) {
		switch data[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i, i > start
		}
		i++
	}
	return i, i > start
}

// field is what fields found of one top-level member: its raw value,
// or nil.
type field struct {
	name  string
	value []byte
}

// readFields sets each field's value to the raw value of the member of
// object data with its name (the last one, as encoding/json takes it). It
// reports false where encoding/json must decide: data is not an object
// walked, a key has an escape, or a key matches a name only
// case-insensitively.
func readFields(data []byte, fields []field) bool {
	return members(data, func(key, value []byte) bool {
		if bytes.IndexByte(key, '\\') >= 0 {
			return false
		}
		for i := range fields {
			if string(key) == fields[i].name {
				fields[i].value = value
			} else if bytes.EqualFold(key, []byte(fields[i].name)) {
				return false
			}
		}
		return true
	})
}

// plainString returns the text of a raw JSON string without escapes, in
// valid UTF-8 (encoding/json replaces what is not).
func plainString(value []byte) (string, bool) {
	if len(value) < 2 || value[0] != '"' || bytes.IndexByte(value, '\\') >= 0 || !utf8.Valid(value) {
		return "", false
	}
	return string(value[1 : len(value)-1]), true
}

// sentResult is what the host reads of a result as sent: the fields the
// SDK's types lose.
type sentResult struct {
	ResultType   *string         `json:"resultType"`
	RequestState json.RawMessage `json:"requestState"`
}

// readSentResult reads raw's resultType and requestState.
func readSentResult(raw []byte) sentResult {
	var sent sentResult
	if raw == nil {
		return sent
	}
	fields := []field{{name: "resultType"}, {name: "requestState"}}
	if readFields(raw, fields) {
		rt, st := fields[0].value, fields[1].value
		switch {
		case rt == nil || string(rt) == "null":
			sent.RequestState = json.RawMessage(st)
			return sent
		default:
			if s, ok := plainString(rt); ok {
				sent.ResultType = &s
				sent.RequestState = json.RawMessage(st)
				return sent
			}
		}
	}
	json.Unmarshal(raw, &sent)
	return sent
}
