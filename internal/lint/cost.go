package lint

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/hosteval/hosteval/internal/catalog"
)

// Cost: the findings of hosteval catalog (internal/catalog's own code, its
// Findings), one lint finding per tool concerned, in bytes: counting a
// catalog's tokens takes too long to lint thousands of tools on every pull
// request. hosteval catalog gives the tokens. The catalog is taken as
// listed: each tool's own name and description, in the function format a
// host sends.

// costKinds maps a catalog finding's kind to its rule, and where in the tool
// the finding is.
var costKinds = map[string]struct {
	rule    string
	pointer string
}{
	catalog.KindSchemaKeyword:   {"cost-schema-keyword", "/inputSchema/$schema"},
	catalog.KindRepeatedDefs:    {"cost-repeated-defs", "/inputSchema/$defs"},
	catalog.KindHTMLEscaping:    {"cost-html-escaping", ""},
	catalog.KindLongDescription: {"cost-long-description", "/description"},
}

// costFindings are the catalog's findings over the tools linted, made once
// for the four cost rules.
func (p *pass) costFindings() []catalog.Finding {
	p.costOnce.Do(func() { p.cost = p.findCost() })
	return p.cost
}

func (p *pass) findCost() []catalog.Finding {
	var entries []catalog.Entry
	for _, t := range p.tools() {
		if t.tree == nil {
			continue
		}
		def, err := listedDef(t)
		if err != nil {
			continue
		}
		entries = append(entries, catalog.Entry{Name: t.name, Server: t.server.Name, Def: def})
	}
	findings, err := catalog.Findings(p.ctx, entries, catalog.Options{LongTokens: p.opts.Config.LongTokens, Form: catalog.FormListed})
	if err != nil {
		return nil // a cancelled context: Lint returns its error
	}
	return findings
}

// listedDef is the tool in the function format, as listed: its own name and
// description, its inputSchema as it wrote it. It writes what
// encoding/json writes of {"type":"function","function":{name,
// description (omitted when empty), parameters}} with HTML escaping off
// (TestListedDef holds the two equal), without its reflection: the
// strings go through one encoder, the schema is compacted once.
func listedDef(t *tool) (json.RawMessage, error) {
	var b bytes.Buffer
	b.Grow(len(t.rawInput) + len(t.name) + len(t.description) + 64)
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	str := func(s string) error {
		if err := enc.Encode(s); err != nil {
			return err
		}
		b.Truncate(b.Len() - 1) // Encode's newline
		return nil
	}
	b.WriteString(`{"type":"function","function":{"name":`)
	if err := str(t.name); err != nil {
		return nil, err
	}
	if t.description != "" {
		b.WriteString(`,"description":`)
		if err := str(t.description); err != nil {
			return nil, err
		}
	}
	b.WriteString(`,"parameters":`)
	if len(t.rawInput) == 0 {
		b.WriteString(`{"type":"object"}`)
	} else if err := json.Compact(&b, t.rawInput); err != nil {
		return nil, err
	}
	b.WriteString("}}")
	return b.Bytes(), nil
}

func checkCost(kind string) func(*run) {
	return func(p *run) {
		for _, f := range p.costFindings() {
			if f.Kind != kind {
				continue
			}
			where := costKinds[kind]
			for _, ft := range f.Tools {
				s := p.byName[ft.Server]
				if s == nil {
					continue
				}
				var t *tool
				for _, c := range s.tools {
					if c.name == ft.Name {
						t = c
						break
					}
				}
				if t == nil {
					continue
				}
				pointer := where.pointer
				if kind == catalog.KindRepeatedDefs {
					if _, ok := t.input["$defs"]; !ok {
						pointer = "/inputSchema/definitions"
					}
				}
				p.report(s, t, &textAt{pointer: pointer, field: fieldOf(pointer)}, 0, "", costMessage(kind, ft))
			}
		}
	}
}

func costMessage(kind string, ft catalog.FindingTool) string {
	var msg string
	switch kind {
	case catalog.KindSchemaKeyword:
		msg = fmt.Sprintf(`"$schema" in the input schema: dropping it saves %s of every model request`, plural(ft.Bytes, "byte"))
	case catalog.KindRepeatedDefs:
		msg = fmt.Sprintf("the same schema definitions block as %s: sharing it saves %s of every model request", ft.SameAs, plural(ft.Bytes, "byte"))
	case catalog.KindHTMLEscaping:
		msg = fmt.Sprintf(`%d "<", ">" or "&": a host that escapes them as \u003c sends %s more with every model request`, ft.Count, plural(ft.Bytes, "byte"))
	case catalog.KindLongDescription:
		msg = fmt.Sprintf("a long description (%s): %s of every model request", ft.Note, plural(ft.Bytes, "byte"))
	}
	if ft.Note != "" && kind != catalog.KindLongDescription {
		msg += " (" + ft.Note + ")"
	}
	return msg
}

// fieldOf is a pointer's field: "/inputSchema/$defs" is "inputSchema.$defs".
func fieldOf(pointer string) string {
	out := ""
	for i := 1; i < len(pointer); i++ {
		if pointer[i] == '/' {
			out += "."
			continue
		}
		out += string(pointer[i])
	}
	if out == "" {
		return "(the whole tool)"
	}
	return out
}
