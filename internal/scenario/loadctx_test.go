package scenario

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadStopsWhenItsContextEnds: loading checks its context before each
// file and each document, so that a Ctrl-C while a large suite loads is
// acted on: nothing after the file being read when it came is read, and
// the error says why.
func TestLoadStopsWhenItsContextEnds(t *testing.T) {
	t.Setenv("HOSTEVAL_TEST_TOKEN", "tok")
	errStop := errors.New("interrupted")
	folder := filepath.Join("testdata", "valid", "scenarios")

	t.Run("between files", func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(context.Background())
		l := newLoader()
		l.caseDir, l.ctx = true, ctx
		var read []string
		l.readFile = func(name string) ([]byte, error) {
			read = append(read, filepath.Base(name))
			cancel(errStop) // the interrupt comes while the first file is read
			return os.ReadFile(name)
		}
		_, err := l.load([]string{folder})
		if !errors.Is(err, errStop) || !strings.Contains(err.Error(), "loading the scenarios stopped: interrupted") {
			t.Errorf("load error = %v, want it to wrap the interrupt", err)
		}
		if len(read) != 1 {
			t.Errorf("files read: %q, want only the first", read)
		}
		// The first file has several documents: none was read after the
		// interrupt.
		if n := len(l.suite.Scenarios); n != 0 {
			t.Errorf("%d scenarios read after the interrupt, want 0", n)
		}
	})

	t.Run("before loading", func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(errStop)
		if _, err := LoadContext(ctx, folder); !errors.Is(err, errStop) {
			t.Errorf("LoadContext with an ended context: error %v, want the interrupt", err)
		}
	})

	t.Run("not interrupted", func(t *testing.T) {
		suite, err := LoadContext(context.Background(), folder)
		if err != nil {
			t.Fatal(err)
		}
		if len(suite.Scenarios) < 2 {
			t.Errorf("%d scenarios, want the folder's", len(suite.Scenarios))
		}
	})
}
