package catalog

// Changes of a ToolChange.
const (
	Added   = "added"
	Removed = "removed"
	Changed = "changed"
)

// Comparison is two catalogs compared tool by tool, by name.
type Comparison struct {
	// Before and After are the two arrays; Delta is After minus Before.
	// Their turn figures both use the after catalog's requests per turn, so
	// that the delta is the catalog's change alone.
	RequestsPerTurn int     `json:"requests_per_turn"`
	Before          Figures `json:"before"`
	After           Figures `json:"after"`
	Delta           Figures `json:"delta"`
	// Tools lists the tools added, removed or changed (their definition's
	// digest differs): the after catalog's order, then the removed ones in
	// the before catalog's order.
	Tools []ToolChange `json:"tools"`
	// Unchanged counts the tools whose definition is byte for byte the same.
	Unchanged int `json:"unchanged"`
}

// Figures are the size of one tools array.
type Figures struct {
	Tools      int `json:"tools"`
	Bytes      int `json:"bytes"`
	Tokens     int `json:"tokens"`
	TurnTokens int `json:"turn_tokens"`
}

// ToolChange is one tool added, removed or changed. Before is nil for an
// added tool and After for a removed one; the deltas count a missing side
// as zero.
type ToolChange struct {
	Name   string    `json:"name"`
	Server string    `json:"server"`
	Change string    `json:"change"`
	Before *ToolSize `json:"before"`
	After  *ToolSize `json:"after"`
	// BytesDelta and TokensDelta are the definition's, MarginalDelta its
	// marginal cost's.
	BytesDelta    int `json:"bytes_delta"`
	TokensDelta   int `json:"tokens_delta"`
	MarginalDelta int `json:"marginal_delta"`
}

// ToolSize is one definition's size in one catalog.
type ToolSize struct {
	Bytes          int `json:"bytes"`
	Tokens         int `json:"tokens"`
	MarginalTokens int `json:"marginal_tokens"`
}

// Compare compares two catalogs, before and after a change.
func Compare(before, after *Catalog) *Comparison {
	n := after.RequestsPerTurn
	figures := func(c *Catalog) Figures {
		return Figures{Tools: c.Total.Tools, Bytes: c.Total.Bytes, Tokens: c.Total.Tokens, TurnTokens: n * c.Total.Tokens}
	}
	cmp := &Comparison{RequestsPerTurn: n, Before: figures(before), After: figures(after), Tools: []ToolChange{}}
	cmp.Delta = Figures{
		Tools: cmp.After.Tools - cmp.Before.Tools, Bytes: cmp.After.Bytes - cmp.Before.Bytes,
		Tokens: cmp.After.Tokens - cmp.Before.Tokens, TurnTokens: cmp.After.TurnTokens - cmp.Before.TurnTokens,
	}
	old := make(map[string]*Tool, len(before.Tools))
	for i := range before.Tools {
		old[before.Tools[i].Name] = &before.Tools[i]
	}
	seen := map[string]bool{}
	for i := range after.Tools {
		a := &after.Tools[i]
		seen[a.Name] = true
		b := old[a.Name]
		switch {
		case b == nil:
			cmp.Tools = append(cmp.Tools, toolChange(Added, nil, a))
		case b.SHA256 != a.SHA256:
			cmp.Tools = append(cmp.Tools, toolChange(Changed, b, a))
		default:
			cmp.Unchanged++
		}
	}
	for i := range before.Tools {
		if b := &before.Tools[i]; !seen[b.Name] {
			cmp.Tools = append(cmp.Tools, toolChange(Removed, b, nil))
		}
	}
	return cmp
}

func toolChange(change string, before, after *Tool) ToolChange {
	tc := ToolChange{Change: change}
	var b, a ToolSize
	if before != nil {
		tc.Name, tc.Server = before.Name, before.Server
		b = ToolSize{Bytes: before.Bytes, Tokens: before.Tokens, MarginalTokens: before.MarginalTokens}
		tc.Before = &b
	}
	if after != nil {
		tc.Name, tc.Server = after.Name, after.Server
		a = ToolSize{Bytes: after.Bytes, Tokens: after.Tokens, MarginalTokens: after.MarginalTokens}
		tc.After = &a
	}
	tc.BytesDelta, tc.TokensDelta, tc.MarginalDelta = a.Bytes-b.Bytes, a.Tokens-b.Tokens, a.MarginalTokens-b.MarginalTokens
	return tc
}
