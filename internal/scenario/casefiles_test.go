package scenario

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/servers/fixturetest"
)

// writeFile writes text to dir/name, making folders as needed, and returns
// its path.
func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const caseDirServers = `servers:
  probe:
    command: /bin/sh
    args: ["-c", "exit 0", "probe", "${CASE_DIR}", "$${CASE_DIR}"]
    env: {PROBE_DIR: "${CASE_DIR}/state.jsonl", HOME_IS: "${HOME}"}
    dir: ${CASE_DIR}/sub
  plain:
    command: /bin/sh
`

// TestCaseDirLoads: ${CASE_DIR} is accepted in args, env and dir although
// it is not in the environment, kept until the case's folder is known, and
// expanded only there ($$ still escapes it).
func TestCaseDirLoads(t *testing.T) {
	testEnv(t)
	t.Setenv("HOME", "/home/probe")
	dir := fixturetest.WriteTree(t, map[string]string{
		"servers.yaml": caseDirServers,
		"s.yaml": `name: uses
servers: [probe, plain]
files:
  sub/in.txt: "alpha\n"
  ./notes/b.md: "# b"
  n.txt: 42
model: {scripted: [{answer: ok}]}
question: q
`,
	})
	cases := loadCases(t, filepath.Join(dir, "s.yaml"))
	c := cases[0]
	if !c.UsesCaseDir() {
		t.Error("UsesCaseDir = false, want true")
	}
	wantFiles := map[string]string{"sub/in.txt": "alpha\n", "notes/b.md": "# b", "n.txt": "42"}
	if diff := cmp.Diff(wantFiles, c.Files()); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}

	tests := []struct {
		name    string
		opts    host.Options
		caseDir string
	}{
		{"HostOptions keeps it as written", c.HostOptions(), "${CASE_DIR}"},
		{"HostOptionsIn expands it", c.HostOptionsIn("/runs/r1/cases/0001-uses_0/files"), "/runs/r1/cases/0001-uses_0/files"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			probe := tt.opts.Servers[0]
			want := host.ServerSpec{
				Name: "probe", Command: "/bin/sh",
				Args: []string{"-c", "exit 0", "probe", tt.caseDir, "${CASE_DIR}"},
				Env:  []string{"PROBE_DIR=" + tt.caseDir + "/state.jsonl", "HOME_IS=/home/probe"},
				Dir:  tt.caseDir + "/sub",
			}
			if diff := cmp.Diff(want, probe); diff != "" {
				t.Errorf("probe (-want +got):\n%s", diff)
			}
			if plain := tt.opts.Servers[1]; plain.Dir != "" || len(plain.Args) != 0 {
				t.Errorf("plain = %+v, want no dir, no args", plain)
			}
		})
	}
}

