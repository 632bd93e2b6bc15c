package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/scenario"
)

// TestDefaultSuite runs the suite that `make run` runs (scenarios/, apart
// from scenarios/thirdparty, which TestThirdPartyScenarios runs), against
// this test binary's build of the fixture servers, and wants every case to
// pass: a change of behaviour that the suite's expectations pin shows up in
// `go test`, not first in `make run`.
func TestDefaultSuite(t *testing.T) {
	testEnv(t)
	dir := t.TempDir()
	files, err := filepath.Glob("../../scenarios/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario files in ../../scenarios (%v)", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Base(f) == "servers.yaml" {
			// The suite's servers are ../bin/NAME, built by `make build`;
			// here they are this binary's fresh fixture build.
			data = []byte(strings.ReplaceAll(string(data), "../bin/", fixtureBin+"/"))
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The real-model scenarios replay from the suite's committed cassettes;
	// the routing eval reads its rows and the saved catalogs.
	for _, folder := range []string{"cassettes", "routing", "catalogs"} {
		abs, err := filepath.Abs(filepath.Join("../../scenarios", folder))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(abs, filepath.Join(dir, folder)); err != nil {
			t.Fatal(err)
		}
	}
	suite, err := scenario.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	cases, err := suite.Cases(scenario.CaseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "suite")
	res, err := Run(context.Background(), cases, Options{Dir: out, RunID: "suite", Concurrency: 4, Share: true, Preflight: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Ran != len(cases) || res.Passed != len(cases) {
		t.Errorf("ran %d of %d: %d passed, %d failed, %d errors; want all passed", res.Ran, len(cases), res.Passed, res.Failed, res.Errors)
	}
	run, err := record.ReadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range run.Records {
		if rec.Status != record.StatusPass {
			t.Errorf("%s (%s:%d): %s%s", rec.CaseID, rec.File, rec.Line, rec.Status, failures(rec))
		}
	}
}
