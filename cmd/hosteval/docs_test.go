package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hosteval/hosteval/internal/longtest"
)

// The commands of the README and docs/ run as written, from the
// repository's root after `make run`: TestDocsCommands runs every fenced
// block that says it can, in a folder laid out as a fresh clone after make
// run (the repository's files, bin/ with hosteval and the fixture
// servers), and checks the output a console block shows.
//
// How a fenced block says what it is, by its info string:
//
//	sh                    commands that run offline, in the order written
//	sh norun: WHY         commands that cannot run here (a real endpoint,
//	                      docker, a server that serves until Ctrl-C); WHY
//	                      is required
//	console               "$ command" lines (a "\" continues one) and the
//	                      output they print (stdout and stderr, as a
//	                      terminal shows them): the output is checked, and
//	                      rewritten with -update. A line "..." stands for
//	                      any lines; a line ending in " ..." for a line
//	                      that starts so; times, run IDs and ports are
//	                      compared as what they are, not their values
//	console norun: WHY    a transcript that is not run
//
// Any other block whose lines start with "$ " is a mistake the test names.

// docFiles are the documents whose commands are tested, from the
// repository's root.
var docFiles = []string{"README.md", "docs/*.md", "servers/README.md", "deploy/kubernetes/README.md"}

// docBlock is one fenced block of a document.
type docBlock struct {
	file       string
	line       int // of the opening fence
	indent     string
	info       string
	kind       string // "sh" or "console"
	norun      string // why it is not run
	text       string // the block's lines, without the fences and indent
	start, end int    // byte offsets of the text in the document
}

var fence = regexp.MustCompile("(?m)^( *)```(.*)$")

// docBlocks returns the fenced blocks of the document at path.
func docBlocks(t *testing.T, path, doc string) []docBlock {
	t.Helper()
	var blocks []docBlock
	locs := fence.FindAllStringSubmatchIndex(doc, -1)
	for i := 0; i+1 < len(locs); i += 2 {
		open, closing := locs[i], locs[i+1]
		b := docBlock{
			file:   path,
			line:   strings.Count(doc[:open[0]], "\n") + 1,
			indent: doc[open[2]:open[3]],
			info:   strings.TrimSpace(doc[open[4]:open[5]]),
			start:  open[1] + 1,
			end:    closing[0],
		}
		if b.start > b.end {
			b.start = b.end
		}
		var lines []string
		for _, l := range strings.Split(strings.TrimSuffix(doc[b.start:b.end], "\n"), "\n") {
			lines = append(lines, strings.TrimPrefix(l, b.indent))
		}
		b.text = strings.Join(lines, "\n")
		word, rest, _ := strings.Cut(b.info, " ")
		b.kind = word
		if why, ok := strings.CutPrefix(strings.TrimSpace(rest), "norun:"); ok {
			b.norun = strings.TrimSpace(why)
			if b.norun == "" {
				t.Errorf("%s:%d: norun: says why the block cannot run, e.g. \"norun: needs a real endpoint\"", path, b.line)
			}
		} else if rest != "" {
			t.Errorf("%s:%d: info string %q: want %s, %s norun: WHY, or nothing after the language", path, b.line, b.info, word, word)
		}
		blocks = append(blocks, b)
	}
	return blocks
}

// docDocuments reads every document of docFiles.
func docDocuments(t *testing.T) map[string]string {
	t.Helper()
	docs := map[string]string{}
	for _, glob := range docFiles {
		paths, err := filepath.Glob(filepath.Join("..", "..", glob))
		if err != nil || len(paths) == 0 {
			t.Fatalf("no document %s (%v)", glob, err)
		}
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(filepath.Join("..", ".."), p)
			docs[rel] = string(data)
		}
	}
	return docs
}

// commandLine is a line that runs one of the project's commands or tools,
// as a reader would copy it.
var commandLine = regexp.MustCompile(`(?m)^\s*(\./)?(bin/)?(hosteval|make|go|npx|npm|docker|kubectl|curl|fakeapi|cmdb|tickets) .*$`)

