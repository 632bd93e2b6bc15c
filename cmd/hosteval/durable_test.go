package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/servers/fixturetest"
)

// caseDone is a finished case as progress prints it outside a terminal.
var caseDone = regexp.MustCompile(`(?m)^\[\d+/\d+\] PASS  (\S+) `)

// TestRunLosesNoReportedCase: a case reported finished is in records.jsonl,
// whatever ends the run next: SIGKILL (nothing can be flushed after it) or
// two Ctrl-Cs. Records are synced off the cases' path, so this is what the
// group commit must not give up.
func TestRunLosesNoReportedCase(t *testing.T) {
	for _, stop := range []string{"kill", "interrupt twice"} {
		t.Run(stop, func(t *testing.T) {
			dir := t.TempDir()
			fixturetest.WriteFiles(t, dir, lookupSuite(5000, ""))
			p := startHosteval(t, dir, nil, "run", "-run-id", "r1", "-concurrency", "4", "-logs", "failed", "suite.yaml")
			p.until(t, "30 finished cases", func() bool { return len(caseDone.FindAllString(p.stderr.String(), -1)) >= 30 })
			switch stop {
			case "kill":
				p.signal(t, syscall.SIGKILL)
			default:
				p.signal(t, os.Interrupt)
				p.signal(t, os.Interrupt)
			}
			p.exitCode(t)
			reported := caseDone.FindAllStringSubmatch(p.stderr.String(), -1)
			run, err := record.ReadRun(filepath.Join(dir, "results", "r1"))
			if err != nil {
				t.Fatal(err)
			}
			recorded := map[string]bool{}
			for _, rec := range run.Records {
				recorded[rec.CaseID] = true
			}
			var lost []string
			for _, m := range reported {
				if !recorded[m[1]] {
					lost = append(lost, m[1])
				}
			}
			if len(lost) > 0 {
				t.Errorf("%d of %d cases reported finished are not in records.jsonl: %s", len(lost), len(reported), strings.Join(lost, ", "))
			}
			if len(run.Records) < len(reported) || len(run.Records) >= 5000 {
				t.Errorf("%d records for %d reported cases, want at least as many, and fewer than all 5000", len(run.Records), len(reported))
			}
		})
	}
}

// lookupSuite is a cheap suite on one shared cmdb: the lookup scenario
// repeated n times, then more, another scenario's text.
func lookupSuite(n int, more string) map[string]string {
	return map[string]string{
		"servers.yaml": fmt.Sprintf("servers:\n  cmdb:\n    command: %s/cmdb\n    shareable: true\n", fixtureBin),
		"suite.yaml":   fixturetest.LookupScenario(n) + more,
	}
}
