package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/hosteval/hosteval/internal/merge"
	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/scenario"
	"github.com/hosteval/hosteval/internal/text"
)

// shardFlags choose the shard a run runs: -shard K/N, else $HOSTEVAL_SHARD,
// else, in a Kubernetes Indexed Job, $JOB_COMPLETION_INDEX with
// -shard-count N.
type shardFlags struct {
	shard string
	count int
}

func (f *shardFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.shard, "shard", "", "run only shard K of N of the cases, e.g. 2/4 (default: $HOSTEVAL_SHARD); hosteval merge joins the shards")
	fs.IntVar(&f.count, "shard-count", 0, "split the cases into N shards and run shard $JOB_COMPLETION_INDEX+1 (a Kubernetes Indexed Job's 0-based index)")
}

// shard returns the shard to run, the zero shard for every case.
func (f *shardFlags) selected(getenv func(string) string) (record.Shard, error) {
	switch {
	case f.shard != "" && f.count != 0:
		return record.Shard{}, usagef("-shard and -shard-count: give one of them")
	case f.shard != "":
		s, err := record.ParseShard(f.shard)
		if err != nil {
			return record.Shard{}, usagef("-shard: %w", err)
		}
		return s, nil
	case f.count != 0:
		if f.count < 1 {
			return record.Shard{}, usagef("-shard-count %d: want 1 or more", f.count)
		}
		idx := getenv("JOB_COMPLETION_INDEX")
		if idx == "" {
			return record.Shard{}, usagef("-shard-count needs $JOB_COMPLETION_INDEX, which a Kubernetes Indexed Job sets (0 to N-1); elsewhere give -shard K/N")
		}
		i, err := strconv.Atoi(idx)
		if err != nil || i < 0 || i >= f.count {
			return record.Shard{}, usagef("$JOB_COMPLETION_INDEX %q: want 0 to %d with -shard-count %d", idx, f.count-1, f.count)
		}
		return record.Shard{K: i + 1, N: f.count}, nil
	case getenv("HOSTEVAL_SHARD") != "":
		s, err := record.ParseShard(getenv("HOSTEVAL_SHARD"))
		if err != nil {
			return record.Shard{}, usagef("$HOSTEVAL_SHARD: %w", err)
		}
		return s, nil
	}
	return record.Shard{}, nil
}

var mergeCommand = command{
	name:    "merge",
	summary: "merge the run folders of a suite's shards into one run",
	usage:   mergeUsage,
	run:     runMerge,
}

const mergeUsage = `usage: hosteval merge [flags] SHARD_DIR...

Merges the run folders of the shards of one suite (hosteval run -shard K/N,
on N machines) into one run folder, <out>/<run-id>/, and rebuilds every
report from it: they are those of one machine running every case, apart
from timings. The records keep their fields but run_id, which becomes the
merged run's (each shard's own run_id is in run.json's shards list); case
logs, wire traces and case files keep their paths (cases are numbered as in
the whole suite); each shard's run.json and shared-server log go to
shards/K-of-N/. run.json says when the first shard started and the last
finished, and that the run was interrupted if any shard was.

merge refuses, writing nothing: a folder that is not a shard's run folder,
shards of different suites (another scenario or servers file, -run,
-repeat or -model) or of different hosteval versions, a shard given twice
or missing (-partial merges without the missing ones and lists them), and a
case in two shards.

Then it judges the merged run as run does: -gates, -scenarios (the gates
written in scenario files) and -baseline.

Exit codes: 0 every case passed and every gate held, 1 a case or gate
failed, 2 a usage error or a refused merge, 3 a case could not run or a
shard did not finish.

examples:
  hosteval merge -out results/merged results/shard-*/*/
  hosteval merge -scenarios scenarios/ -gates scenarios/gates.yaml \
    -out results/merged shards/*/*/
  hosteval merge -partial -out results/merged shard-1/r1 shard-3/r3`

func runMerge(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "merge", mergeUsage)
	out := fs.String("out", "results", "folder to write the merged run folder into")
	runID := fs.String("run-id", "", "name of the merged run folder (default: a timestamp and a random suffix)")
	partial := fs.Bool("partial", false, "merge without the shards that are missing, and list them")
	jsonOut := fs.Bool("json", false, "print summary.json to stdout instead of the tables")
	gatesFile := fs.String("gates", "", "a gates file to check")
	scenarios := fs.String("scenarios", "", "comma-separated scenario files or folders whose gates apply")
	var baseline baselineFlags
	baseline.register(fs)
	var layout layoutFlags
	layout.register(fs, true)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("want the shards' run folders")
	}
	suite, err := loadScenarios(*scenarios)
	if err != nil {
		return err
	}
	if *runID == "" {
		*runID = newRunID()
	}
	dir := filepath.Join(*out, *runID)
	res, err := merge.Merge(fs.Args(), merge.Options{
		Dir: dir, RunID: *runID, Args: append([]string{"hosteval", "merge"}, args...), Partial: *partial,
	})
	var refused *merge.Refusal
	if errors.As(err, &refused) {
		return usageError{errors.New(strings.Join(refused.Problems, "\n"))}
	}
	if err != nil {
		return err
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(e.stderr, "hosteval: merge: %s\n", w)
	}
	// Gates of scenarios that are not in the run would fail for want of
	// cases: judge those that ran, as run does.
	if suite != nil {
		suite = &scenario.Suite{Scenarios: slices.DeleteFunc(slices.Clone(suite.Scenarios), func(s *scenario.Scenario) bool {
			return !slices.Contains(res.Scenarios, s.Name)
		})}
	}
	gates, err := loadGates(suite, *gatesFile)
	if err != nil {
		return err
	}
	base, err := baseline.read(e, gates)
	if err != nil {
		return err
	}
	verdict, err := writeReports(e, dir, gates, base, *jsonOut, layout.options(e, dir))
	if err != nil {
		return err
	}
	shards := make([]string, len(res.Info.Shards))
	for i, sh := range res.Info.Shards {
		shards[i] = sh.Shard.String()
	}
	fmt.Fprintf(e.stderr, "merged shards %s: %s: %d passed, %d failed, %s; results in %s\n",
		strings.Join(shards, ", "), text.Count(res.Records, "case"), res.Passed, res.Failed, text.Count(res.Errors, "error"), dir)
	if len(res.Info.MissingShards) > 0 {
		missing := make([]string, len(res.Info.MissingShards))
		for i, m := range res.Info.MissingShards {
			missing[i] = m.String()
		}
		what := "shard %s: its cases are"
		if len(missing) > 1 {
			what = "shards %s: their cases are"
		}
		fmt.Fprintf(e.stderr, "hosteval: merge: -partial: without "+what+" not in the run\n", strings.Join(missing, ", "))
	}
	var unfinished []string
	for _, sh := range res.Unfinished {
		why := sh.Incomplete
		if why == "" {
			why = fmt.Sprintf("%d of %s recorded", sh.Records, text.Count(sh.Cases, "case"))
		}
		unfinished = append(unfinished, fmt.Sprintf("shard %s (%s): %s", sh.Shard, sh.Dir, why))
	}
	if len(unfinished) > 0 {
		return fmt.Errorf("not every shard finished: %s", strings.Join(unfinished, "; "))
	}
	if err := uncheckable(verdict); err != nil {
		return err
	}
	return runVerdict(res.Records, res.Failed, res.Errors, verdict.Regressed)
}
