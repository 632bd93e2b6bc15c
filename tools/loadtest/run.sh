#!/usr/bin/env bash
# The load test (make test-load): hosteval's budgets exist to catch a broken
# server, never a slow machine, and this is where that is checked. While the
# machine is saturated by busy loops started here (2 per core, killed on
# exit), it runs
#   1. the default suite, `hosteval run scenarios/` (the npm peers of
#      scenarios/thirdparty included): every case must pass, and every
#      connection must get the protocol revision it gets on an idle machine
#      (tools/loadtest/protocols.txt, checked by go run ./tools/loadtest);
#   2. the official MCP conformance suite (tools/conformance/run.sh), where
#      the checks that time the machine (tools/loadtest/tolerated-checks.txt)
#      may fail;
#   3. `hosteval catalog` over the three npm peers at once.
# It prints the load average before the loops start and at the end of each
# step, so that a report can say what load it held under.
#
# usage: tools/loadtest/run.sh [path/to/hosteval]
# LOAD_BUSY=N starts N busy loops instead (0: none, a comparison run);
# LOAD_OUT=DIR is the output folder (default results/load, emptied first).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
hosteval=${1:-$root/bin/hosteval}
[[ $hosteval == /* ]] || hosteval=$PWD/$hosteval
cd "$root"
go=${GO:-go}
cores=$(getconf _NPROCESSORS_ONLN)
busy=${LOAD_BUSY:-$((2 * cores))}
out=${LOAD_OUT:-results/load}
rm -rf "$out"
mkdir -p "$out"

load() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime; }

# The checker is built before the machine is saturated.
"$go" build -o "$out/loadtest" ./tools/loadtest

pids=()
stop() {
	if ((${#pids[@]})); then
		kill "${pids[@]}" 2>/dev/null || true
		wait "${pids[@]}" 2>/dev/null || true
	fi
}
trap stop EXIT
trap 'exit 130' INT TERM
echo "    load average $(load) on $cores cores; starting $busy busy loops"
for ((i = 0; i < busy; i++)); do
	while :; do :; done &
	pids+=($!)
done

start=$SECONDS
echo "    the default suite (hosteval run scenarios/)"
if ! "$hosteval" run -out "$out" -run-id suite -logs failed scenarios/ >"$out/suite.txt" 2>&1; then
	cat "$out/suite.txt"
	echo "load test: the suite did not pass under load (load average $(load)); records in $out/suite" >&2
	exit 1
fi
echo "    $(tail -n 1 "$out/suite.txt")"
"$out/loadtest" -run "$out/suite" -want tools/loadtest/protocols.txt | sed 's/^/    /'
echo "    load average $(load) after $((SECONDS - start))s"

echo "    the conformance suite (tools/conformance/run.sh)"
CONFORMANCE_OUT="$out/conformance" CONFORMANCE_TOLERATE=tools/loadtest/tolerated-checks.txt \
	tools/conformance/run.sh "$hosteval" | sed 's/^/    /'
echo "    load average $(load) after $((SECONDS - start))s"

echo "    hosteval catalog over the three npm peers at once"
case_dir=$(mktemp -d)
if ! CASE_DIR=$case_dir "$hosteval" catalog -servers-file scenarios/thirdparty/servers.yaml \
	-servers everything,filesystem,memory >"$out/catalog.txt" 2>&1; then
	rm -rf "$case_dir"
	cat "$out/catalog.txt"
	echo "load test: the catalog failed under load (load average $(load))" >&2
	exit 1
fi
rm -rf "$case_dir"
for server in everything filesystem memory; do
	n=$(grep -c "^ *${server}__" "$out/catalog.txt" || true)
	if ((n == 0)); then
		cat "$out/catalog.txt"
		echo "load test: the catalog lists no tool of $server" >&2
		exit 1
	fi
	echo "    catalog: $server: $n tools"
done
echo "    load average $(load) after $((SECONDS - start))s"
