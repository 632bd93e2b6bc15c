package host

import (
	"bytes"
	"encoding/json"
	"strings"
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
func members[T string | []byte](data T, fn func(key, value T) bool) bool {
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

func skipSpace[T string | []byte](data T, i int) int {
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
// It jumps from quote to quote (IndexByte reads many bytes at a time: a
// result's text is most of its bytes): a quote ends the string unless an
// odd run of backslashes comes right before it.
func skipString[T string | []byte](data T, i int) (int, bool) {
	start := i + 1
	for from := start; from < len(data); {
		q := indexByte(data[from:], '"')
		if q < 0 {
			return 0, false
		}
		q += from
		n := 0
		for k := q - 1; k >= start && data[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return q + 1, true
		}
		from = q + 1
	}
	return 0, false
}

// indexByte is strings.IndexByte or bytes.IndexByte, whichever data is.
func indexByte[T string | []byte](data T, c byte) int {
	switch d := any(data).(type) {
	case string:
		return strings.IndexByte(d, c)
	case []byte:
		return bytes.IndexByte(d, c)
	}
	return -1
}

// skipValue returns the index after the value that starts at data[i]. It
// checks the nesting, not every detail: the messages it reads were decoded
// by the SDK already, so they are valid JSON (and flatArguments checks the
// values it takes).
func skipValue[T string | []byte](data T, i int) (int, bool) {
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

// field is a top-level member looked for by name: its raw value once
// found, else nil.
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
	switch text := value[1 : len(value)-1]; string(text) {
	case resultComplete:
		return resultComplete, true
	case resultInputRequired:
		return resultInputRequired, true
	default:
		return string(text), true
	}
}

// sentResult is what the host reads of a result as sent: the fields the
// SDK's types lose.
type sentResult struct {
	// ResultType is set (typed) when the result has a resultType that is
	// not null.
	ResultType   string
	Typed        bool
	RequestState json.RawMessage
}

// readSentResult reads raw's resultType and requestState (with paths
// sdk, always by way of encoding/json).
func readSentResult(raw []byte, paths Paths) sentResult {
	if raw == nil {
		return sentResult{}
	}
	fields := [...]field{{name: "resultType"}, {name: "requestState"}}
	if !paths.sdk() && readFields(raw, fields[:]) {
		rt, state := fields[0].value, fields[1].value
		if isNull(rt) {
			return sentResult{RequestState: state}
		}
		if s, ok := plainString(rt); ok {
			return sentResult{ResultType: s, Typed: true, RequestState: state}
		}
	}
	var sent struct {
		ResultType   *string         `json:"resultType"`
		RequestState json.RawMessage `json:"requestState"`
	}
	json.Unmarshal(raw, &sent)
	if sent.ResultType == nil {
		return sentResult{RequestState: sent.RequestState}
	}
	return sentResult{ResultType: *sent.ResultType, Typed: true, RequestState: sent.RequestState}
}

// The resultTypes the host knows.
const (
	resultComplete      = "complete"
	resultInputRequired = "input_required"
)

// flatArguments decodes the usual arguments of a call, a flat object of
// strings without escapes, numbers, booleans and nulls, as parseArguments'
// decoder does (numbers as json.Number, the last of a repeated key), the
// strings and numbers sharing text's memory. It reports false for anything
// else, which the decoder reads.
func flatArguments(text string) (map[string]any, bool) {
	var obj map[string]any
	ok := members(text, func(key, value string) bool {
		if strings.IndexByte(key, '\\') >= 0 || !plainText(key) {
			return false
		}
		var v any
		switch value[0] {
		case '"':
			s := value[1 : len(value)-1]
			if strings.IndexByte(s, '\\') >= 0 || !plainText(s) {
				return false
			}
			v = s
		case 't', 'f', 'n':
			switch value {
			case "true":
				v = true
			case "false":
				v = false
			case "null":
				v = nil
			default:
				return false
			}
		default:
			if !isNumber(value) {
				return false
			}
			v = json.Number(value)
		}
		if obj == nil {
			obj = make(map[string]any, 4)
		}
		obj[key] = v
		return true
	})
	if !ok {
		return nil, false
	}
	if obj == nil {
		obj = map[string]any{}
	}
	return obj, true
}

// plainText reports whether s can stand in a JSON string as it is: valid
// UTF-8 without control characters or quotes.
func plainText(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' {
			return false
		}
	}
	return utf8.ValidString(s)
}

// isNumber reports whether s is a JSON number:
// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func isNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		start := i
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		return i - start
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

// elements calls fn with the raw value of each element of the JSON array
// data, in order. It reports false if data is not an array it could walk;
// fn returning false stops the walk, also with false.
func elements(data []byte, fn func(value []byte) bool) bool {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return skipSpace(data, i+1) == len(data)
	}
	for i < len(data) {
		end, ok := skipValue(data, i)
		if !ok || !fn(data[i:end]) {
			return false
		}
		i = skipSpace(data, end)
		if i >= len(data) {
			return false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case ']':
			return skipSpace(data, i+1) == len(data)
		default:
			return false
		}
	}
	return false
}

