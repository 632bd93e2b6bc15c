package fixturetest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"
)

// BuildCached builds the main packages pkgs (import paths), with -race if
// race, into a folder named for what goes into them, under the user's cache
// folder, and returns it. A plain `go test ./...` starts nine test binaries
// that build fixture servers; each linked its own copy of the same
// binaries (7 CPU-seconds for the five servers) before they were kept: a
// folder is reused as long as go list reports the same build IDs for the
// packages (their sources, their dependencies', the toolchain and the
// flags), and a new one is made whole in a temporary folder, then renamed
// into place, so that a test never runs a binary another one is writing.
// Folders unused for a week are removed.
func BuildCached(race bool, pkgs ...string) (string, error) {
	goTool := goCommand()
	list := []string{"list", "-export", "-f", "{{.ImportPath}} {{.BuildID}}"}
	build := []string{"build"}
	if race {
		list = append(list, "-race")
		build = append(build, "-race")
	}
	ids, err := exec.Command(goTool, append(list, pkgs...)...).Output()
	if err != nil {
		return "", fmt.Errorf("go list the fixture servers: %w%s", err, stderrOf(err))
	}
	sum := sha256.Sum256(ids)
	root := cacheRoot()
	dir := filepath.Join(root, hex.EncodeToString(sum[:12]))
	if _, err := os.Stat(dir); err == nil {
		now := time.Now()
		os.Chtimes(dir, now, now) // in use: not pruned
		return dir, nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(root, ".build-")
	if err != nil {
		return "", err
	}
	cmd := exec.Command(goTool, append(append(build, "-o", tmp+string(filepath.Separator)), pkgs...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("build the fixture servers: %v\n%s", err, out)
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another test binary made the same folder first: it is the same.
		os.RemoveAll(tmp)
		if _, serr := os.Stat(dir); serr != nil {
			return "", err
		}
	}
	prune(root, dir)
	return dir, nil
}

// cacheRoot is where the built fixtures are kept.
func cacheRoot() string {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "hosteval-fixtures")
}

// prune removes the folders of root, other than keep, unused for a week
// (and builds abandoned for a day).
func prune(root, keep string) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		p := filepath.Join(root, e.Name())
		info, err := e.Info()
		if err != nil || p == keep {
			continue
		}
		age := time.Since(info.ModTime())
		if age > 7*24*time.Hour || (e.Name()[0] == '.' && age > 24*time.Hour) {
			os.RemoveAll(p)
		}
	}
}

func goCommand() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok && len(ee.Stderr) > 0 {
		return "\n" + string(ee.Stderr)
	}
	return ""
}
