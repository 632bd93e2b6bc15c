package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hosteval/hosteval/internal/goldenfile"
	"github.com/hosteval/hosteval/internal/host"
)

// testEnv sets the environment the test suites expect: the variables they
// use, and no model settings from the machine running the tests.
func testEnv(t *testing.T) {
	t.Helper()
	t.Setenv("HOSTEVAL_TEST_TOKEN", "tok")
	t.Setenv("HOSTEVAL_MODEL", "")
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("OPENAI_API_KEY", "")
}

// TestLoadBroken loads broken files and compares every problem reported,
// at once, with file:line and path, with a golden file.
func TestLoadBroken(t *testing.T) {
	tests := []struct {
		name  string
		paths []string
	}{
		{"many", []string{"testdata/broken/many.yaml"}},
		{"types", []string{"testdata/broken/types.yaml"}},
		{"env", []string{"testdata/broken/env.yaml"}},
		{"oauth", []string{"testdata/broken/oauth.yaml"}},
		{"models", []string{"testdata/broken/models.yaml"}},
		{"variants", []string{"testdata/broken/variants.yaml"}},
		{"expect", []string{"testdata/broken/expect.yaml"}},
		{"real", []string{"testdata/broken/real.yaml"}},
		{"syntax", []string{"testdata/broken/syntax.yaml"}},
		{"unquoted", []string{"testdata/broken/unquoted.yaml"}},
		{"badservers", []string{"testdata/broken/badservers/uses.yaml"}},
		{"missing", []string{"testdata/broken/nothing-here.yaml", "testdata/broken/no-folder"}},
		// A folder of two files, each fine alone, with the same scenario name.
		{"dup", []string{"testdata/broken/dup"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testEnv(t)
			suite, err := Load(tt.paths...)
			if err == nil {
				t.Fatalf("Load(%v) = %d scenarios, no error; want problems", tt.paths, len(suite.Scenarios))
			}
			var le *LoadError
			if !errors.As(err, &le) {
				t.Fatalf("Load(%v) error is %T, want *LoadError: %v", tt.paths, err, err)
			}
			if len(le.Problems) != strings.Count(err.Error(), "\n")+1 {
				t.Errorf("%d problems but %d lines in Error()", len(le.Problems), strings.Count(err.Error(), "\n")+1)
			}
			goldenfile.Check(t, filepath.Join("testdata/broken", tt.name+".golden"), []byte(err.Error()+"\n"))
		})
	}
}

func TestLoadProblemsSorted(t *testing.T) {
	testEnv(t)
	_, err := Load("testdata/broken/models.yaml", "testdata/broken/env.yaml")
	var le *LoadError
	if !errors.As(err, &le) {
		t.Fatalf("Load error = %v, want *LoadError", err)
	}
	for i := 1; i < len(le.Problems); i++ {
		a, b := le.Problems[i-1], le.Problems[i]
		if a.File > b.File || (a.File == b.File && a.Line > b.Line) {
			t.Errorf("problem %d (%s) sorts before problem %d (%s)", i, b, i-1, a)
		}
	}
	if got, want := le.Problems[0].File, "testdata/broken/env.yaml"; got != want {
		t.Errorf("first problem in %s, want %s", got, want)
	}
}

// caseView is what a case resolves to, for the golden file of the valid
// suite.
type caseView struct {
	ID           string
	Scenario     string
	Variant      string `json:",omitempty"`
	Model        string
	Repeat       int
	Pos          string
	System       string `json:",omitempty"`
	Turns        []string
	Timeout      string
	Options      optionsView
	StateChecks  []host.CallRequest `json:",omitempty"`
	Expectations []string
	Gates        []string `json:",omitempty"`
}

type serverView struct {
	Name, Command string
	Args, Env     []string
	InheritEnv    bool `json:",omitempty"`
	Dir, URL      string
	Headers       map[string]string
	AutoRun       []string
	Shareable     bool
}

type optionsView struct {
	Servers         []serverView
	Protocol        host.Mode         `json:",omitempty"`
	ConnectTimeout  string            `json:",omitempty"`
	DiscoverTimeout string            `json:",omitempty"`
	ToolTimeout     string            `json:",omitempty"`
	MaxResultBytes  int               `json:",omitempty"`
	MaxArgBytes     int               `json:",omitempty"`
	MaxSteps        int               `json:",omitempty"`
	MaxRounds       int               `json:",omitempty"`
	Allow           []string          `json:",omitempty"`
	Deny            []string          `json:",omitempty"`
	Descriptions    map[string]string `json:",omitempty"`
	NoElicitation   bool              `json:",omitempty"`
	Answers         []answerView      `json:",omitempty"`
	Approvals       []string          `json:",omitempty"`
}

