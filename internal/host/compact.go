package host

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The model's text of structured content is the compact JSON that
// encoding/json writes for the decoded value with binary data scrubbed
// (marshalCompact(scrubBinary(v))), but written here by hand: the decoder
// gives maps, slices, strings, float64s, bools and nils, and a walk over
// them writes the same bytes as the reflection encoder without its copies
// of every map key and value (a quarter of a call's allocations), and
// without a scrubbed copy of the whole value. compact_test.go holds it to
// the encoder's bytes.

// appendModelJSON appends the compact JSON of v, scrubbed of binary data
// as scrubBinary does, to dst. keys is scratch space for the sorted keys of
// the objects being written, shared down the walk. It reports false for a
// value it does not know (not from a JSON decoder); dst is then unusable.
func appendModelJSON(dst []byte, v any, keys *[]string) ([]byte, bool) {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...), true
	case bool:
		return strconv.AppendBool(dst, v), true
	case float64:
		return appendFloat(dst, v)
	case string:
		if note, ok := stringNote(v); ok {
			v = note
		}
		return appendString(dst, v), true
	case []any:
		// scrubBinary copies a nil slice into an empty one: "[]", not "null".
		dst = append(dst, '[')
		for i, x := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			var ok bool
			if dst, ok = appendModelJSON(dst, x, keys); !ok {
				return dst, false
			}
		}
		return append(dst, ']'), true
	case map[string]any:
		if note, ok := binaryNote(v); ok {
			return appendString(dst, note), true
		}
		// The object's keys go on the shared stack, sorted as the encoder
		// sorts them, and come off when it is written.
		base := len(*keys)
		for k := range v {
			*keys = append(*keys, k)
		}
		slices.SortFunc((*keys)[base:], strings.Compare)
		dst = append(dst, '{')
		for i := base; i < len(*keys); i++ {
			k := (*keys)[i]
			if i > base {
				dst = append(dst, ',')
			}
			dst = appendString(dst, k)
			dst = append(dst, ':')
			var ok bool
			if dst, ok = appendModelJSON(dst, v[k], keys); !ok {
				return dst, false
			}
		}
		clear((*keys)[base:])
		*keys = (*keys)[:base]
		return append(dst, '}'), true
	}
	return dst, false
}

// appendFloat writes f as encoding/json writes a float64: like
// JavaScript, %f within [1e-6, 1e21), else %e with a short exponent.
func appendFloat(dst []byte, f float64) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return dst, false
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// e-09 is written e-9.
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, true
}

// appendString writes s quoted as encoding/json writes it without HTML
// escaping: \" \\ \b \f \n \r \t, other control bytes as \u00XX, invalid
// UTF-8 as \ufffd, and U+2028 and U+2029 escaped.
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
