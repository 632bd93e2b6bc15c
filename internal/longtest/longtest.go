// Package longtest owns the one opt-in for the tests too long for a plain
// `go test ./...` (a run of 100,000 records, the npm peers' scenarios,
// the pages in headless Chromium): they run when HOSTEVAL_LONG_TESTS=1,
// which `make test` sets. A plain `go test ./...` stays within two
// minutes of CPU on two cores; what it leaves out is said in each skipped
// test's message.
package longtest

import (
	"os"
	"testing"
)

// Env is the opt-in's environment variable; "1" turns the long tests on.
const Env = "HOSTEVAL_LONG_TESTS"

// On reports whether the long tests were asked for.
func On() bool { return os.Getenv(Env) == "1" }

// Require skips t unless the long tests were asked for, saying what it
// would have taken and how to run it.
func Require(t testing.TB, what string) {
	t.Helper()
	if !On() {
		t.Skipf("a long test (%s): it runs with %s=1, as make test sets it", what, Env)
	}
}

// Needs is for a long test that needs something installed (what, with
// missing saying why it is not there, nil when it is): without the opt-in
// the test is skipped, naming both; with it, a missing dependency fails
// the test, as make test installs it first.
func Needs(t testing.TB, what string, missing error, install string) {
	t.Helper()
	switch {
	case !On() && missing != nil:
		t.Skipf("a long test (%s), and %v: it runs with %s=1 after %s", what, missing, Env, install)
	case !On():
		t.Skipf("a long test (%s): it runs with %s=1, as make test sets it", what, Env)
	case missing != nil:
		t.Fatalf("%s=1 asks for the long tests, but %v: run %s", Env, missing, install)
	}
}
