// Package report turns the result records of a run into figures and
// verdicts. It reads records only (internal/record), never runs anything,
// so every report is rebuilt from a run folder, also from an interrupted
// run.
//
// The flow, after benchstat: [record.ReadRun] (or a [record.Reader] over
// records.jsonl) -> [Aggregate] into a [Summary] of per-case [CaseStats] and per-group
// [GroupStats] (a group is one scenario+variant+model; its cases are the
// repeats) -> models: tables (internal/table, laid out there), the
// [Failures] list and the [VerdictLines] of the gates and a comparison ->
// renderers, each escaping the models in its own format: text for a
// terminal ([WriteText], fitted to its width), Markdown ([WriteMarkdown]),
// summary.json ([WriteSummaryJSON]), JUnit XML ([WriteJUnit]) and a
// self-contained HTML page ([WriteHTML]). [Compare] sets two runs side by
// side and returns a [Verdict] (text, [WriteCompareMarkdown] for a pull
// request, [WriteCompareJSON]); [EvaluateGates] checks gates (internal/gate's
// grammar and metrics, "<metric> <op> <number>") on a run's figures. What a count means (an unknown tool, a
// protocol error, a call that sent nothing) is internal/record's, shared
// with the scenarios' expectations.
//
// # Statistics
//
// Pass rates are compared with Fisher's exact test (two-sided) and call
// latency with the Mann-Whitney U test (two-sided; exact, conditional on
// ties, up to 50 pooled calls, the normal approximation with tie and
// continuity correction beyond). Both run only with two or more cases on
// each side; a change that is not significant at alpha (0.05 by default)
// prints "~". Tool-definition tokens, result bytes and unknown tools are
// compared exactly. Percentiles interpolate between closest ranks.
//
// Significance is not enough for latency: with thousands of calls a side
// the U test calls a 3% difference significant, and two runs of one commit
// differ by more than that when the machine's load changes between them
// (by up to 46% on the shared 2-core machine hosteval is built on). So a
// latency change also has a size, the Hodges-Lehmann estimate of the
// ratio new/old: the median of log(new) - log(old) over every pair of
// calls, exponentiated, with the interval between the k-th smallest and
// k-th largest of those differences, k from the U distribution, which
// excludes 1 about when the test rejects (benchstat reports a difference
// of medians with such an interval; on logarithms the shift is a ratio, as
// latency changes are). It is found without listing the pairs, by bisection
// on its value. A slowdown is a regression only when its whole interval
// lies beyond Thresholds.MinEffectPct (compare -min-effect); a significant
// change inside it prints "~" and a note.
//
// # Routing
//
// Cases made from dataset rows carry a record.Route, and Read gathers
// their figures per routing group (scenario, variant, model and catalog
// size) into Summary.Routing as it reads: per class (an expected tool, or
// no tool) precision, recall, F1 and support, macro and micro F1, the
// confusion matrix (its columns the choices, an unknown tool among them),
// accuracy with Wilson's 95% interval, no-tool and argument accuracy, the
// same per tag, and accuracy against tool-definition tokens with the
// configuration that reaches the scenario's target. routing.go states the
// conventions (a row of several expected tools, undefined precision and
// recall, what macro F1 averages). Groups that answered the same rows
// (the variants of a model, the models of a variant, and, in Compare, one
// group in two runs) are paired row by row: McNemar's exact test on rows
// answered once, with Tango's score interval of the difference, and the
// exact sign test on the pass rates of repeated rows, with the paired
// Wald interval; the rows that flipped are listed with what each side
// chose. What the pairing keeps is per row id, not per case (rowTable).
// The lexical router's groups are marked as a lexical proxy, never as a
// model.
package report
