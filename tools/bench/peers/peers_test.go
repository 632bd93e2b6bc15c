package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hosteval/hosteval/internal/interleave"
)

// BenchmarkEcho100VsSDK is the first row of issue 15's table: 100 echo
// calls on server-everything, hosteval run as a whole process against
// the bare go-sdk client as a program of its own, in turns. It needs
// make node-deps (server-everything) and builds both binaries first.
func BenchmarkEcho100VsSDK(b *testing.B) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	peers, err := job(root, dir, 100)
	if err != nil {
		b.Fatal(err)
	}
	side := func(p peer) interleave.Side {
		return interleave.Side{Name: p.name, Run: func() int {
			if _, err := timeRun(dir, p); err != nil {
				b.Fatal(err)
			}
			return 1
		}}
	}
	named := func(name string) peer {
		i := slices.IndexFunc(peers, func(p peer) bool { return p.name == name })
		if i < 0 {
			b.Fatalf("no peer %s", name)
		}
		return peers[i]
	}
	interleave.Measure(b, 1, "run", side(named("hosteval")), side(named("sdk")))
}

func TestMain(m *testing.M) {
	// The benchmark's processes must not inherit a test's CI settings.
	os.Unsetenv("HOSTEVAL_MODEL")
	os.Exit(m.Run())
}

// TestMedianInterval: the interval is the k-th smallest and k-th largest
// values, k = floor((n - 1.96 sqrt(n)) / 2), whatever their order.
func TestMedianInterval(t *testing.T) {
	for _, tc := range []struct {
		n      int
		lo, hi float64 // of the values 1..n
		ok     bool
	}{
		{7, 0, 0, false},      // k = floor((7 - 5.19) / 2) = 0
		{8, 1, 8, true},       // k = floor((8 - 5.54) / 2) = 1
		{60, 22, 39, true},    // k = floor((60 - 15.18) / 2) = 22
		{300, 133, 168, true}, // k = floor((300 - 33.95) / 2) = 133
	} {
		xs := make([]float64, tc.n)
		for i := range xs {
			xs[i] = float64((i*7)%tc.n + 1) // 1..n, shuffled (7 is prime to each n)
		}
		lo, hi, ok := medianInterval(xs)
		if ok != tc.ok || lo != tc.lo || hi != tc.hi {
			t.Errorf("n=%d: %v-%v (%v), want %v-%v (%v)", tc.n, lo, hi, ok, tc.lo, tc.hi, tc.ok)
		}
	}
}

// TestSelectPeers: -peers keeps the named peers in their order, and the
// floor always; a name that is no peer is an error that lists the peers.
func TestSelectPeers(t *testing.T) {
	all := []peer{{name: "sdk"}, {name: "sdk-host"}, {name: "hosteval"}, {name: "mcpvals", why: "not installed"}, {name: "promptfoo"}}
	for _, tc := range []struct {
		only, want, err string
	}{
		{"", "sdk sdk-host hosteval mcpvals promptfoo", ""},
		{"hosteval", "sdk hosteval", ""},
		{" hosteval , sdk-host,", "sdk sdk-host hosteval", ""},
		{"promptfoo,sdk", "sdk promptfoo", ""},
		{"mcpvals", "sdk mcpvals", ""},
		{"hostevl", "", `-peers: no peer "hostevl" (the peers: sdk, sdk-host, hosteval, mcpvals, promptfoo)`},
	} {
		got, err := selectPeers(all, tc.only)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: error %v, want %s", tc.only, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.only, err)
			continue
		}
		var names []string
		for _, p := range got {
			names = append(names, p.name)
		}
		if strings.Join(names, " ") != tc.want {
			t.Errorf("%q: %s, want %s", tc.only, strings.Join(names, " "), tc.want)
		}
	}
}
