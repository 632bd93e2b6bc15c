package main

import (
	"context"
	"slices"
	"strings"

	"github.com/hosteval/hosteval/internal/scenario"
)

var schemaCommand = command{
	name:    "schema",
	summary: "print the JSON Schema of an input file or a run folder's output",
	usage:   schemaUsage,
	run:     runSchema,
}

const schemaUsage = `usage: hosteval schema [KIND]

Prints the JSON Schema (draft 2020-12) of a kind of file, scenario by
default. Input files: scenario, servers, gates, script, rules. Output
files of a run folder: record (a line of records.jsonl), run (run.json),
summary (summary.json). Each is generated from the struct hosteval reads
or writes the file with, so an editor checks a file by the loader's own
rules and a program checks what it parses; docs/ holds the same schemas,
and docs/scenarios.md is the reference of every input key. With a YAML
language server (VS Code's YAML extension, for one), a line at the top of
a file is enough:

  # yaml-language-server: $schema=../docs/scenario.schema.json

examples:
  hosteval schema > scenario.schema.json
  hosteval schema servers
  hosteval schema gates
  hosteval schema summary > summary.schema.json`

func runSchema(_ context.Context, e *env, args []string) error {
	fs := newFlags(e, "schema", schemaUsage)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	kind := "scenario"
	switch fs.NArg() {
	case 0:
	case 1:
		kind = fs.Arg(0)
	default:
		return usagef("want one kind of file, got %q", fs.Args())
	}
	data, ok, err := outputSchema(kind)
	if err != nil {
		return err
	}
	if !ok {
		if !slices.Contains(scenario.SchemaKinds, kind) {
			kinds := slices.Clone(scenario.SchemaKinds)
			for _, k := range outputKinds {
				kinds = append(kinds, k.kind)
			}
			return usagef("no schema for %q: want one of %s", kind, strings.Join(kinds, ", "))
		}
		if data, err = scenario.Schema(kind); err != nil {
			return err
		}
	}
	_, err = e.stdout.Write(data)
	return err
}
