package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/hosteval/hosteval/internal/buildinfo"
)

var versionCommand = command{
	name:    "version",
	summary: "print the version, the revision and the Go toolchain",
	usage:   versionUsage,
	run:     runVersion,
}

const versionUsage = `usage: hosteval version [-json]

Prints the module version of this binary, the VCS revision it was built
from (and whether the tree had uncommitted changes), the commit time, and
the Go toolchain and platform. A binary from 'go run' or 'go test' reports
the version "devel".

examples:
  hosteval version
  hosteval version -json | jq -r .revision`

func runVersion(_ context.Context, e *env, args []string) error {
	fs := newFlags(e, "version", versionUsage)
	jsonOut := fs.Bool("json", false, "print the facts as one JSON object")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("want no arguments, got %d", fs.NArg())
	}
	info := buildinfo.Read()
	if *jsonOut {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(info)
	}
	fmt.Fprintln(e.stdout, "hosteval", info.Version)
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	revision := info.Revision
	if revision == "" {
		revision = "unknown"
	}
	if info.Modified {
		revision += " (modified: uncommitted changes)"
	}
	fmt.Fprintf(tw, "  revision\t%s\n", revision)
	if info.Time != "" {
		fmt.Fprintf(tw, "  committed\t%s\n", info.Time)
	}
	fmt.Fprintf(tw, "  go\t%s %s\n", info.GoVersion, info.Platform)
	return tw.Flush()
}
