package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hosteval/hosteval/servers/fixturetest"
)

// TestRunInterruptedWhileLoading: a Ctrl-C that comes while run reads the
// scenarios ends it there, with 130, before a results folder or a server
// exists (the loader stops between files: see scenario.LoadContext).
func TestRunInterruptedWhileLoading(t *testing.T) {
	dir := t.TempDir()
	fixturetest.WriteFiles(t, dir, map[string]string{
		"servers.yaml": "servers:\n  cmdb: {command: " + filepath.Join(fixtureBin, "cmdb") + "}\n",
		"s.yaml":       "name: s\nservers: [cmdb]\nmodel: {scripted: [{answer: done}]}\nquestion: q?\n",
	})
	first := make(chan struct{})
	close(first) // the interrupt has come
	var out, errOut bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: func(string) string { return "" },
		interrupt: interrupts{first: first}}
	results := filepath.Join(dir, "results")
	code := runEnv(context.Background(), e, []string{"run", "-out", results, filepath.Join(dir, "s.yaml")})
	if code != exitSignaled {
		t.Errorf("exit code %d, want %d; stderr:\n%s", code, exitSignaled, errOut.String())
	}
	if want := "hosteval: run: interrupted while loading the scenarios: no case ran\n"; errOut.String() != want {
		t.Errorf("stderr = %q, want %q", errOut.String(), want)
	}
	if _, err := os.Stat(results); !os.IsNotExist(err) {
		t.Errorf("results folder: %v, want none", err)
	}
}
