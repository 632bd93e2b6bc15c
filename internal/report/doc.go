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
// request, [WriteCompareJSON]); [EvaluateGates] checks thresholds written
// as "<metric> <op> <number>". What a count means (an unknown tool, a
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
// # Baselines
//
// A gate's right side may be "baseline" (optionally "baseline * 1.05",
// "baseline + 2", "baseline - 0.1"): the same metric of the same group in
// a baseline run, such as a results folder committed to the repository.
// That is the one way gates are relative; `compare OLD NEW` with
// [Thresholds] is the statistical way, and both give a verdict the CLI
// turns into exit code 1.
//
// # Metrics
//
// Gates check these figures of each scenario+variant+model group. "Per
// case, mean" averages a figure of each case over the group's repeats;
// "sum" adds it over the cases; latency pools the calls of every case
// that were sent to a server (calls the host rejected send nothing).
//
//	metric                 meaning                                                    aggregation over cases
//	cases                  cases run                                                  count
//	passed                 cases whose every expectation held                         count
//	failed                 cases with a failed expectation                            count
//	errored                cases that could not run                                   count
//	pass_rate              passed / cases (an errored case did not pass)              ratio 0..1
//	steps                  tool calls the model proposed (turns' steps)               per case, mean
//	tool_calls             tool calls recorded                                        per case, mean
//	model_requests         requests to the model                                      per case, mean
//	unknown_tools          calls to a tool not offered (nothing sent)                 sum
//	model_errors           model requests answered by the model's malformed output    sum
//	bad_arguments          calls with arguments not a JSON object or too large        sum
//	denied                 calls the person did not approve                           sum
//	timeouts               calls with no answer within the tool timeout               sum
//	protocol_errors        calls answered by a JSON-RPC error (with a code)           sum
//	version_failures       servers with no common protocol revision                   sum
//	asked_user             calls that put a question to the person                    sum
//	clipped                results cut to the result budget                           sum
//	result_bytes           bytes of results given to the model                        per case total, mean
//	max_result_bytes       largest single result given to the model                   max
//	tool_def_bytes         bytes of the tools array of one model request              max over requests
//	tool_def_tokens        o200k tokens of the tools array of one model request       max over requests
//	tool_def_tokens_total  tool-definition tokens summed over a case's requests       per case total, mean
//	total_tokens           tokens the model endpoint reported (0 if unknown)          per case total, mean
//	cost                   what the model's and judges' requests cost at their price  per case total, mean
//	case_ms                wall time of a case                                        per case, mean
//	mean_call_ms           call latency in the host, mean                             pooled calls
//	p50_call_ms            call latency, median                                       pooled calls
//	p90_call_ms            call latency, 90th percentile                              pooled calls
//	p95_call_ms            call latency, 95th percentile                              pooled calls
//	p99_call_ms            call latency, 99th percentile                              pooled calls
//	max_call_ms            call latency, slowest call                                 pooled calls
package report