// TestDocsMarked: every block with commands says whether it runs, and
// one that does not says why; the files the runnable blocks name exist.
func TestDocsMarked(t *testing.T) {
	runnable := 0
	for path, doc := range docDocuments(t) {
		for _, b := range docBlocks(t, path, doc) {
			if p := markProblem(b); p != "" {
				t.Errorf("%s:%d: %s", path, b.line, p)
			}
			if (b.kind == "sh" || b.kind == "console") && b.norun == "" {
				runnable++
			}
		}
	}
	if runnable < 5 {
		t.Errorf("%d runnable blocks in the documents, want at least 5: the test finds none?", runnable)
	}
	for _, f := range []string{"docs/examples/script.yaml", "docs/seed-rules.yaml"} {
		if _, err := os.Stat(filepath.Join("..", "..", f)); err != nil {
			t.Errorf("the README's example names %s: %v", f, err)
		}
	}
}

var (
	promptLine      = regexp.MustCompile(`(?m)^\$ `)
	placeholderWord = regexp.MustCompile(`<[a-z-]+>`)
)

// markProblem says what is wrong with how block b is marked, or "": a
// block with commands is either run by TestDocsCommands (sh, console) or
// says why not (norun: WHY, which docBlocks requires).
func markProblem(b docBlock) string {
	switch {
	case b.kind == "console" && b.norun == "" && !promptLine.MatchString(b.text):
		return "a console block starts with a \"$ command\" line"
	case b.kind == "sh" && b.norun == "" && placeholderWord.MatchString(b.text):
		return fmt.Sprintf("a runnable block has a placeholder (%s): write a value that runs, or mark it norun", placeholderWord.FindString(b.text))
	case b.kind == "sh" || b.kind == "console":
		return ""
	case promptLine.MatchString(b.text):
		return "a block of \"$ \" commands says what it is: ```console (run, its output checked) or ```console norun: WHY"
	case b.kind == "bash" || b.kind == "shell":
		return "a block of commands is ```sh (run as written) or ```sh norun: WHY"
	case b.kind == "" && commandLine.MatchString(b.text):
		// A command in a block that says nothing would escape
		// TestDocsCommands.
		return fmt.Sprintf("a block with a command (%s) says what it is: ```sh (run as written) or ```sh norun: WHY",
			strings.TrimSpace(commandLine.FindString(b.text)))
	}
	return ""
}

