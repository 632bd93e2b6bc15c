// Package shellwords splits a command line into words the way a POSIX
// shell does for the simple cases, so that a person can write a server's
// command on the command line (hosteval catalog -add 'name=node "my dir/x.js"').
// Nothing is expanded: no variables, globs or substitutions.
package shellwords

import (
	"errors"
	"fmt"
	"strings"
)

// Split splits s into words: blanks (space, tab, newline) separate them,
// '...' is literal, "..." keeps blanks, and a backslash outside '...'
// escapes the next character.
func Split(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	var quote rune
	escaped := false
	for _, r := range s {
		switch {
		case escaped:
			w.WriteRune(r)
			escaped = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				w.WriteRune(r)
			}
		case r == '\\':
			escaped, inWord = true, true
		case quote == '"':
			if r == '"' {
				quote = 0
			} else {
				w.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote", quote)
	}
	if escaped {
		return nil, errors.New("a backslash ends the command")
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}
