package replay

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Miss is a request a cassette in Replay mode does not hold. It says what
// differs from the nearest recorded request, so that a changed tool
// description or a changed answer of a server reads as such.
type Miss struct {
	// Path is the cassette's file.
	Path string
	// Request numbers the request among those the case asked (from 1).
	Request int
	// Nearest numbers the recorded exchange most like the request (from
	// 1); 0 when the cassette is empty.
	Nearest int
	// Changes say what differs from the nearest recorded request, e.g.
	// `tool cmdb__get_asset: description changed: "Get one asset." -> "Fetch one asset."`.
	Changes []string
}

// maxChanges bounds the changes Error lists.
const maxChanges = 6

func (m *Miss) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cassette %s: request %d is not recorded", m.Path, m.Request)
	if m.Nearest == 0 {
		b.WriteString(" (the cassette is empty); record it again with -record")
		return b.String()
	}
	fmt.Fprintf(&b, "; against recorded request %d: ", m.Nearest)
	shown := m.Changes[:min(len(m.Changes), maxChanges)]
	b.WriteString(strings.Join(shown, "; "))
	if n := len(m.Changes) - len(shown); n > 0 {
		fmt.Fprintf(&b, "; and %d more", n)
	}
	return b.String()
}

func (c *Cassette) miss(req any) *Miss {
	m := &Miss{Path: c.path, Request: c.requests}
	for i, s := range c.exchanges {
		changes := diffRequests(s.request, req)
		better := m.Nearest == 0 || len(changes) < len(m.Changes) ||
			len(changes) == len(m.Changes) && i == c.requests-1 // the same place in the case
		if better {
			m.Nearest, m.Changes = i+1, changes
		}
	}
	if m.Nearest != 0 && len(m.Changes) == 0 {
		// Equal but for key order or encoding, which the key does hold.
		m.Changes = []string{"the same fields in another order"}
	}
	return m
}

// absent stands for a field one side does not have.
type absent struct{}

// items stands for the length of a list that differs in length only.
type items int

// diffRequests lists what differs between a recorded request and a new
// one: the model, the sampling parameters, the tools (by name) and the
// messages (by number, from 1).
func diffRequests(old, cur any) []string {
	o, ok1 := old.(*object)
	n, ok2 := cur.(*object)
	if !ok1 || !ok2 {
		return []string{"the request is not a JSON object"}
	}
	var changes []string
	field := func(obj *object, key string) any {
		if v, ok := obj.get(key); ok {
			return v
		}
		return absent{}
	}
	if a, b := field(o, "model"), field(n, "model"); !equal(a, b) {
		changes = append(changes, fmt.Sprintf("model %s -> %s", describe(a), describe(b)))
	}
	var params []string
	for _, k := range append(slices.Clone(o.keys), n.keys...) {
		if k != "model" && k != "messages" && k != "tools" && !slices.Contains(params, k) {
			params = append(params, k)
		}
	}
	for _, k := range params {
		a, b := field(o, k), field(n, k)
		if equal(a, b) {
			continue
		}
		p, av, bv := firstDiff(a, b, k)
		changes = append(changes, fmt.Sprintf("%s %s -> %s", p, describe(av), describe(bv)))
	}
	changes = append(changes, diffTools(list(field(o, "tools")), list(field(n, "tools")))...)
	changes = append(changes, diffMessages(list(field(o, "messages")), list(field(n, "messages")))...)
	return changes
}

func list(v any) []any {
	a, _ := v.([]any)
	return a
}

func diffTools(old, cur []any) []string {
	name := func(t any) string {
		if o, ok := t.(*object); ok {
			if f, ok := o.get("function"); ok {
				if fo, ok := f.(*object); ok {
					if s, ok := fo.get("name"); ok {
						if s, ok := s.(string); ok {
							return s
						}
					}
				}
			}
			if s, ok := o.get("name"); ok {
				if s, ok := s.(string); ok {
					return s
				}
			}
		}
		return "?"
	}
	index := func(ts []any) ([]string, map[string]any) {
		names := make([]string, 0, len(ts))
		byName := map[string]any{}
		for _, t := range ts {
			names = append(names, name(t))
			byName[name(t)] = t
		}
		return names, byName
	}
	oldNames, oldTools := index(old)
	newNames, newTools := index(cur)
	var changes []string
	for _, nm := range newNames {
		ot, ok := oldTools[nm]
		if !ok {
			changes = append(changes, fmt.Sprintf("tool %s: added", nm))
			continue
		}
		nt := newTools[nm]
		if equal(ot, nt) {
			continue
		}
		p, a, b := firstDiff(ot, nt, "")
		p = strings.TrimPrefix(strings.TrimPrefix(p, "."), "function.")
		switch p {
		case "description":
			changes = append(changes, fmt.Sprintf("tool %s: description changed: %s -> %s", nm, describe(a), describe(b)))
		case "":
			changes = append(changes, fmt.Sprintf("tool %s: changed: %s -> %s", nm, describe(a), describe(b)))
		default:
			changes = append(changes, fmt.Sprintf("tool %s: %s changed: %s -> %s", nm, p, describe(a), describe(b)))
		}
	}
	for _, nm := range oldNames {
		if _, ok := newTools[nm]; !ok {
			changes = append(changes, fmt.Sprintf("tool %s: removed", nm))
		}
	}
	if len(changes) == 0 && !slices.Equal(oldNames, newNames) {
		changes = append(changes, "tools: the same tools in another order")
	}
	return changes
}

