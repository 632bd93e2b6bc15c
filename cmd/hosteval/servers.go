package main

import "hosteval/internal/host"

import "hosteval/internal/scenario"

// loadServerSpecs reads the servers file and picks the named servers (all
// when none is named).
func loadServerSpecs(file string, names []string) ([]host.ServerSpec, error) {
	return scenario.LoadServers(file, names...)
}
