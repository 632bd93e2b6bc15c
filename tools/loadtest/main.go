// Command loadtest checks a run of the suite made while the machine was
// saturated (make test-load, tools/loadtest/run.sh): the run finished, every
// case passed, and every connection got the protocol revision that the
// committed table (tools/loadtest/protocols.txt) says it gets on an idle
// machine. A budget that catches a slow machine instead of a broken server
// shows up here as a case that errs, or as a revision that differs (a
// 2026-07-28 server recorded as 2025-11-25 after a discover wait ran out).
//
// usage: go run ./tools/loadtest -run results/load/suite [-want tools/loadtest/protocols.txt] [-update]
//
// -update rewrites the table from the run (after adding or changing a
// scenario: check the run first, on an idle machine).
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/hosteval/hosteval/internal/record"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("run", "", "the run folder to check")
	want := fs.String("want", "tools/loadtest/protocols.txt", "the table of protocol revisions")
	update := fs.Bool("update", false, "rewrite the table from the run")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *dir == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: loadtest -run DIR [-want FILE] [-update]")
		return 2
	}
	r, err := record.ReadRun(*dir)
	if err != nil {
		fmt.Fprintf(stderr, "loadtest: %v\n", err)
		return 2
	}
	got, problems := protocols(r)
	if *update {
		if len(problems) > 0 {
			report(stderr, problems)
			fmt.Fprintln(stderr, "loadtest: the table is not rewritten from a run with problems")
			return 1
		}
		if err := os.WriteFile(*want, format(got), 0o644); err != nil {
			fmt.Fprintf(stderr, "loadtest: %v\n", err)
			return 2
		}
		fmt.Fprintf(stdout, "loadtest: wrote %s (%d connections)\n", *want, len(got))
		return 0
	}
	data, err := os.ReadFile(*want)
	if err != nil {
		fmt.Fprintf(stderr, "loadtest: %v\n", err)
		return 2
	}
	problems = append(problems, compare(parse(data), got, *want)...)
	if len(problems) > 0 {
		report(stderr, problems)
		return 1
	}
	fmt.Fprintf(stdout, "loadtest: %d cases passed; %d connections got the revisions of %s\n", len(r.Records), len(got), *want)
	return 0
}

func report(w io.Writer, problems []string) {
	for _, p := range problems {
		fmt.Fprintln(w, "loadtest: "+p)
	}
}

// protocols maps "scenario[/variant]\tserver" to the revision every case of
// it recorded for that server ("-" for none: a version failure). It also
// returns what is wrong with the run itself: interrupted, a case that did
// not pass, repeats of one case that disagree.
func protocols(r *record.Run) (map[string]string, []string) {
	var problems []string
	switch {
	case r.Info == nil:
		problems = append(problems, "the run has no run.json")
	case r.Info.Interrupted || r.Info.Finished.IsZero():
		problems = append(problems, "the run did not finish")
	case r.Info.Cases != len(r.Records):
		problems = append(problems, fmt.Sprintf("%d of the run's %d cases are recorded", len(r.Records), r.Info.Cases))
	}
	for _, w := range r.Warnings {
		problems = append(problems, "records: "+w)
	}
	got := map[string]string{}
	for _, rec := range r.Records {
		if rec.Status != record.StatusPass {
			problems = append(problems, fmt.Sprintf("case %s: %s %s", rec.CaseID, rec.Status, rec.Error))
		}
		name := rec.Scenario
		if rec.Variant != "" {
			name += "/" + rec.Variant
		}
		for _, s := range rec.Servers {
			key := name + "\t" + s.Name
			p := s.Protocol
			if p == "" {
				p = "-"
			}
			if prev, ok := got[key]; ok && prev != p {
				problems = append(problems, fmt.Sprintf("case %s: server %s got %s, another case of it %s", rec.CaseID, s.Name, p, prev))
				continue
			}
			got[key] = p
		}
	}
	return got, problems
}

const header = `# The protocol revision each scenario's servers get, as on an idle machine:
# scenario[/variant] <TAB> server <TAB> revision ("-": none, a version
# failure). make test-load checks a run under load against it; rewrite it
# with go run ./tools/loadtest -run DIR -update from a checked run.
`

func format(m map[string]string) []byte {
	var b bytes.Buffer
	b.WriteString(header)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, "%s\t%s\n", k, m[k])
	}
	return b.Bytes()
}

func parse(data []byte) map[string]string {
	m := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, '\t')
		if i < 0 {
			continue
		}
		m[line[:i]] = line[i+1:]
	}
	return m
}

// compare says how got differs from want, one line per connection.
func compare(want, got map[string]string, table string) []string {
	var problems []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		scenarioServer := strings.Replace(k, "\t", ": server ", 1)
		g, ok := got[k]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s: not in the run (%s says %s)", scenarioServer, table, want[k]))
		case g != want[k]:
			problems = append(problems, fmt.Sprintf("%s: got %s, want %s", scenarioServer, g, want[k]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			problems = append(problems, fmt.Sprintf("%s: got %s, not in %s (a new scenario? check it, then -update)",
				strings.Replace(k, "\t", ": server ", 1), got[k], table))
		}
	}
	return problems
}
