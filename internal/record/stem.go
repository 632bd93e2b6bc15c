package record

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
)

var unsafeInPath = regexp.MustCompile(`[^a-zA-Z0-9._-]+`)

// unsafeInPathRune is unsafeInPath for one rune: most IDs are safe as they
// are, and are not run through the expression.
func unsafeInPathRune(r rune) bool {
	return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '.' || r == '_' || r == '-')
}

// maxStemID bounds the part of a case's file names that comes from its ID.
// A file name has 255 bytes at most; with the index before it and
// ".wire.jsonl" after it, 100 leaves room, and the names stay readable.
const maxStemID = 100

// CaseStem is a case's name in the run folder: its 1-based index (idx is
// 0-based) and its ID made safe for a file name. Its log is
// cases/<stem>.jsonl and its transcript transcripts/<stem>.md. An ID too
// long for a file name (a long scenario, variant or model name) is cut,
// and a short hash of the whole ID keeps cut names apart.
func CaseStem(idx int, id string) string {
	safe := id
	if strings.ContainsFunc(id, unsafeInPathRune) {
		safe = unsafeInPath.ReplaceAllString(id, "_")
	}
	safe = strings.Trim(safe, "_")
	if len(safe) > maxStemID {
		sum := sha256.Sum256([]byte(id))
		safe = strings.TrimRight(safe[:maxStemID-9], "_.-") + "-" + hex.EncodeToString(sum[:4])
	}
	return fmt.Sprintf("%04d-%s", idx+1, safe)
}