// isNull reports whether a raw value is absent or JSON null: encoding/json
// leaves a field alone for both.
func isNull(value []byte) bool { return len(value) == 0 || string(value) == "null" }

// toolsPage is a tools/list result as sent: each tool's bytes, and the
// next page's cursor (nil when the server sent none).
type toolsPage struct {
	Tools      []json.RawMessage `json:"tools"`
	NextCursor *string           `json:"nextCursor"`
}

// readToolsPage reads raw, a tools/list result the SDK has decoded, as
// encoding/json reads it into a toolsPage (with paths sdk, by way of it).
func readToolsPage(raw []byte, paths Paths) (toolsPage, error) {
	var page toolsPage
	fields := [...]field{{name: "tools"}, {name: "nextCursor"}}
	if !paths.sdk() && readFields(raw, fields[:]) {
		tools, cursor := fields[0].value, fields[1].value
		ok := true
		if !isNull(tools) {
			page.Tools = []json.RawMessage{}
			ok = elements(tools, func(tool []byte) bool {
				page.Tools = append(page.Tools, tool)
				return true
			})
		}
		if ok && !isNull(cursor) {
			var text string
			text, ok = plainString(cursor)
			page.NextCursor = &text
		}
		if ok {
			return page, nil
		}
	}
	page = toolsPage{}
	err := json.Unmarshal(raw, &page)
	return page, err
}

// readToolHead reads a listed tool's name and execution.taskSupport, as
// encoding/json would (with paths sdk, by way of it); ok is false where
// encoding/json fails too.
func readToolHead(tool []byte, paths Paths) (name, taskSupport string, ok bool) {
	fields := [...]field{{name: "name"}, {name: "execution"}}
	if !paths.sdk() && readFields(tool, fields[:]) {
		ok = true
		if v := fields[0].value; !isNull(v) {
			name, ok = plainString(v)
		}
		if exec := fields[1].value; ok && !isNull(exec) {
			support := [...]field{{name: "taskSupport"}}
			ok = readFields(exec, support[:])
			if ok && !isNull(support[0].value) {
				taskSupport, ok = plainString(support[0].value)
			}
		}
		if ok {
			return name, taskSupport, true
		}
	}
	var t struct {
		Name      string `json:"name"`
		Execution struct {
			TaskSupport string `json:"taskSupport"`
		} `json:"execution"`
	}
	if json.Unmarshal(tool, &t) != nil {
		return "", "", false
	}
	return t.Name, t.Execution.TaskSupport, true
}

// readInputSchema returns a listed tool's inputSchema as written (nil when
// absent), as encoding/json reads it into a json.RawMessage (with paths
// sdk, by way of it).
func readInputSchema(tool []byte, paths Paths) (json.RawMessage, error) {
	fields := [...]field{{name: "inputSchema"}}
	if !paths.sdk() && readFields(tool, fields[:]) {
		return fields[0].value, nil
	}
	var t struct {
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	err := json.Unmarshal(tool, &t)
	return t.InputSchema, err
}

// spaceless reports whether data, valid JSON, has no whitespace outside its
// strings: json.Compact would return it unchanged.
func spaceless(data []byte) bool {
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			end, ok := skipString(data, i)
			if !ok {
				return false
			}
			i = end - 1
		case ' ', '\t', '\n', '\r':
			return false
		}
	}
	return true
}
