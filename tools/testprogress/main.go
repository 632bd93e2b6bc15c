// Command testprogress follows `go test -json` as make test runs it, so
// that a long run on a busy machine is never silent: one line per package
// as it finishes (with the time since the start), the output of every test
// that failed, a line naming the packages still running when nothing has
// finished for a while, and at the end the slowest packages and tests.
//
// usage: go test -json ./... | testprogress [-phase NAME] [-top N] [-quiet DURATION]
//
// It exits 1 when a package or test failed or did not build, and when its
// input held no test event at all (go test itself failed), so that a make
// recipe fails with go test even without pipefail. Only the standard
// library: make test builds it before anything else.
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, time.Now, time.NewTicker))
}

// event is one line of `go test -json` (cmd/test2json), with the build
// events go test adds since Go 1.24.
type event struct {
	Time        time.Time
	Action      string
	Package     string
	ImportPath  string // build-output and build-fail
	Test        string
	Elapsed     float64 // seconds
	Output      string
	FailedBuild string
}

// Output of a failed test beyond this many lines is cut to its last ones.
const keptLines = 200

type pkgState struct {
	start  time.Time
	output []string // the package's own lines (panics, timeouts, FAIL)
	tests  map[string][]string
	// failedParents are the tests with a subtest that failed.
	failedParents map[string]bool
	// started holds when each test started or continued: a parent whose
	// subtests ran in parallel reports no time of its own (testscript's
	// do), and its time is read from the clock instead.
	started map[string]time.Time
}

type timing struct {
	name    string
	elapsed time.Duration
}

type progress struct {
	out   io.Writer
	now   func() time.Time
	start time.Time
	phase string
	top   int
	quiet time.Duration
	last  time.Time // when a package last finished (or the start)
	// eventTime is when the event being read happened (zero: unknown),
	// lastEvent the latest such time.
	eventTime, lastEvent time.Time
	noted                time.Time // when the still-running line was last written
	pkgs                 map[string]*pkgState
	builds               map[string][]string // build output by import path

	passed, failed, skipped, noTests int
	testsPassed, testsFailed         int
	testsSkipped                     int
	events                           int
	slowPkgs, slowTests              []timing
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer, now func() time.Time, ticker func(time.Duration) *time.Ticker) int {
	fs := flag.NewFlagSet("testprogress", flag.ContinueOnError)
	fs.SetOutput(stderr)
	phase := fs.String("phase", "go test", "what the summary line calls this run")
	top := fs.Int("top", 8, "how many of the slowest packages and tests to list")
	quiet := fs.Duration("quiet", time.Minute, "name the running packages after this long without one finishing (0: never)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: go test -json ./... | testprogress [-phase NAME] [-top N] [-quiet DURATION]")
		return 2
	}
	p := &progress{out: stdout, now: now, start: now(), phase: *phase, top: *top, quiet: *quiet,
		pkgs: map[string]*pkgState{}, builds: map[string][]string{}}
	p.last, p.noted = p.start, p.start

	lines := make(chan string)
	readErr := make(chan error, 1)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdin)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		readErr <- sc.Err()
	}()
	var tick <-chan time.Time
	if *quiet > 0 {
		t := ticker(min(*quiet/4, 15*time.Second))
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				if err := <-readErr; err != nil {
					fmt.Fprintf(stderr, "testprogress: reading go test's output: %v\n", err)
					return 2
				}
				return p.summary()
			}
			p.line(line)
		case <-tick:
			p.stillRunning()
		}
	}
}

// since is the time from the start, as the left column shows it: to the
// event being read, when it says when it happened.
func (p *progress) since() string { return clock(p.at().Sub(p.start)) }

// at is when the event being read happened (go test stamps each), else now.
func (p *progress) at() time.Time {
	if !p.eventTime.IsZero() {
		return p.eventTime
	}
	return p.now()
}

func clock(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	return fmt.Sprintf("%2dm%02ds", s/60, s%60)
}

