package longtest

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestOptIn runs this test binary again with and without the opt-in, for
// a test that requires it and one that needs a missing dependency, and
// checks what each run says and how it ends.
func TestOptIn(t *testing.T) {
	if os.Getenv("LONGTEST_CHILD") != "" {
		return
	}
	missing := "tools/node is not installed"
	tests := []struct {
		name, run, optIn string
		wantFail         bool
		says             string
	}{
		{"off: skipped", "TestChildRequire", "", false, "--- SKIP: TestChildRequire"},
		{"off: skip names the opt-in", "TestChildRequire", "", false, "a long test (the child): it runs with HOSTEVAL_LONG_TESTS=1, as make test sets it"},
		{"on: runs", "TestChildRequire", "1", false, "the child ran"},
		{"other values are off", "TestChildRequire", "yes", false, "--- SKIP: TestChildRequire"},
		{"off, missing: skipped naming both", "TestChildNeeds", "", false, "a long test (the child), and " + missing + ": it runs with HOSTEVAL_LONG_TESTS=1 after make node-deps"},
		{"on, missing: fails", "TestChildNeeds", "1", true, "HOSTEVAL_LONG_TESTS=1 asks for the long tests, but " + missing + ": run make node-deps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run", "^"+tt.run+"$", "-test.v")
			cmd.Env = append(os.Environ(), "LONGTEST_CHILD=1", Env+"="+tt.optIn)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if failed := errors.As(err, &ee); failed != tt.wantFail || (err != nil && !failed) {
				t.Errorf("%s with %s=%q: error %v, want failure %v\n%s", tt.run, Env, tt.optIn, err, tt.wantFail, out)
			}
			if !strings.Contains(string(out), tt.says) {
				t.Errorf("%s with %s=%q does not say %q:\n%s", tt.run, Env, tt.optIn, tt.says, out)
			}
		})
	}
}

func TestChildRequire(t *testing.T) {
	if os.Getenv("LONGTEST_CHILD") == "" {
		t.Skip("run by TestOptIn")
	}
	Require(t, "the child")
	t.Log("the child ran")
}

func TestChildNeeds(t *testing.T) {
	if os.Getenv("LONGTEST_CHILD") == "" {
		t.Skip("run by TestOptIn")
	}
	Needs(t, "the child", errors.New("tools/node is not installed"), "make node-deps")
	t.Log("the child ran")
}
