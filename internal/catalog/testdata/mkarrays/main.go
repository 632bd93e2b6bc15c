// Command mkarrays writes the tools arrays that the catalog's tests and
// benchmarks measure, each exactly as the host sends it with every model
// request:
//
//   - peers138.json: the npm reference servers pinned in tools/node,
//     server-everything and server-filesystem three times each and
//     server-memory six times under distinct names, 138 tools in all (the
//     size of a catalog of seven real servers);
//   - fixtures.json: this repository's fixture servers (scenarios/servers.yaml).
//
// Run from the repository root, after make build node-deps:
//
//	go run ./internal/catalog/testdata/mkarrays
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hosteval/hosteval/internal/budget"
	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/scenario"
)

const dir = "internal/catalog/testdata"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "mkarrays:", err)
		os.Exit(1)
	}
}

func run() error {
	caseDir, err := os.MkdirTemp("", "mkarrays-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(caseDir)
	os.Setenv("CASE_DIR", caseDir)

	npm, err := scenario.LoadServers("scenarios/thirdparty/servers.yaml", "everything", "filesystem", "memory")
	if err != nil {
		return err
	}
	var peers []host.ServerSpec
	for i, names := range [][]string{
		{"everything", "demo", "sandbox"},
		{"filesystem", "docs", "repo"},
		{"memory", "notes", "people", "projects", "incidents", "customers"},
	} {
		for _, name := range names {
			s := npm[i]
			s.Name = name
			peers = append(peers, s)
		}
	}
	if err := write("peers138.json", peers); err != nil {
		return err
	}
	fixtures, err := scenario.LoadServers("scenarios/servers.yaml", "cmdb", "tickets", "support", "legacy", "chaos")
	if err != nil {
		return err
	}
	return write("fixtures.json", fixtures)
}

// write starts the servers and writes their tools array to file.
func write(file string, servers []host.ServerSpec) error {
	// A dozen node processes starting at once on a busy machine are slow.
	h, err := host.Start(context.Background(), host.Options{Servers: servers, Budgets: budget.Budgets{Connect: budget.Connect{ConnectTimeout: time.Minute}}})
	if err != nil {
		return err
	}
	defer h.Close()
	for _, s := range h.Servers() {
		if s.Error != "" {
			return fmt.Errorf("server %s: %s", s.Name, s.Error)
		}
	}
	return os.WriteFile(filepath.Join(dir, file), append(h.ToolsJSON(), '\n'), 0o644)
}