type answerView struct {
	Server, Message, Key, Action string
	Content                      map[string]any `json:",omitempty"`
}

func durationText(d interface{ String() string }, zero bool) string {
	if zero {
		return ""
	}
	return d.String()
}

func viewCase(t *testing.T, c *Case) caseView {
	t.Helper()
	o := c.HostOptions()
	ov := optionsView{
		Protocol:        o.Protocol,
		ConnectTimeout:  durationText(o.ConnectTimeout, o.ConnectTimeout == 0),
		DiscoverTimeout: durationText(o.DiscoverTimeout, o.DiscoverTimeout == 0),
		ToolTimeout:     durationText(o.ToolTimeout, o.ToolTimeout == 0),
		MaxResultBytes:  o.MaxResultBytes, MaxArgBytes: o.MaxArgBytes, MaxSteps: o.MaxSteps, MaxRounds: o.MaxRounds,
		Allow: o.Allow, Deny: o.Deny, Descriptions: o.Descriptions, NoElicitation: o.NoElicitation,
	}
	for _, s := range o.Servers {
		ov.Servers = append(ov.Servers, serverView{Name: s.Name, Command: s.Command, Args: s.Args, Env: s.Env, InheritEnv: s.InheritEnv,
			Dir: s.Dir, URL: s.URL, Headers: s.Headers, AutoRun: s.AutoRun, Shareable: s.Shareable})
	}
	canned, ok := o.Elicitor.(host.Canned)
	if !ok {
		t.Fatalf("Elicitor is %T, want host.Canned", o.Elicitor)
	}
	for _, a := range canned.Answers {
		av := answerView{Server: a.Server, Key: a.Key, Action: a.Action, Content: a.Content}
		if a.Message != nil {
			av.Message = a.Message.String()
		}
		ov.Answers = append(ov.Answers, av)
	}
	approvals, ok := o.Approver.(host.CannedApprovals)
	if !ok {
		t.Fatalf("Approver is %T, want host.CannedApprovals", o.Approver)
	}
	ov.Approvals = approvals.Tools
	v := caseView{
		ID: c.ID, Scenario: c.Scenario.Name, Variant: c.Variant, Model: c.ModelName, Repeat: c.Repeat,
		Pos: c.Scenario.File + ":" + strconv.Itoa(c.Scenario.Line), System: c.System(), Turns: c.Turns(), Timeout: c.Timeout().String(),
		Options: ov, StateChecks: c.StateChecks(),
	}
	for _, e := range c.Scenario.expects {
		v.Expectations = append(v.Expectations, strconv.Itoa(e.line)+": "+e.check.name())
	}
	for _, g := range c.Scenario.Gates {
		v.Gates = append(v.Gates, g.Pos+": "+g.Text+" scenario="+g.Scenario.String())
	}
	return v
}

// TestLoadValid loads a folder of valid scenarios (with servers files found
// by walking up, named by servers_file, and inline servers) and compares
// every case it expands into, fully resolved, with a golden file.
func TestLoadValid(t *testing.T) {
	testEnv(t)
	suite, err := Load("testdata/valid/scenarios")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	var names []string
	for _, sc := range suite.Scenarios {
		names = append(names, sc.Name)
	}
	// Sorted by path; servers.yaml, gates.yaml, testdata/ and *.txt skipped.
	if diff := cmp.Diff([]string{"ticket-accepted", "lookup", "remote-only", "inline-only", "legacy-pinned"}, names); diff != "" {
		t.Errorf("scenarios (-want +got):\n%s", diff)
	}
	cases, err := suite.Cases(CaseOptions{})
	if err != nil {
		t.Fatalf("Cases: %v", err)
	}
	var views []caseView
	for _, c := range cases {
		views = append(views, viewCase(t, c))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(views); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	pkg, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(data), filepath.Join(pkg, "testdata"), "$TESTDATA")
	text = strings.ReplaceAll(text, pkg, "$PACKAGE")
	goldenfile.Check(t, "testdata/valid.golden", []byte(text))
}

