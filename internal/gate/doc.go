// Package gate owns the gate language: the grammar of a gate
// ("<metric> <op> <number>", or relative to a baseline run), the list of
// metrics a gate can check, and the gates file with its JSON Schema. It is
// a leaf that scenario (gates written in a scenario file) and report
// (gates checked on a run's figures, report.EvaluateGates) both read; it
// computes no figure itself. docs/scenarios.md's table of metrics is
// generated from [Metrics].
//
// # Baselines
//
// A gate's right side may be "baseline" (optionally "baseline * 1.05",
// "baseline + 2", "baseline - 0.1"): the same metric of the same group in
// a baseline run, such as a results folder committed to the repository.
// That is the one way gates are relative; `compare OLD NEW` with
// report's Thresholds is the statistical way, and both give a verdict the CLI
// turns into exit code 1.
//
// # Metrics
//
// Gates check these figures of each scenario+variant+model group. "Per
// case, mean" averages a figure of each case over the group's repeats;
// "sum" adds it over the cases; latency pools the calls of every case
// that were sent to a server (calls the host rejected send nothing).
//
// The last six are the routing figures of the cases made from dataset
// rows, checked on each routing group (scenario, variant, model and
// catalog size) instead: the first choice is the first tool proposed, or
// none; recall and precision take a tool ("recall:tickets__open_ticket")
// or no_tool, the class of rows that expect none. A group where a
// figure is undefined (no row expects the tool, the tool was never
// chosen, no row expects no tool) is skipped; a gate that no group
// defines fails.
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
//	truncated              model answers cut short by the endpoint (length, filter)   sum
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
//	routing_accuracy       rows whose routing verdict held (match rule and forbid)    ratio 0..1
//	macro_f1               F1 of the first choice, mean over the expected classes     0..1
//	no_tool_accuracy       rows that expect no tool answered without one              ratio 0..1
//	recall:<tool>          rows expecting the tool whose first choice it was          ratio 0..1
//	precision:<tool>       first choices of the tool that rows expected               ratio 0..1
//	confusions             rows whose first choice was not an expected tool           count
package gate
