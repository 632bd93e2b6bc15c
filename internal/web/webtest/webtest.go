// Package webtest drives hosteval's pages in a real browser from Go tests:
// a headless Chromium (Debian's chromium package, which `make test`
// installs) through chromedp, and screenshots kept as test artifacts.
package webtest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hosteval/hosteval/internal/longtest"
)

// ArtifactsEnv names the folder screenshots go to (default: a folder under
// the system's temporary directory). `make test` sets it to artifacts/.
const ArtifactsEnv = "HOSTEVAL_ARTIFACTS"

// ChromiumPath returns the browser to run, or "" when none is installed.
// HOSTEVAL_CHROMIUM names one explicitly.
func ChromiumPath() string {
	if p := os.Getenv("HOSTEVAL_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// Browser starts a headless Chromium for the test and returns a context
// for chromedp.Run, with a deadline that ends a stuck page. The browser
// and its profile go when the test ends. Without Chromium the test is
// skipped on a workstation, and fails in CI (CI set), where a skipped
// browser test would hide a missing install step.
func Browser(t testing.TB) context.Context {
	t.Helper()
	// A page in a real browser costs seconds of CPU: the browser tests
	// are long tests (HOSTEVAL_LONG_TESTS=1, which make test sets), so
	// that a plain go test ./... stays within two minutes of CPU.
	path := ChromiumPath()
	var missing error
	if path == "" {
		missing = errors.New("chromium is not installed")
	}
	longtest.Needs(t, "a page in headless Chromium", missing, "make browser-deps")
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // as root in CI; the pages are our own, on loopback
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
		// This machine has no network but loopback: the browser must not try.
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
	)
	// A browser start on a busy 2-core machine can take many seconds; the
	// deadline catches a page that never loads, not a slow machine.
	ctx, cancelTimeout := context.WithTimeout(context.Background(), 3*time.Minute)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
		cancelTimeout()
	})
	return bctx
}

// Screenshot saves a full-page PNG of the current page as
// <artifacts>/<test name>-<name>.png and logs where it went. It is a test
// artifact, never compared: a failed capture is logged, not fatal.
func Screenshot(t testing.TB, ctx context.Context, name string) string {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100 is PNG; below, JPEG
	if err != nil {
		t.Logf("screenshot %s: %v", name, err)
		return ""
	}
	dir := os.Getenv(ArtifactsEnv)
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "hosteval-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Logf("screenshot %s: %v", name, err)
		return ""
	}
	file := filepath.Join(dir, safeName(t.Name()+"-"+name)+".png")
	if err := os.WriteFile(file, png, 0o644); err != nil {
		t.Logf("screenshot %s: %v", name, err)
		return ""
	}
	t.Logf("screenshot: %s", file)
	return file
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func safeName(s string) string { return unsafeChars.ReplaceAllString(s, "_") }
