package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/servers/fixturetest"
)

// caseDirServers is a servers file whose probe server uses ${CASE_DIR}.
const caseDirServers = `servers:
  probe:
    command: /bin/sh
    args: ["-c", "exit 0", "probe", "${CASE_DIR}", "$${CASE_DIR}"]
    env: {PROBE_DIR: "${CASE_DIR}/state.jsonl", HOME_IS: "${HOME}"}
    dir: ${CASE_DIR}/sub
  plain:
    command: /bin/sh
`

// TestPrepareDirIsFresh: the case folder starts empty but for the
// scenario's files, even in a run folder used before.
func TestPrepareDirIsFresh(t *testing.T) {
	testEnv(t)
	dir := fixturetest.WriteTree(t, map[string]string{
		"servers.yaml":                       caseDirServers,
		"s.yaml":                             "name: s\nservers: [probe]\nquestion: q\nfiles: {sub/in.txt: alpha}\nmodel: {scripted: [{answer: ok}]}\n",
		"run/cases/0001-s_0/files/stale.txt": "from an earlier run",
	})
	cases := loadCases(t, filepath.Join(dir, "s.yaml"))
	got, err := PrepareCaseDir(cases[0], filepath.Join(dir, "run/cases/0001-s_0"))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "run/cases/0001-s_0/files"); got != want {
		t.Errorf("folder %q, want %q", got, want)
	}
	var found []string
	filepath.WalkDir(got, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(got, p)
			found = append(found, filepath.ToSlash(rel))
		}
		return nil
	})
	if diff := cmp.Diff([]string{"sub/in.txt"}, found); diff != "" {
		t.Errorf("files in the case folder (-want +got):\n%s", diff)
	}
}

// TestRunGivesEachCaseItsFolder runs real cases whose "server" is a shell
// that records what it was given, then exits: ${CASE_DIR} in its args, env
// and dir is the case's own folder under the run's, the files are there
// before it starts, and two repeats get two folders. The scenario expects
// the server not to connect, so the cases pass.
func TestRunGivesEachCaseItsFolder(t *testing.T) {
	testEnv(t)
	dir := fixturetest.WriteTree(t, map[string]string{
		"servers.yaml": `servers:
  probe:
    command: /bin/sh
    args: ["-c", 'pwd > "$1/pwd.txt"; printf %s "$PROBE_FILE" > "$1/env.txt"; cat in.txt > "$1/copy.txt"; exit 3', probe, "${CASE_DIR}"]
    env: {PROBE_FILE: "${CASE_DIR}/memory.jsonl"}
    dir: ${CASE_DIR}/sub
`,
		"s.yaml": `name: folder
servers: [probe]
repeat: 2
files: {sub/in.txt: "written before the start\n"}
model: {scripted: [{answer: ok}]}
question: q
expect:
  - {server: probe, connected: false}
`,
	})
	cases := loadCases(t, filepath.Join(dir, "s.yaml"))
	runDir := filepath.Join(dir, "results", "r1")
	res, err := Run(context.Background(), cases, Options{Dir: runDir, RunID: "r1", Concurrency: 2, Preflight: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Passed != 2 {
		t.Fatalf("result = %+v, want 2 passed", res)
	}
	run, err := record.ReadRun(runDir)
	if err != nil {
		t.Fatal(err)
	}
	folders := map[string]bool{}
	for _, rec := range run.Records {
		if rec.Status != record.StatusPass || !strings.Contains(rec.Servers[0].Error, "exited with status 3") {
			t.Errorf("%s: status %s, server error %q; want pass, exited with status 3", rec.CaseID, rec.Status, rec.Servers[0].Error)
		}
		caseDir := filepath.Join(runDir, strings.TrimSuffix(rec.Logs["log"], ".jsonl"), "files")
		folders[caseDir] = true
		want := map[string]string{
			"pwd.txt":  filepath.Join(caseDir, "sub") + "\n",
			"env.txt":  filepath.Join(caseDir, "memory.jsonl"),
			"copy.txt": "written before the start\n",
		}
		for name, content := range want {
			data, err := os.ReadFile(filepath.Join(caseDir, name))
			if err != nil || string(data) != content {
				t.Errorf("%s: %s = %q (%v), want %q", rec.CaseID, name, data, err, content)
			}
		}
	}
	if len(folders) != 2 {
		t.Errorf("case folders %v, want one per case", folders)
	}
}