func (p *progress) line(line string) {
	var e event
	if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &e) != nil {
		// Not an event: what go test says about the command line, or a
		// vet report; passed on as it is.
		fmt.Fprintln(p.out, line)
		return
	}
	p.events++
	p.eventTime = e.Time
	if !e.Time.IsZero() && e.Time.Before(p.start) {
		// Events from before the start (a saved stream read back): the
		// first one is the start.
		p.start, p.last, p.noted = e.Time, e.Time, e.Time
	}
	if e.Time.After(p.lastEvent) {
		p.lastEvent = e.Time
	}
	switch e.Action {
	case "build-output":
		p.builds[e.ImportPath] = append(p.builds[e.ImportPath], e.Output)
		return
	case "build-fail":
		return
	}
	if e.Package == "" {
		return
	}
	st := p.pkgs[e.Package]
	if st == nil {
		st = &pkgState{start: p.at(), tests: map[string][]string{}, failedParents: map[string]bool{}, started: map[string]time.Time{}}
		p.pkgs[e.Package] = st
	}
	if e.Test == "" {
		p.pkgEvent(e, st)
		return
	}
	switch e.Action {
	case "run", "cont":
		st.started[e.Test] = p.at()
	case "output":
		st.tests[e.Test] = keepLast(append(st.tests[e.Test], e.Output))
	case "pass", "skip":
		if e.Action == "pass" {
			p.testsPassed++
		} else {
			p.testsSkipped++
		}
		p.tested(e, st)
		delete(st.tests, e.Test)
	case "fail":
		p.testsFailed++
		p.tested(e, st)
		if parent, _, ok := strings.Cut(e.Test, "/"); ok {
			st.failedParents[parent] = true
		}
		// A parent whose subtests failed was shown through them: only
		// what it wrote itself is news.
		shown := testNews(st.tests[e.Test], st.failedParents[e.Test])
		if len(shown) > 0 || !st.failedParents[e.Test] {
			fmt.Fprintf(p.out, "%s  FAIL  %s %s\n", p.since(), short(e.Package), e.Test)
			writeIndented(p.out, shown)
		}
		delete(st.tests, e.Test)
		delete(st.failedParents, e.Test)
	}
}

// testNews drops the lines test2json adds around a test's own (=== RUN,
// PAUSE, CONT), and a parent's --- FAIL line.
func testNews(output []string, parent bool) []string {
	var kept []string
	for _, l := range output {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "=== ") || parent && strings.HasPrefix(t, "--- FAIL: ") {
			continue
		}
		kept = append(kept, l)
	}
	return kept
}

func (p *progress) tested(e event, st *pkgState) {
	start, ok := st.started[e.Test]
	delete(st.started, e.Test)
	if strings.Contains(e.Test, "/") {
		return // a subtest: its parent's time counts it
	}
	elapsed := seconds(e.Elapsed)
	if elapsed == 0 && ok && !e.Time.IsZero() {
		elapsed = e.Time.Sub(start)
	}
	p.slowTests = append(p.slowTests, timing{short(e.Package) + " " + e.Test, elapsed})
}

func (p *progress) pkgEvent(e event, st *pkgState) {
	switch e.Action {
	case "output":
		st.output = keepLast(append(st.output, e.Output))
		return
	case "pass", "fail", "skip":
	default:
		return
	}
	delete(p.pkgs, e.Package)
	p.last = p.at()
	elapsed := seconds(e.Elapsed)
	switch {
	case e.Action == "fail" && e.FailedBuild != "":
		p.failed++
		fmt.Fprintf(p.out, "%s  FAIL  %s (it did not build)\n", p.since(), short(e.Package))
		writeIndented(p.out, p.builds[e.FailedBuild])
	case e.Action == "fail":
		p.failed++
		fmt.Fprintf(p.out, "%s  FAIL  %-40s %s\n", p.since(), short(e.Package), elapsed.Round(100*time.Millisecond))
		writeIndented(p.out, packageNews(st.output))
	case e.Action == "skip":
		p.noTests++ // no test files
		return
	case strings.Contains(strings.Join(st.output, ""), "[no tests to run]"):
		p.skipped++
		fmt.Fprintf(p.out, "%s  ok    %-40s (no tests to run)\n", p.since(), short(e.Package))
	default:
		p.passed++
		note := elapsed.Round(100 * time.Millisecond).String()
		if strings.Contains(strings.Join(st.output, ""), "(cached)") {
			note = "(cached)"
		}
		fmt.Fprintf(p.out, "%s  ok    %-40s %s\n", p.since(), short(e.Package), note)
	}
	p.slowPkgs = append(p.slowPkgs, timing{short(e.Package), elapsed})
}

