package host

import (
	"context"
	"testing"

	"github.com/hosteval/hosteval/internal/tokens"
)

// TestPoolSharesTables: hosts whose servers are all shared, with the same
// lists and descriptions, get one table, built once; another description
// gives another table, and a host with a server of its own builds its own.
func TestPoolSharesTables(t *testing.T) {
	ctx := context.Background()
	toks := tokens.NewCache()
	pool := NewPool(Options{})
	defer pool.Close()
	cmdb := fixture("cmdb")
	cmdb.Shareable = true
	start := func(opts Options) *Host {
		t.Helper()
		opts.Pool, opts.Tokens = pool, toks
		h, err := Start(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close() })
		return h
	}
	a := start(Options{Servers: []ServerSpec{cmdb}})
	b := start(Options{Servers: []ServerSpec{cmdb}})
	if a.table.Load() != b.table.Load() {
		t.Error("two hosts of one configuration on shared servers built two tables")
	}
	if got := len(a.ModelTools()); got != len(a.Offered()) || got == 0 {
		t.Errorf("%d model tools for %d offered", got, len(a.Offered()))
	}
	if &a.ModelTools()[0] != &b.ModelTools()[0] {
		t.Error("the model's tool list was made again for the same table")
	}
	described := start(Options{Servers: []ServerSpec{cmdb}, Descriptions: map[string]string{"cmdb__get_asset": "Look a host up."}})
	if described.table.Load() == a.table.Load() {
		t.Error("a host with another description got the same table")
	}
	if got := described.table.Load().all["cmdb__get_asset"].Description; got != "[cmdb] Look a host up." {
		t.Errorf("description = %q", got)
	}
	own := start(Options{Servers: []ServerSpec{cmdb, fixture("tickets")}})
	if own.table.Load() == a.table.Load() || len(own.Tools()) <= len(a.Tools()) {
		t.Errorf("a host with a server of its own: %d tools, want its own table with more than %d", len(own.Tools()), len(a.Tools()))
	}
}
