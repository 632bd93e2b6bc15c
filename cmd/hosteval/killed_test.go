package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/web"
	"github.com/hosteval/hosteval/internal/web/view"
	"github.com/hosteval/hosteval/servers/fixturetest"
)

// TestKilledRunReadsIncomplete: a hosteval run killed with SIGKILL
// mid-way (as the OOM killer does) left records that every pass: its
// folder must read as "N of 5000 cases recorded; the run did not finish"
// in report, gate (which fails unless -partial), merge (which refuses the
// shard) and view (which shows it incomplete, not running), never as a
// whole green run.
func TestKilledRunReadsIncomplete(t *testing.T) {
	dir := t.TempDir()
	files := lookupSuite(5000, "")
	files["gates.yaml"] = "gates:\n  - \"pass_rate >= 1\"\n"
	fixturetest.WriteFiles(t, dir, files)
	// A shard of one, so that merge can be asked to join it.
	p := startHosteval(t, dir, nil, "run", "-run-id", "r1", "-shard", "1/1", "-concurrency", "4", "-logs", "failed", "suite.yaml")
	p.until(t, "30 finished cases", func() bool { return len(caseDone.FindAllString(p.stderr.String(), -1)) >= 30 })
	p.signal(t, syscall.SIGKILL)
	p.exitCode(t)

	runDir := filepath.Join(dir, "results", "r1")
	run, err := record.ReadRun(runDir)
	if err != nil {
		t.Fatal(err)
	}
	if run.Info == nil || run.Info.Process == nil || run.Info.Process.PID != p.cmd.Process.Pid {
		t.Fatalf("run.json's process is %+v, want pid %d", run.Info.Process, p.cmd.Process.Pid)
	}
	n := len(run.Records)
	if n < 30 || n >= 5000 {
		t.Fatalf("%d records, want at least the 30 reported and fewer than 5000", n)
	}
	want := fmt.Sprintf("%d of 5000 cases recorded; the run did not finish", n)

	hosteval := func(args ...string) (int, string) {
		t.Helper()
		var out bytes.Buffer
		e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &out, getenv: func(k string) string {
			if k == "CI" {
				return "true"
			}
			return ""
		}}
		return runEnv(context.Background(), e, args), out.String()
	}
	gates := filepath.Join(dir, "gates.yaml")
	tests := []struct {
		name string
		args []string
		code int
		says []string
	}{
		{"report", []string{"report", runDir}, exitOK, []string{"warning: " + want}},
		{"report -format json", []string{"report", "-format", "json", runDir}, exitOK, []string{`"incomplete": "` + want + `"`}},
		{"gate", []string{"gate", "-gates", gates, runDir}, exitFailed, []string{"THE RUN IS INCOMPLETE: 2 reasons", "run r1: " + want, "-partial lets an incomplete run pass"}},
		{"gate -partial", []string{"gate", "-partial", "-gates", gates, runDir}, exitOK, []string{"run r1: " + want, "an incomplete run may pass (-partial)"}},
		{"compare", []string{"compare", runDir, runDir}, exitFailed, []string{"compare: run r1: " + want, "the comparison is of an incomplete run (-partial lets it pass)"}},
		{"compare -partial", []string{"compare", "-partial", runDir, runDir}, exitOK, []string{"compare: run r1: " + want}},
		{"merge", []string{"merge", "-out", t.TempDir(), "-run-id", "m", runDir}, exitInfra, []string{"not every shard finished: shard 1/1 (" + runDir + "): " + want}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out := hosteval(tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\n%s", code, tt.code, out)
			}
			for _, s := range tt.says {
				if !strings.Contains(out, s) {
					t.Errorf("the output does not say %q:\n%s", s, out)
				}
			}
			if strings.Contains(out, fmt.Sprintf("%d passed, 0 failed, 0 errored (pass rate 100", n)) && !strings.Contains(out, want) {
				t.Errorf("a green line without the run's incompleteness:\n%s", out)
			}
		})
	}

	t.Run("view", func(t *testing.T) {
		v, err := view.New(view.Options{Dir: filepath.Join(dir, "results")})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(web.Secure(v))
		t.Cleanup(func() {
			srv.Close()
			v.Close()
		})
		for _, page := range []string{"/", "/runs/r1/"} {
			resp, err := http.Get(srv.URL + page)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			html := string(body)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s: %d\n%s", page, resp.StatusCode, html)
			}
			if strings.Contains(html, ">running<") || !strings.Contains(html, ">incomplete<") {
				t.Errorf("%s does not show the killed run as incomplete (and not running):\n%s", page, html)
			}
			if page != "/" && !strings.Contains(html, want) {
				t.Errorf("%s does not say %q:\n%s", page, want, html)
			}
		}
	})
}
