#!/usr/bin/env bash
# Regenerates the viewer's fixture runs, runs/base and runs/new, with a real
# `hosteval run` of suite/ (the servers built by `make build`), and
# runs/catalog.json with a real `hosteval catalog -json`. The two runs are
# runs of one suite: the same files, suite/common.yaml and suite/runs.yaml,
# whose runs.yaml is base/runs.yaml the first time and new/runs.yaml the
# second. Cases fail on purpose (exit 1); any other failure stops here.
#
#   internal/web/view/testdata/regen.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
make -C "$repo" build >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for run in base new; do
	rm -rf "$work/suite"
	mkdir -p "$work/suite"
	sed "s|BIN/|$repo/bin/|" "$here/suite/servers.yaml" >"$work/suite/servers.yaml"
	cp "$here/suite/common.yaml" "$work/suite/common.yaml"
	cp "$here/suite/$run/runs.yaml" "$work/suite/runs.yaml"
	rc=0
	(cd "$work" && "$repo/bin/hosteval" run -wire -concurrency 1 -out results -run-id "$run" suite/ >/dev/null 2>"$work/$run.err") || rc=$?
	if [ "$rc" -gt 1 ]; then
		cat "$work/$run.err" >&2
		echo "regen: hosteval run $run exited $rc" >&2
		exit "$rc"
	fi
done
(cd "$work" && "$repo/bin/hosteval" catalog -servers-file suite/servers.yaml -servers cmdb,tickets -json >results/catalog.json)
rm -rf "$here/runs"
cp -r "$work/results" "$here/runs"
echo "regen: wrote $here/runs"