// packageNews drops the lines a failed package always ends with (the
// FAIL lines, the tests' own lines shown already) and keeps the rest: a
// panic, a timeout, what TestMain said.
func packageNews(output []string) []string {
	var kept []string
	for _, l := range output {
		t := strings.TrimSpace(l)
		if t == "FAIL" || strings.HasPrefix(t, "FAIL\t") || strings.HasPrefix(t, "ok  \t") || t == "PASS" {
			continue
		}
		kept = append(kept, l)
	}
	return kept
}

// stillRunning names the packages running when none finished for a while.
func (p *progress) stillRunning() {
	p.eventTime = time.Time{}
	now := p.now()
	if len(p.pkgs) == 0 || now.Sub(p.last) < p.quiet || now.Sub(p.noted) < p.quiet {
		return
	}
	p.noted = now
	names := make([]timing, 0, len(p.pkgs))
	for name, st := range p.pkgs {
		names = append(names, timing{short(name), now.Sub(st.start)})
	}
	slices.SortFunc(names, func(a, b timing) int {
		return cmp.Or(cmp.Compare(b.elapsed, a.elapsed), strings.Compare(a.name, b.name))
	})
	var parts []string
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s (%s)", n.name, n.elapsed.Round(time.Second)))
	}
	fmt.Fprintf(p.out, "%s  ...   still running: %s\n", p.since(), strings.Join(parts, ", "))
}

func (p *progress) summary() int {
	// The end is now, or the last event if its clock is ahead of ours.
	p.eventTime = time.Time{}
	if p.lastEvent.After(p.now()) {
		p.eventTime = p.lastEvent
	}
	if p.events == 0 {
		fmt.Fprintf(p.out, "%s  FAIL  %s: no test events (go test did not run)\n", p.since(), p.phase)
		return 1
	}
	// A package that started and never ended (go test was killed).
	for name := range p.pkgs {
		p.failed++
		fmt.Fprintf(p.out, "%s  FAIL  %s: it never finished\n", p.since(), short(name))
	}
	verdict := "ok"
	if p.failed > 0 || p.testsFailed > 0 {
		verdict = "FAILED"
	}
	fmt.Fprintf(p.out, "==> %s %s in %s: %s ok, %d failed, %d without tests to run; tests: %d passed, %d failed, %d skipped\n",
		p.phase, verdict, strings.TrimSpace(p.since()), plural(p.passed, "package"), p.failed, p.skipped+p.noTests, p.testsPassed, p.testsFailed, p.testsSkipped)
	p.slowest("slowest packages", p.slowPkgs)
	p.slowest("slowest tests", p.slowTests)
	if verdict != "ok" {
		return 1
	}
	return 0
}

func (p *progress) slowest(title string, ts []timing) {
	if p.top <= 0 || len(ts) == 0 {
		return
	}
	slices.SortStableFunc(ts, func(a, b timing) int {
		return cmp.Or(cmp.Compare(b.elapsed, a.elapsed), strings.Compare(a.name, b.name))
	})
	ts = ts[:min(p.top, len(ts))]
	// What took no time is not worth a line.
	ts = slices.DeleteFunc(ts, func(t timing) bool { return t.elapsed < 50*time.Millisecond })
	if len(ts) == 0 {
		return
	}
	fmt.Fprintf(p.out, "    %s:\n", title)
	for _, t := range ts {
		fmt.Fprintf(p.out, "    %8s  %s\n", t.elapsed.Round(100*time.Millisecond), t.name)
	}
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// short is a package's path without the module's.
func short(pkg string) string {
	return strings.TrimPrefix(pkg, "github.com/hosteval/hosteval/")
}

func keepLast(lines []string) []string {
	if len(lines) > keptLines {
		lines = append(lines[:0:0], lines[len(lines)-keptLines:]...)
	}
	return lines
}

func writeIndented(w io.Writer, lines []string) {
	for _, l := range lines {
		fmt.Fprintf(w, "        %s\n", strings.TrimRight(l, "\n"))
	}
}
