package main

import (
	"os"
	"path/filepath"
	"slices"
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
