// Package goldenfile owns the golden files of tests: it compares a test's
// output with a file under testdata, and rewrites the file instead when
// the test binary runs with -update (go test ./... -update). It registers
// the -update flag, so a test package that imports it defines none.
package goldenfile

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// Check compares got with the file at path, or writes got to it with -update.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

// Updating reports whether the test binary runs with -update: a test whose
// golden file is expensive to compute computes it only then.
func Updating() bool { return *update }
