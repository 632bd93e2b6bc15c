package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/lint"
	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/servers/fixturetest"
)

// TestRunLints: with Options.Lint the servers the cases use are linted
// once each before any case, even with the preflight off, and run.json
// keeps what was found: the poisoned server's findings, none of the clean
// one's, and, against a lock pinned from the clean catalog, the drifted
// description as pin-changed with its diff. The cases run either way.
func TestRunLints(t *testing.T) {
	servers := fmt.Sprintf(`servers:
  cmdb: {command: %[1]s/cmdb}
  poison: {command: %[1]s/poison, args: [-catalog, poisoned]}
  clean: {command: %[1]s/poison, args: [-catalog, clean]}
  drifted: {command: %[1]s/poison, args: [-catalog, clean, -drift]}
`, fixtureBin)
	scenarios := func(server string) string {
		return fmt.Sprintf(`name: one
servers: [cmdb, %s]
model: {scripted: [{answer: hi}]}
question: hi
repeat: 2
`, server)
	}
	cleanCases := suiteWith(t, servers, scenarios("clean"))
	pinned, err := Run(context.Background(), cleanCases, Options{Dir: filepath.Join(t.TempDir(), "clean"), Lint: &lint.Options{Namespace: host.Namespaced}})
	if err != nil {
		t.Fatal(err)
	}
	if pinned.Lint == nil || len(pinned.Lint.Findings) != 0 || pinned.Lint.Failed {
		t.Fatalf("clean: lint %+v, want no finding", pinned.Lint)
	}
	for _, tc := range []struct {
		server    string
		pinned    bool
		wantRules []string
	}{
		{"poison", false, []string{"add:conceal-from-user", "delete_note:destructive-unannotated", "get_forecast:unicode-tags"}},
		{"drifted", true, []string{":pin-changed", "add_note:pin-changed", "get_forecast:pin-changed"}},
	} {
		t.Run(tc.server, func(t *testing.T) {
			opts := &lint.Options{Namespace: host.Namespaced}
			if tc.pinned {
				lock := pinClean(t)
				opts.Pins, opts.PinsFile = lock, "hosteval.lock"
			}
			dir := filepath.Join(t.TempDir(), tc.server)
			res, err := Run(context.Background(), suiteWith(t, servers, scenarios(tc.server)), Options{Dir: dir, Lint: opts})
			if err != nil {
				t.Fatal(err)
			}
			if res.Ran != 2 || res.Lint == nil || !res.Lint.Failed {
				t.Fatalf("ran %d cases, lint %+v; want 2 cases and a failed lint", res.Ran, res.Lint)
			}
			run, err := record.ReadRun(dir)
			if err != nil || run.Info == nil || run.Info.Lint == nil {
				t.Fatalf("run.json without its lint: %v", err)
			}
			got := run.Info.Lint
			if !got.Failed || got.FailOn != "error" || !slices.Equal(got.Servers, []string{"cmdb", tc.server}) {
				t.Errorf("run.json lint: failed %v, fail_on %q, servers %v", got.Failed, got.FailOn, got.Servers)
			}
			var rules []string
			diffs := 0
			for _, f := range got.Findings {
				rules = append(rules, f.Tool+":"+f.Rule)
				diffs += len(f.Diff)
			}
			for _, want := range tc.wantRules {
				if !slices.Contains(rules, want) {
					t.Errorf("run.json lint findings %v, want %s among them", rules, want)
				}
			}
			if tc.pinned && (len(rules) != 5 || diffs != 2 || got.Pins != "hosteval.lock") {
				// The two pin-changed, cmdb not pinned, and what the
				// drift brings in: secret-reference and
				// exfiltration-parameter.
				t.Errorf("drifted: findings %v with %d diff lines, pins %q; want 5 findings, 2 diff lines", rules, diffs, got.Pins)
			}
		})
	}
}

// pinClean pins the clean catalog of poison under the name drifted, as
// the go-sdk client lists it (canonical JSON makes its bytes the host's).
func pinClean(t *testing.T) *lint.Lock {
	t.Helper()
	s := fixturetest.Start(t, filepath.Join(fixtureBin, "poison"), fixturetest.Options{Args: []string{"-catalog", "clean"}})
	res, err := s.Session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	init := s.Session.InitializeResult()
	srv := lint.Server{Name: "drifted", ServerName: init.ServerInfo.Name, ServerVersion: init.ServerInfo.Version, Instructions: init.Instructions}
	for _, tool := range res.Tools {
		raw, err := json.Marshal(tool)
		if err != nil {
			t.Fatal(err)
		}
		srv.Tools = append(srv.Tools, raw)
	}
	lock, err := lint.Pin([]lint.Server{srv})
	if err != nil {
		t.Fatal(err)
	}
	return lock
}
