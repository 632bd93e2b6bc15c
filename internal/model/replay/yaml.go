package replay

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"
)

// toNode renders a JSON tree as YAML, value for value: strings stay strings
// (quoted when YAML would read them as something else), numbers keep the
// digits they were written with, and text of several lines becomes a
// literal block, so a cassette reads like the conversation it holds.
func toNode(v any) *yaml.Node {
	switch t := v.(type) {
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: fmt.Sprint(t)}
	case json.Number:
		tag := "!!int"
		if strings.ContainsAny(string(t), ".eE") {
			tag = "!!float"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: string(t)}
	case string:
		n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: t}
		switch {
		case literalFits(t):
			n.Style = yaml.LiteralStyle
		case strings.Contains(t, "\n"):
			// yaml.v3 would pick a literal block itself and lose a leading
			// newline; quoted text keeps every character.
			n.Style = yaml.DoubleQuotedStyle
		}
		return n
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		if len(t) == 0 {
			n.Style = yaml.FlowStyle
		}
		for _, e := range t {
			n.Content = append(n.Content, toNode(e))
		}
		return n
	case *object:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		if len(t.keys) == 0 {
			n.Style = yaml.FlowStyle
		}
		for i, k := range t.keys {
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, toNode(t.vals[i]))
		}
		return n
	case toolsRef:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: toolsTag, Value: string(t)}
	}
	panic(fmt.Sprintf("replay: toNode %T", v))
}

// literalFits reports whether s reads well, and reads back the same, as a
// literal block: several lines of printable text without trailing blanks.
// Anything else is left to the encoder, which quotes what it must.
func literalFits(s string) bool {
	if !strings.Contains(strings.TrimSuffix(s, "\n"), "\n") {
		return false
	}
	for line := range strings.SplitSeq(s, "\n") {
		if strings.TrimRight(line, " \t") != line {
			return false
		}
	}
	if strings.HasPrefix(s, " ") || strings.HasPrefix(s, "\n") || strings.HasSuffix(s, "\n\n") {
		return false
	}
	for _, r := range s {
		if r != '\n' && r != '\t' && (!unicode.IsPrint(r) || r == '\uFEFF') {
			return false
		}
	}
	return true
}

// fromNode reads a JSON tree back from YAML written by toNode, or edited by
// hand within JSON's values: an alias, a key that is not a string or a
// number JSON cannot hold is an error naming its line.
func fromNode(n *yaml.Node) (any, error) {
	return fromNodeDepth(n, 0, false)
}

// fromNodeRefs is fromNode of a request, whose top-level values may be
// references to the cassette's tools ([toolsRef]).
func fromNodeRefs(n *yaml.Node) (any, error) {
	return fromNodeDepth(n, 0, true)
}

func fromNodeDepth(n *yaml.Node, depth int, refs bool) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("line %d: nested more than %d deep", n.Line, maxDepth)
	}
	switch n.Kind {
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return nil, nil
		case "!!bool":
			var b bool
			if err := n.Decode(&b); err != nil {
				return nil, err
			}
			return b, nil
		case "!!int", "!!float":
			if !json.Valid([]byte(n.Value)) {
				return nil, fmt.Errorf("line %d: %s is not a JSON number", n.Line, n.Value)
			}
			return json.Number(n.Value), nil
		case "!!str":
			return n.Value, nil
		case toolsTag:
			if refs && depth == 1 {
				return toolsRef(n.Value), nil
			}
		}
		return nil, fmt.Errorf("line %d: %s values have no JSON form", n.Line, n.ShortTag())
	case yaml.SequenceNode:
		a := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := fromNodeDepth(c, depth+1, false)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		return a, nil
	case yaml.MappingNode:
		o := &object{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
				return nil, fmt.Errorf("line %d: a key must be a string", k.Line)
			}
			v, err := fromNodeDepth(n.Content[i+1], depth+1, refs)
			if err != nil {
				return nil, err
			}
			o.keys = append(o.keys, k.Value)
			o.vals = append(o.vals, v)
		}
		return o, nil
	case yaml.AliasNode:
		return nil, fmt.Errorf("line %d: aliases are not allowed in a cassette", n.Line)
	}
	return nil, fmt.Errorf("line %d: unexpected YAML node", n.Line)
}

// YAMLOf renders a JSON document as YAML, value for value, the way a
// cassette keeps its bodies: for other recordings of JSON (a server
// cassette's answers) that a person reads in a diff.
func YAMLOf(data []byte) (*yaml.Node, error) {
	v, err := parse(data)
	if err != nil {
		return nil, err
	}
	return toNode(v), nil
}

// JSONOf is the compact JSON document a node written by YAMLOf holds,
// keys in the order written.
func JSONOf(n *yaml.Node) ([]byte, error) {
	v, err := fromNode(n)
	if err != nil {
		return nil, err
	}
	return compact(v), nil
}
