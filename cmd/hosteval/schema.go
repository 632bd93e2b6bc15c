package main

import (
	"context"

	"github.com/hosteval/hosteval/internal/scenario"
)

var schemaCommand = command{
	name:    "schema",
	summary: "print the JSON Schema of scenario, servers, gates, script or rules files",
	usage:   schemaUsage,
	run:     runSchema,
}

const schemaUsage = `usage: hosteval schema [scenario|servers|gates|script|rules]

Prints the JSON Schema (draft 2020-12) of a kind of file, scenario by
default. It is generated from the structs hosteval reads these files into,
so an editor checks a file by the loader's own rules; docs/ holds the same
schemas, and docs/scenarios.md is the reference of every key. With a YAML
language server (VS Code's YAML extension, for one), a line at the top of a
file is enough:

  # yaml-language-server: $schema=../docs/scenario.schema.json

examples:
  hosteval schema > scenario.schema.json
  hosteval schema servers
  hosteval schema gates`

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
	data, err := scenario.Schema(kind)
	if err != nil {
		return usagef("%v", err)
	}
	_, err = e.stdout.Write(data)
	return err
}
