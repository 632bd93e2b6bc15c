package runner

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/hosteval/hosteval/internal/scenario"
)

// PrepareCaseDir makes the case folder, parent/files, fresh and empty, and
// writes the scenario's files into it. It returns the folder's absolute
// path, or "" when the case has no use for one (see
// [scenario.Case.UsesCaseDir]).
func PrepareCaseDir(c *scenario.Case, parent string) (string, error) {
	if !c.UsesCaseDir() {
		return "", nil
	}
	dir, err := filepath.Abs(filepath.Join(parent, "files"))
	if err != nil {
		return "", fmt.Errorf("case folder: %w", err)
	}
	// A run folder used again (-run-id) must not hand a case what an
	// earlier case left.
	if err := os.RemoveAll(dir); err != nil {
		return "", fmt.Errorf("case folder: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("case folder: %w", err)
	}
	files := c.Files()
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(files)) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			errs = append(errs, fmt.Errorf("case file %s: %w", name, err))
			continue
		}
		if err := os.WriteFile(p, []byte(files[name]), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("case file %s: %w", name, err))
		}
	}
	return dir, errors.Join(errs...)
}