// TestMarkProblem: the marks TestDocsMarked accepts and refuses.
func TestMarkProblem(t *testing.T) {
	tests := []struct {
		name string
		b    docBlock
		want string
	}{
		{"sh runs", docBlock{kind: "sh", text: "hosteval run scenarios/"}, ""},
		{"sh norun", docBlock{kind: "sh", norun: "needs a GPU", text: "vllm serve <model>"}, ""},
		{"console", docBlock{kind: "console", text: "$ hosteval version\n..."}, ""},
		{"yaml", docBlock{kind: "yaml", text: "servers:\n  cmdb: {}"}, ""},
		{"output", docBlock{text: "Total: 421 passed, 13 failed"}, ""},
		{"console without a command", docBlock{kind: "console", text: "ok"}, `a console block starts with a "$ command" line`},
		{"placeholder", docBlock{kind: "sh", text: "hosteval show results/<run-id> x"},
			"a runnable block has a placeholder (<run-id>): write a value that runs, or mark it norun"},
		{"prompt in plain text", docBlock{text: "$ make run"},
			`a block of "$ " commands says what it is: ` + "```console (run, its output checked) or ```console norun: WHY"},
		{"bash", docBlock{kind: "bash", text: "make test"}, "a block of commands is ```sh (run as written) or ```sh norun: WHY"},
		{"a command in an unmarked block", docBlock{text: "# then\n./bin/hosteval run -repeat 3 scenarios/"},
			"a block with a command (./bin/hosteval run -repeat 3 scenarios/) says what it is: ```sh (run as written) or ```sh norun: WHY"},
		{"make in an unmarked block", docBlock{text: "make test"},
			"a block with a command (make test) says what it is: ```sh (run as written) or ```sh norun: WHY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := markProblem(tt.b); got != tt.want {
				t.Errorf("markProblem = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestDocsCommands runs every runnable block of each document, in order,
// in one folder laid out as the repository after make run, and checks
// the output of each console block (go test -update rewrites it in the
// document). It runs whole suites of the repository: a long test.
func TestDocsCommands(t *testing.T) {
	longtest.Require(t, "the README's and docs' commands run the default suite several times")
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	self, err := exec.LookPath("hosteval") // this test binary, as testscript.Main put it on PATH
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for path, doc := range docDocuments(t) {
		var blocks []docBlock
		for _, b := range docBlocks(t, path, doc) {
			if b.norun == "" && (b.kind == "sh" || b.kind == "console") {
				blocks = append(blocks, b)
			}
		}
		if len(blocks) == 0 {
			continue
		}
		t.Run(strings.ReplaceAll(path, "/", "_"), func(t *testing.T) {
			work := layOutClone(t, root, self)
			updated := doc
			// From the last block to the first, so that the offsets of the
			// blocks not yet rewritten hold.
			outs := make([]string, len(blocks))
			for i, b := range blocks {
				script := b.text
				if b.kind == "console" {
					script = consoleCommands(b.text)
				}
				cmd := exec.Command(bash, "-eo", "pipefail", "-c", script)
				cmd.Dir = work
				cmd.Env = append(os.Environ(), "CI=true", "COLUMNS=", "PATH="+filepath.Join(work, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("%s:%d: the block failed: %v\n%s\n--- output:\n%s", path, b.line, err, script, out)
				}
				outs[i] = string(out)
			}
			for i := len(blocks) - 1; i >= 0; i-- {
				b := blocks[i]
				if b.kind != "console" {
					continue
				}
				want := consoleOutput(b.text)
				if problems := matchOutput(want, outs[i]); len(problems) > 0 {
					if !*update {
						t.Errorf("%s:%d: the output shown is stale (go test ./cmd/hosteval -run TestDocsCommands -update rewrites it):\n  %s\n--- got:\n%s",
							path, b.line, strings.Join(problems, "\n  "), outs[i])
						continue
					}
					text := rewriteOutput(b.text, outs[i])
					var lines []string
					for _, l := range strings.Split(text, "\n") {
						lines = append(lines, b.indent+l)
					}
					updated = updated[:b.start] + strings.Join(lines, "\n") + "\n" + updated[b.end:]
				}
			}
			if updated != doc {
				if err := os.WriteFile(filepath.Join(root, path), []byte(updated), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// layOutClone makes a folder that looks like the repository after make
// run: its files (linked), and bin/ with hosteval (this test binary) and
// the fixture servers.
func layOutClone(t *testing.T, root, self string) string {
	t.Helper()
	work := t.TempDir()
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		switch e.Name() {
		case "bin", "results", "hosteval", ".git", "artifacts", "dist":
			continue
		}
		if err := os.Symlink(filepath.Join(root, e.Name()), filepath.Join(work, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(work, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	servers, err := os.ReadDir(fixtureBin)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range servers {
		if err := os.Symlink(filepath.Join(fixtureBin, s.Name()), filepath.Join(bin, s.Name())); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(self, filepath.Join(bin, "hosteval")); err != nil {
		t.Fatal(err)
	}
	return work
}

// consoleCommands are the commands of a console block: its "$ " lines
// and their continuations.
func consoleCommands(text string) string {
	var cmds []string
	cont := false
	for _, l := range strings.Split(text, "\n") {
		if c, ok := strings.CutPrefix(l, "$ "); ok || cont {
			if ok {
				l = c
			}
			cmds = append(cmds, l)
			cont = strings.HasSuffix(l, "\\")
		}
	}
	return strings.Join(cmds, "\n")
}

// consoleOutput is what a console block shows the commands print.
func consoleOutput(text string) []string {
	var out []string
	cont := false
	for _, l := range strings.Split(text, "\n") {
		if c, ok := strings.CutPrefix(l, "$ "); ok || cont {
			if ok {
				l = c
			}
			cont = strings.HasSuffix(l, "\\")
			continue
		}
		out = append(out, l)
	}
	return out
}

// volatile are the parts of an output that differ from run to run, and
// what they are compared as.
var volatile = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\b\d{8}-\d{6}-[0-9a-f]{6}\b`), "RUN-ID"},
	{regexp.MustCompile(`127\.0\.0\.1:\d+`), "127.0.0.1:PORT"},
	{regexp.MustCompile(`"ms":[0-9.]+`), `"ms":N`},
	{regexp.MustCompile(`\b(\d+h)?(\d+m)?\d+(\.\d+)?(ms|µs|s)\b`), "TIME"},
	{regexp.MustCompile(`^\[\d+/`), "[K/"},
	{regexp.MustCompile(` +`), " "},
}

func normalize(line string) string {
	line = strings.TrimRight(line, " ")
	for _, v := range volatile {
		line = v.re.ReplaceAllString(line, v.with)
	}
	return line
}

// lineMatches reports whether a line of the output matches a shown one:
// equal as normalized, or, for a shown line ending in " ...", starting
// with what comes before it.
func lineMatches(shown, got string) bool {
	if prefix, ok := strings.CutSuffix(shown, " ..."); ok {
		return strings.HasPrefix(normalize(got), normalize(prefix))
	}
	return normalize(shown) == normalize(got)
}

// matchOutput checks the shown lines against the output: in order, a
// line "..." skipping any number of lines; progress lines ("[3/61] PASS
// x") anywhere, since cases finish in any order. It returns the lines not
// found.
func matchOutput(shown []string, out string) []string {
	got := strings.Split(strings.TrimRight(out, "\n"), "\n")
	var problems []string
	pos, gap := 0, false
	for _, s := range shown {
		if strings.TrimSpace(s) == "..." {
			gap = true
			continue
		}
		if isProgress(s) {
			if !slices.ContainsFunc(got, func(g string) bool { return lineMatches(s, g) }) {
				problems = append(problems, "not in the output: "+s)
			}
			continue
		}
		found := -1
		for j := pos; j < len(got); j++ {
			if lineMatches(s, got[j]) {
				found = j
				break
			}
			if !gap {
				break
			}
		}
		if found < 0 {
			problems = append(problems, "not in the output where shown: "+s)
			continue
		}
		pos, gap = found+1, false
	}
	if !gap && pos < len(got) && len(problems) == 0 {
		problems = append(problems, "the output goes on: "+got[pos])
	}
	return problems
}

var progressLine = regexp.MustCompile(`^\[\d+/\d+\] `)

func isProgress(s string) bool { return progressLine.MatchString(s) }

// rewriteOutput is a console block with its output lines replaced by what
// was printed: a block that shows all of it gets all of it; one that
// elides ("...") keeps its shape, each line it shows replaced by the line
// of the output most like it.
func rewriteOutput(text, out string) string {
	got := strings.Split(strings.TrimRight(out, "\n"), "\n")
	var cmds []string
	cont := false
	lines := strings.Split(text, "\n")
	for _, l := range lines {
		if c, ok := strings.CutPrefix(l, "$ "); ok || cont {
			_ = c
			cmds = append(cmds, l)
			cont = strings.HasSuffix(l, "\\")
		}
	}
	shown := consoleOutput(text)
	if !slices.ContainsFunc(shown, func(s string) bool { return strings.TrimSpace(s) == "..." || strings.HasSuffix(s, " ...") }) {
		return strings.Join(append(cmds, got...), "\n")
	}
	var rewritten []string
	pos := 0
	for _, s := range shown {
		if strings.TrimSpace(s) == "..." {
			rewritten = append(rewritten, s)
			continue
		}
		best, bestD := -1, 1<<30
		from := pos
		if isProgress(s) {
			from = 0
		}
		for j := from; j < len(got); j++ {
			if isProgress(s) != isProgress(got[j]) {
				continue
			}
			if d := editDistance(normalize(s), normalize(got[j])); d < bestD {
				best, bestD = j, d
			}
		}
		if best < 0 {
			rewritten = append(rewritten, s)
			continue
		}
		line := got[best]
		if prefix, ok := strings.CutSuffix(s, " ..."); ok && len(line) > len(prefix) {
			line = strings.TrimRight(line[:len(prefix)], " ") + " ..."
		}
		rewritten = append(rewritten, line)
		if !isProgress(s) {
			pos = best + 1
		}
	}
	return strings.Join(append(cmds, rewritten...), "\n")
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