// TestServerPaths checks path resolution and ${VAR} expansion of the valid
// servers file directly, so a wrong golden file cannot hide it.
func TestServerPaths(t *testing.T) {
	testEnv(t)
	suite, err := Load("testdata/valid/scenarios/basic.yaml", "testdata/valid/scenarios/sub/pinned.yaml", "testdata/valid/scenarios/inline.yaml")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	cases, err := suite.Cases(CaseOptions{Run: mustRE(t, "^(ticket-accepted|legacy-pinned|inline-only|remote-only)$")})
	if err != nil {
		t.Fatalf("Cases: %v", err)
	}
	valid, _ := filepath.Abs("testdata/valid")
	scenarios := filepath.Join(valid, "scenarios")
	module, _ := filepath.Abs(".")
	want := map[string][]host.ServerSpec{
		"ticket-accepted#0": {
			{
				Name: "cmdb", Command: filepath.Join(valid, "bin/cmdb"),
				Args:    []string{"-data", filepath.Join(valid, "data.json")},
				Env:     []string{"CMDB_X=1", "CMDB_TOKEN=tok", "PRICE=$5"},
				Dir:     valid,
				AutoRun: []string{"get_asset"}, Shareable: true,
			},
			// host.auto_run overrides the servers file for tickets.
			{Name: "tickets", Command: "go", Args: []string{"run", "./servers/tickets"}, Dir: module, InheritEnv: true, AutoRun: []string{"list_tickets"}},
		},
		"remote-only#0": {{Name: "remote", URL: "http://127.0.0.1:8080/mcp", Headers: map[string]string{"Authorization": "Bearer tok"}}},
		// servers_file wins over the servers.yaml next to the scenario.
		"legacy-pinned#0": {{Name: "legacy", Command: "/usr/bin/legacy-server", AutoRun: []string{}}},
		// Inline: ${HERE} and relative commands resolve against the scenario's folder.
		"inline-only#0": {{Name: "echo", Command: filepath.Join(valid, "bin/echo"), Args: []string{scenarios}, Shareable: true}},
	}
	shareable := map[string]bool{}
	for _, name := range []string{"cmdb", "tickets", "nope"} {
		shareable[name] = cases[0].Shareable(name)
	}
	if diff := cmp.Diff(map[string]bool{"cmdb": true, "tickets": false, "nope": false}, shareable); diff != "" {
		t.Errorf("Shareable (-want +got):\n%s", diff)
	}
	for _, c := range cases {
		got := c.HostOptions().Servers
		if diff := cmp.Diff(want[c.ID], got); diff != "" {
			t.Errorf("%s servers (-want +got):\n%s", c.ID, diff)
		}
	}
	if len(cases) != len(want) {
		t.Errorf("got %d cases, want %d", len(cases), len(want))
	}
}

func TestServersFileDiscovery(t *testing.T) {
	testEnv(t)
	const scenario = "name: s\nservers: [x]\nquestion: q\nmodel: {scripted: []}\n"

	t.Run("nearest above", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, dir, "servers.yaml", "servers: {x: {command: ./far}}\n")
		writeFile(t, dir, "a/servers.yaml", "servers: {x: {command: ./near}}\n")
		p := writeFile(t, dir, "a/b/c/s.yaml", scenario)
		suite, err := Load(p)
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		cases, _ := suite.Cases(CaseOptions{})
		if got, want := cases[0].HostOptions().Servers[0].Command, filepath.Join(dir, "a/near"); got != want {
			t.Errorf("command = %q, want %q (from the nearest servers.yaml)", got, want)
		}
	})
	t.Run("none", func(t *testing.T) {
		dir := t.TempDir()
		p := writeFile(t, dir, "s.yaml", scenario)
		_, err := Load(p)
		want := p + ":2: servers[0]: no servers file for \"x\": set servers_file, or put a servers.yaml in " + dir + " or a folder above it"
		if err == nil || err.Error() != want {
			t.Errorf("Load error:\n got %v\nwant %s", err, want)
		}
	})
	t.Run("inline needs none", func(t *testing.T) {
		dir := t.TempDir()
		p := writeFile(t, dir, "s.yaml", "name: s\nservers: [{name: x, command: x}]\nquestion: q\nmodel: {scripted: []}\n")
		if _, err := Load(p); err != nil {
			t.Errorf("Load: %v", err)
		}
	})
	t.Run("empty folder", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, dir, "servers.yaml", "servers: {}\n")
		_, err := Load(dir)
		want := dir + ": no scenario files (*.yaml, *.yml) in this folder"
		if err == nil || err.Error() != want {
			t.Errorf("Load error:\n got %v\nwant %s", err, want)
		}
	})
}

