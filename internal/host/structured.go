package host

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"mime"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What the model reads of a result's structuredContent. The host prefers
// structured content over text, but real servers put things there that the
// model should not read (docs/peers.md #12): server-filesystem wraps its
// text as {"content": "<the same text>"} (JSON-escaped: more bytes, every
// newline a \n), and its read_media_file puts the base64 of the image in
// {"content": [{"type": "image", "data": "..."}]}. Base64 is never worth its
// tokens to a model, and a result budget spent on it leaves nothing else.

// minBase64 is the length from which a string that looks like base64
// (isBase64) is taken for binary data rather than text.
const minBase64 = 256

// structuredText returns what the model reads of res.StructuredContent,
// with binary data replaced by a note, or false when the content's own text
// serves the model better: structured content that only wraps the content
// ({"content": <its text, or its content blocks>}).
// rawSize is the length of the result as sent, which holds the text and
// usually the same again as content: the text is written in a buffer of
// half that, and handed over without a copy.
func structuredText(res *mcp.CallToolResult, rawSize int, paths Paths) (string, bool) {
	// The client decoded it from JSON: maps, slices, strings, float64s,
	// bools and nils, walked as they are.
	v := res.StructuredContent
	if wrapsContent(v, res.Content) {
		return "", false
	}
	// With paths sdk the encoder writes it (what appendModelJSON is held
	// to by FuzzModelJSON).
	if !paths.sdk() {
		keys := make([]string, 0, 32)
		if out, ok := appendModelJSON(make([]byte, 0, rawSize/2+64), v, &keys); ok {
			if len(out) == 0 {
				return "", true
			}
			// out is not written again: the string may own it.
			return unsafe.String(&out[0], len(out)), true
		}
	}
	out, err := marshalCompact(scrubBinary(v))
	if err != nil {
		return "", false
	}
	return string(out), true
}

// wrapsContent reports whether structured content v is an object whose
// only field, content, holds the result's text, or content blocks. Other
// one-field objects ({"greeting": "Hello, Amira!"}) name what they hold,
// which the model may use.
func wrapsContent(v any, content []mcp.Content) bool {
	obj, ok := v.(map[string]any)
	if !ok || len(obj) != 1 || len(content) == 0 {
		return false
	}
	switch field := obj["content"].(type) {
	case string:
		return field == contentText(content)
	case []any:
		for _, item := range field {
			if !isContentBlock(item) {
				return false
			}
		}
		return len(field) > 0
	}
	return false
}

// isContentBlock reports whether v has the shape of an MCP content block.
func isContentBlock(v any) bool {
	obj, ok := v.(map[string]any)
	if !ok {
		return false
	}
	switch obj["type"] {
	case "text":
		_, ok = obj["text"].(string)
	case "image", "audio":
		_, ok = obj["data"].(string)
	case "resource":
		_, ok = obj["resource"].(map[string]any)
	case "resource_link":
		_, ok = obj["uri"].(string)
	default:
		ok = false
	}
	return ok
}

// scrubBinary returns v with every piece of binary data in it replaced by
// a note that says what it was: image and audio blocks, resource blobs, data
// URIs, and long strings of base64.
func scrubBinary(v any) any {
	switch v := v.(type) {
	case map[string]any:
		if note, ok := binaryNote(v); ok {
			return note
		}
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = scrubBinary(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = scrubBinary(x)
		}
		return out
	case string:
		if note, ok := stringNote(v); ok {
			return note
		}
	}
	return v
}

// binaryNote describes an object that carries binary data as a whole:
// an image or audio block, or resource contents with a blob.
func binaryNote(obj map[string]any) (string, bool) {
	mimeType, _ := obj["mimeType"].(string)
	if t, _ := obj["type"].(string); t == "image" || t == "audio" {
		if data, ok := obj["data"].(string); ok {
			return notShown(t, mimeType, decodedLen(data)), true
		}
	}
	if blob, ok := obj["blob"].(string); ok {
		uri, _ := obj["uri"].(string)
		return notShown(strings.TrimSpace("resource "+uri), mimeType, decodedLen(blob)), true
	}
	return "", false
}

// notShown is the note in place of binary data, in the words contentText
// uses for binary content.
func notShown(what, mimeType string, size int) string {
	if mimeType == "" {
		return fmt.Sprintf("[%s, %d bytes: not shown]", what, size)
	}
	return fmt.Sprintf("[%s, %s, %d bytes: not shown]", what, mimeType, size)
}

// stringNote describes a string that is binary data: a base64 data URI, or
// a long run of base64.
func stringNote(s string) (string, bool) {
	if rest, ok := strings.CutPrefix(s, "data:"); ok {
		if meta, payload, ok := strings.Cut(rest, ","); ok && strings.HasSuffix(meta, ";base64") {
			mimeType := strings.TrimSuffix(meta, ";base64")
			return notShown("data URI", mimeType, decodedLen(payload)), true
		}
	}
	if len(s) >= minBase64 && isBase64(s) {
		return notShown("base64", "", decodedLen(s)), true
	}
	return "", false
}

// isBase64 reports whether s is standard base64, padded or not, of
// binary data: upper and lower case letters and digits all occur, which a
// run of filler ("xxx...") or lowercase hex never has.
func isBase64(s string) bool {
	var upper, lower, digit bool
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'A' <= c && c <= 'Z':
			upper = true
		case 'a' <= c && c <= 'z':
			lower = true
		case '0' <= c && c <= '9':
			digit = true
		case c == '+' || c == '/' || c == '=':
		default:
			return false
		}
	}
	if !upper || !lower || !digit {
		return false
	}
	// "=" only at the end, at most two, and a length base64 can have.
	trimmed := strings.TrimRight(s, "=")
	return !strings.Contains(trimmed, "=") && len(s)-len(trimmed) <= 2 && len(trimmed)%4 != 1
}

// decodedLen is the size of the data base64 text s encodes.
func decodedLen(s string) int {
	return base64.RawStdEncoding.DecodedLen(len(strings.TrimRight(s, "=")))
}

// blobIsText reports whether a resource blob is text (a text/* or JSON,
// XML or YAML type, valid UTF-8 without NULs), so that the model reads it
// instead of a note that something was not shown.
func blobIsText(r *mcp.ResourceContents) bool {
	mediaType, _, err := mime.ParseMediaType(r.MIMEType)
	if err != nil {
		return false
	}
	textual := strings.HasPrefix(mediaType, "text/")
	for _, suffix := range []string{"json", "xml", "yaml"} {
		textual = textual || mediaType == "application/"+suffix || strings.HasSuffix(mediaType, "+"+suffix)
	}
	return textual && utf8.Valid(r.Blob) && bytes.IndexByte(r.Blob, 0) < 0
}