func diffMessages(old, cur []any) []string {
	var changes []string
	if len(old) != len(cur) {
		changes = append(changes, fmt.Sprintf("%d messages, recorded %d", len(cur), len(old)))
	}
	for i := range min(len(old), len(cur)) {
		if equal(old[i], cur[i]) {
			continue
		}
		p, a, b := firstDiff(old[i], cur[i], "")
		if p = strings.TrimPrefix(p, "."); p != "" {
			p += " "
		}
		changes = append(changes, fmt.Sprintf("message %d differs: %s%s -> %s", i+1, p, describe(a), describe(b)))
	}
	return changes
}

func equal(a, b any) bool {
	if _, ok := a.(absent); ok {
		_, ok := b.(absent)
		return ok
	}
	if _, ok := b.(absent); ok {
		return false
	}
	return string(compact(a)) == string(compact(b))
}

// firstDiff finds where a and b first differ: the path to it (".key" and
// "[i]" steps, "" when they differ at the top) and the two values there.
func firstDiff(a, b any, path string) (string, any, any) {
	switch at := a.(type) {
	case *object:
		bt, ok := b.(*object)
		if !ok {
			break
		}
		for i, k := range at.keys {
			bv, ok := bt.get(k)
			if !ok {
				return path + "." + k, at.vals[i], absent{}
			}
			if !equal(at.vals[i], bv) {
				return firstDiff(at.vals[i], bv, path+"."+k)
			}
		}
		for i, k := range bt.keys {
			if _, ok := at.get(k); !ok {
				return path + "." + k, absent{}, bt.vals[i]
			}
		}
	case []any:
		bt, ok := b.([]any)
		if !ok {
			break
		}
		for i := range min(len(at), len(bt)) {
			if !equal(at[i], bt[i]) {
				return firstDiff(at[i], bt[i], path+"["+strconv.Itoa(i)+"]")
			}
		}
		if len(at) != len(bt) {
			return path, items(len(at)), items(len(bt))
		}
	case string:
		if bs, ok := b.(string); ok {
			as, bs := excerpts(at, bs)
			return path, as, bs
		}
	}
	return path, a, b
}

// excerptWidth is how many characters of a long text are shown on each
// side of where two texts first differ.
const excerptWidth = 32

// maxWhole is the length up to which a text is shown whole.
const maxWhole = 100

// excerpts cuts two long texts to the neighbourhood of their first
// difference, marking what was cut with "...". Short texts are shown whole.
func excerpts(a, b string) (string, string) {
	if len(a) <= maxWhole && len(b) <= maxWhole {
		return a, b
	}
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	for i > 0 && !utf8.RuneStart(a[i]) {
		i--
	}
	cut := func(s string) string {
		start := max(0, i-excerptWidth)
		for start > 0 && !utf8.RuneStart(s[start]) {
			start--
		}
		end := min(len(s), i+excerptWidth)
		for end < len(s) && !utf8.RuneStart(s[end]) {
			end++
		}
		out := s[start:end]
		if start > 0 {
			out = "..." + out
		}
		if end < len(s) {
			out += "..."
		}
		return out
	}
	return cut(a), cut(b)
}

// maxDescribed bounds how much of an object or array a change shows.
const maxDescribed = 80

func describe(v any) string {
	switch t := v.(type) {
	case absent:
		return "(absent)"
	case items:
		if t == 1 {
			return "1 item"
		}
		return fmt.Sprintf("%d items", int(t))
	case string:
		return strconv.Quote(t)
	case json.Number:
		return string(t)
	case *object, []any:
		s := string(compact(t))
		if len(s) > maxDescribed {
			s = s[:maxDescribed] + "..."
		}
		return s
	}
	return string(compact(v))
}
