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

func runVersion(_ context.Context, e *env, args []string) int {
	fs := newFlags(e, "version", versionUsage)
	jsonOut := fs.Bool("json", false, "print the facts as one JSON object")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if fs.NArg() != 0 {
		return usageErr(e, "version: want no arguments, got %d", fs.NArg())
	}
	info := buildinfo.Read()
	if *jsonOut {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(info); err != nil {
			fmt.Fprintf(e.stderr, "hosteval: version: %v\n", err)
			return exitInfra
		}
		return exitOK
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
	if err := tw.Flush(); err != nil {
		fmt.Fprintf(e.stderr, "hosteval: version: %v\n", err)
		return exitInfra
	}
	return exitOK
}
