package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/servers/fixturetest"
)

// TestRunFolderThatCannotBeMade: the run folder and the shared servers'
// log are made while the servers start; when either cannot be, the run
// says so, as when they were made first: no case runs, no record is
// reported, and no server is left running. The folder's parent is a file
// (the mkdir fails); shared-servers.jsonl is a folder (the create fails).
func TestRunFolderThatCannotBeMade(t *testing.T) {
	for _, tc := range []struct {
		name    string
		prepare func(t *testing.T, root string) string // the run folder
		want    string
		errno   syscall.Errno
	}{
		{"folder", func(t *testing.T, root string) string {
			file := filepath.Join(root, "file")
			if err := os.WriteFile(file, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(file, "run")
		}, "create run folder: ", syscall.ENOTDIR},
		{"shared log", func(t *testing.T, root string) string {
			dir := filepath.Join(root, "run")
			if err := os.MkdirAll(filepath.Join(dir, "shared-servers.jsonl"), 0o755); err != nil {
				t.Fatal(err)
			}
			return dir
		}, "create shared server log: ", syscall.EISDIR},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cases := suite(t, fixturetest.LookupScenario(3))
			groups := host.NewProcessGroups()
			opts := Options{RunID: "r", Concurrency: 2, Share: true, Preflight: true, Logs: LogsNone, Groups: groups}
			opts.Dir = tc.prepare(t, t.TempDir())
			var reported int
			opts.OnCase = func(*record.Record, Result) { reported++ }
			res, err := Run(context.Background(), cases, opts)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || !errors.Is(err, tc.errno) {
				t.Fatalf("Run: %v, want an error %q... (%v)", err, tc.want, tc.errno)
			}
			if res != nil || reported != 0 {
				t.Errorf("result %v and %d cases reported, want none", res, reported)
			}
			if n := groups.Len(); n != 0 {
				t.Errorf("%d servers left running", n)
			}
		})
	}
}