func TestExpand(t *testing.T) {
	tests := []struct {
		in, want string
		problem  string
	}{
		{in: "plain", want: "plain"},
		{in: "${HERE}/x", want: "/here/x"},
		{in: "$$HOME and $$", want: "$HOME and $"},
		{in: "$1 $ $x", want: "$1 $ $x"},
		{in: "${SET}-${SET}", want: "v-v"},
		{in: "${EMPTY}.", want: "."},
		{in: "${UNSET}", problem: "f.yaml:3: p: environment variable UNSET is not set"},
		{in: "a ${SET", problem: `f.yaml:3: p: unterminated ${ in "a ${SET" (write $$ for a literal $)`},
		{in: "${A B}", problem: "f.yaml:3: p: ${A B}: not a variable name"},
	}
	env := map[string]string{"SET": "v", "EMPTY": ""}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			e := expander{lookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, here: "/here"}
			got, problems := e.expand(tt.in)
			if tt.problem != "" {
				if len(problems) != 1 || "f.yaml:3: p: "+problems[0] != tt.problem {
					t.Errorf("expand(%q) = %q, problems %v; want problem %q", tt.in, got, problems, tt.problem)
				}
				return
			}
			if got != tt.want || len(problems) > 0 {
				t.Errorf("expand(%q) = %q, problems %v; want %q", tt.in, got, problems, tt.want)
			}
		})
	}
}

// TestMergeKeys checks that YAML anchors and merge keys work, and that a
// key written in the mapping wins over a merged one.
func TestMergeKeys(t *testing.T) {
	testEnv(t)
	dir := t.TempDir()
	p := filepath.Join(dir, "s.yaml")
	text := `name: merged
servers: [{name: x, command: x}]
question: q
model: {scripted: []}
host: &h {max_steps: 3, tool_timeout: 1s}
variants:
  - name: v
    host: {<<: *h, max_steps: 5}
`
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	suite, err := Load(p)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	cases, _ := suite.Cases(CaseOptions{})
	o := cases[0].HostOptions()
	if o.MaxSteps != 5 || o.ToolTimeout.String() != "1s" {
		t.Errorf("MaxSteps = %d, ToolTimeout = %v; want 5, 1s", o.MaxSteps, o.ToolTimeout)
	}
}

// TestTimeouts: the budgets of the timing model are set in a scenario's
// host: (and a variant's) and per server, in a servers file or inline.
func TestTimeouts(t *testing.T) {
	testEnv(t)
	dir := t.TempDir()
	writeFile(t, dir, "servers.yaml", "servers:\n  slow: {command: npx, connect_timeout: 40s, discover_timeout: 30s, initialize_timeout: 20s}\n")
	p := writeFile(t, dir, "s.yaml", `name: timing
servers: [slow, {name: jvm, command: java, connect_timeout: 1m}]
question: q
model: {scripted: []}
host: {connect_timeout: 15s, discover_timeout: 12s, initialize_timeout: 9s, tool_timeout: 3s, person_timeout: 45s}
variants:
  - name: base
  - name: patient
    host: {person_timeout: 2m, initialize_timeout: 11s}
`)
	suite, err := Load(p)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	cases, _ := suite.Cases(CaseOptions{})
	type timing struct{ Connect, Discover, Initialize, Tool, Person time.Duration }
	var got []timing
	for _, c := range cases {
		o := c.HostOptions()
		got = append(got, timing{o.ConnectTimeout, o.DiscoverTimeout, o.InitializeTimeout, o.ToolTimeout, o.PersonTimeout})
	}
	want := []timing{{15 * time.Second, 12 * time.Second, 9 * time.Second, 3 * time.Second, 45 * time.Second},
		{15 * time.Second, 12 * time.Second, 11 * time.Second, 3 * time.Second, 2 * time.Minute}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("host timeouts (-want +got):\n%s", diff)
	}
	servers := cases[0].HostOptions().Servers
	if s := servers[0]; s.ConnectTimeout != 40*time.Second || s.DiscoverTimeout != 30*time.Second || s.InitializeTimeout != 20*time.Second {
		t.Errorf("servers file timeouts = %v %v %v, want 40s 30s 20s", s.ConnectTimeout, s.DiscoverTimeout, s.InitializeTimeout)
	}
	if s := servers[1]; s.ConnectTimeout != time.Minute || s.DiscoverTimeout != 0 {
		t.Errorf("inline timeouts = %v %v, want 1m and the host's", s.ConnectTimeout, s.DiscoverTimeout)
	}
	p = writeFile(t, dir, "bad.yaml", "name: bad\nservers: [{name: x, command: x, initialize_timeout: 0s}]\nquestion: q\nmodel: {scripted: []}\nhost: {person_timeout: soon}\n")
	_, err = Load(p)
	wantErr := p + ":2: servers[0].initialize_timeout: want a positive duration, got 0s\n" +
		p + `:5: host.person_timeout: time: invalid duration "soon" (want e.g. 500ms, 10s, 2m)`
	if err == nil || err.Error() != wantErr {
		t.Errorf("Load error:\n%v\nwant:\n%s", err, wantErr)
	}
}