// TestCaseDirProblems: where ${CASE_DIR} and files may not go, each with
// the line and the field's path.
func TestCaseDirProblems(t *testing.T) {
	tests := []struct {
		name    string
		servers string
		files   string
		want    []string
	}{
		{
			name:    "in command",
			servers: "  x:\n    command: ${CASE_DIR}/bin/server\n",
			want:    []string{"servers.yaml:3: servers.x.command: ${CASE_DIR} is only for args, env and dir"},
		},
		{
			name:    "in url and headers",
			servers: "  x:\n    url: http://localhost/${CASE_DIR}\n    headers: {X-Dir: \"${CASE_DIR}\"}\n",
			want: []string{
				"servers.yaml:3: servers.x.url: ${CASE_DIR} is only for args, env and dir",
				"servers.yaml:4: servers.x.headers: ${CASE_DIR} is only for args, env and dir",
			},
		},
		{
			name:    "in a shareable server",
			servers: "  x:\n    command: /bin/sh\n    env: {F: \"${CASE_DIR}/f\"}\n    shareable: true\n",
			want:    []string{"servers.yaml:5: servers.x.shareable: a shareable server cannot use ${CASE_DIR}: it outlives the case whose folder it would get"},
		},
		{
			name:    "not first in dir",
			servers: "  x:\n    command: /bin/sh\n    dir: sub/${CASE_DIR}\n",
			want:    []string{"servers.yaml:4: servers.x.dir: ${CASE_DIR} must start the folder, e.g. ${CASE_DIR}/sub"},
		},
		{
			name:    "files outside the folder",
			servers: "  x:\n    command: /bin/sh\n    args: [\"${CASE_DIR}\"]\n",
			files:   "files:\n  /etc/passwd: x\n  ../up.txt: x\n  a/../..: x\n  .: x\n",
			want: []string{
				`s.yaml:5: files: "/etc/passwd": want a relative path inside the case folder, e.g. notes/a.txt`,
				`s.yaml:6: files: "../up.txt": want a relative path inside the case folder, e.g. notes/a.txt`,
				`s.yaml:7: files: "a/../..": want a relative path inside the case folder, e.g. notes/a.txt`,
				`s.yaml:8: files: ".": want a relative path inside the case folder, e.g. notes/a.txt`,
			},
		},
		{
			name:    "files that clash",
			servers: "  x:\n    command: /bin/sh\n    args: [\"${CASE_DIR}\"]\n",
			files:   "files:\n  a.txt: x\n  ./a.txt: y\n  d: x\n  d/e.txt: x\n  f.txt: {not: text}\n  g.txt:\n",
			want: []string{
				`s.yaml:6: files: "./a.txt" is the same file as the one at line 5`,
				`s.yaml:8: files: "d/e.txt" is inside "d", which is a file`,
				`s.yaml:9: files.f.txt: want the file's text, got a mapping`,
				`s.yaml:10: files.g.txt: want the file's text, got nothing`,
			},
		},
		{
			name:    "files nobody sees",
			servers: "  x:\n    command: /bin/sh\n",
			files:   "files: {a.txt: x}\n",
			want:    []string{"s.yaml:4: files: no server of this scenario uses ${CASE_DIR}, so none would see these files"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testEnv(t)
			dir := fixturetest.WriteTree(t, map[string]string{
				"servers.yaml": "servers:\n" + tt.servers,
				"s.yaml":       "name: s\nservers: [x]\nquestion: q\n" + tt.files + "model: {scripted: [{answer: ok}]}\n",
			})
			t.Chdir(dir)
			_, err := Load("s.yaml")
			var le *LoadError
			if !errors.As(err, &le) {
				t.Fatalf("Load: %v, want a *LoadError", err)
			}
			var got []string
			for _, p := range le.Problems {
				got = append(got, p.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLoadServersCaseDir: outside a run (tools, chat, catalog) there is no
// case, and ${CASE_DIR} is a variable like any other.
func TestLoadServersCaseDir(t *testing.T) {
	dir := fixturetest.WriteTree(t, map[string]string{"servers.yaml": caseDirServers})
	path := filepath.Join(dir, "servers.yaml")
	t.Setenv("HOME", "/home/probe")

	t.Setenv("CASE_DIR", "")
	os.Unsetenv("CASE_DIR")
	_, err := LoadServers(path, "probe")
	if err == nil || !strings.Contains(err.Error(), "environment variable CASE_DIR is not set (hosteval run sets ${CASE_DIR} to a fresh folder for each case") {
		t.Errorf("LoadServers without CASE_DIR: %v, want it to say what sets it", err)
	}

	t.Setenv("CASE_DIR", "/tmp/mine")
	specs, err := LoadServers(path, "probe")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := specs[0].Args[3], "/tmp/mine"; got != want {
		t.Errorf("args[3] = %q, want %q", got, want)
	}
	if got, want := specs[0].Dir, "/tmp/mine/sub"; got != want {
		t.Errorf("dir = %q, want %q", got, want)
	}
}

// loadCases loads a scenario file and expands it into cases.
func loadCases(tb testing.TB, path string) []*Case {
	tb.Helper()
	s, err := Load(path)
	if err != nil {
		tb.Fatal(err)
	}
	cases, err := s.Cases(CaseOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	return cases
}
