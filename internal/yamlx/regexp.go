package yamlx

import (
	"regexp"

	"github.com/google/jsonschema-go/jsonschema"
)

// Regexp is a regular expression (RE2 syntax), compiled while reading: a
// bad one is a problem at its line.
type Regexp struct {
	*regexp.Regexp
}

// UnmarshalYAML compiles the text.
func (r *Regexp) UnmarshalYAML(n *Node) error {
	var s string
	if !n.Decode(&s) {
		return nil
	}
	re, err := regexp.Compile(s)
	if err != nil {
		return err
	}
	r.Regexp = re
	return nil
}

// JSONSchema is a string in the regex format.
func (*Regexp) JSONSchema(*Reflector) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Format: "regex"}
}
