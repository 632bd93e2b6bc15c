package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hosteval/hosteval/servers/fixturetest"
)

// labProc is `hosteval lab` running in this process.
type labProc struct {
	stdout, stderr fixturetest.Buffer
	cancel         context.CancelFunc
	done           chan int
	url            string
}

// startLabCommand runs hosteval lab args in-process, with getenv as its
// environment, and waits for the address it prints.
func startLabCommand(t *testing.T, getenv func(string) string, args ...string) *labProc {
	t.Helper()
	p := &labProc{done: make(chan int, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	e := &env{stdin: strings.NewReader(""), stdout: &p.stdout, stderr: &p.stderr, getenv: getenv}
	go func() { p.done <- runEnv(ctx, e, append([]string{"lab"}, args...)) }()
	t.Cleanup(func() {
		cancel()
		<-p.done
	})
	addr := regexp.MustCompile(`^hosteval lab: (http://127\.0\.0\.1:\d+/) \(Ctrl-C`)
	deadline := time.Now().Add(time.Minute)
	for {
		if m := addr.FindStringSubmatch(p.stdout.String()); m != nil {
			p.url = m[1]
			return p
		}
		select {
		case code := <-p.done:
			t.Fatalf("hosteval lab exited %d before serving; stderr:\n%s", code, p.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("hosteval lab printed no address; stdout:\n%s\nstderr:\n%s", p.stdout.String(), p.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// state returns the lab's /state as JSON.
func (p *labProc) state(t *testing.T) map[string]any {
	t.Helper()
	resp, err := http.Get(p.url + "state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestLabServesTheHost: `hosteval lab` prints its address, opens it with
// $HOSTEVAL_BROWSER, serves the host with no model as a manual panel, and
// stops when its context ends.
func TestLabServesTheHost(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fixturetest.WriteFiles(t, dir, map[string]string{
		"servers.yaml": "servers:\n  cmdb:\n    command: " + filepath.Join(fixtureBin, "cmdb") + "\n",
		"browser":      "#!/bin/sh\necho \"$1\" > \"$(dirname \"$0\")/opened\"\n",
	})
	if err := os.Chmod(filepath.Join(dir, "browser"), 0o755); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		if k == "HOSTEVAL_BROWSER" {
			return filepath.Join(dir, "browser")
		}
		return ""
	}
	p := startLabCommand(t, getenv, "-servers-file", filepath.Join(dir, "servers.yaml"), "-servers", "cmdb", "-open", "-log", filepath.Join(dir, "host.log"))
	deadline := time.Now().Add(time.Minute)
	for {
		opened, _ := os.ReadFile(filepath.Join(dir, "opened"))
		if strings.TrimSpace(string(opened)) == p.url {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the browser was given %q, want %s", opened, p.url)
		}
		time.Sleep(20 * time.Millisecond)
	}
	setup := p.state(t)["setup"].(map[string]any)
	if setup["manual"] != true || len(setup["tools"].([]any)) != 2 {
		t.Errorf("setup = %v, want the manual panel with cmdb's two tools", setup)
	}
	p.cancel()
	select {
	case code := <-p.done:
		p.done <- code
	case <-time.After(time.Minute):
		t.Fatal("hosteval lab did not stop with its context")
	}
	if _, err := http.Get(p.url + "state"); err == nil {
		t.Error("the lab still answers after it stopped")
	}
	if log, _ := os.ReadFile(filepath.Join(dir, "host.log")); !strings.Contains(string(log), `"operation":"host.connect"`) {
		t.Errorf("-log holds %q, want the host's events", log)
	}
}

// TestLabTakesAScenario: -scenario takes the servers, the model, the
// system prompt and the host limits from the scenario -run names, and a
// flag given as well wins.
func TestLabTakesAScenario(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fixturetest.WriteFiles(t, dir, map[string]string{
		"servers.yaml": "servers:\n  cmdb:\n    command: " + filepath.Join(fixtureBin, "cmdb") + "\n  tickets:\n    command: " + filepath.Join(fixtureBin, "tickets") + "\n",
		"scenarios.yaml": `name: first
servers: [cmdb]
model: {scripted: [{answer: hi}]}
turns: ["hello"]
---
name: tickets-lab
servers: [cmdb, tickets]
system: "Be brief."
host: {max_steps: 5, tool_timeout: 7s}
model:
  scripted:
    - call: "cmdb__get_asset {hostname: jump-prod-02}"
    - answer: "Camille Michel."
turns: ["who owns jump-prod-02?", "open a ticket for it"]
`,
	})
	p := startLabCommand(t, func(string) string { return "" }, "-scenario", filepath.Join(dir, "scenarios.yaml"), "-run", "tickets", "-max-steps", "3")
	setup := p.state(t)["setup"].(map[string]any)
	limits := setup["limits"].(map[string]any)
	checks := []struct {
		what string
		got  any
		want any
	}{
		{"title", setup["title"], "tickets-lab"},
		{"model", setup["model"], "scripted"},
		{"suggestions", setup["suggestions"], []any{"who owns jump-prod-02?", "open a ticket for it"}},
		{"servers", len(setup["servers"].([]any)), 2},
		{"max_steps: the flag over the scenario", limits["max_steps"], 3.0},
		{"tool_timeout: the scenario's", limits["tool_timeout"], "7s"},
	}
	for _, c := range checks {
		if !jsonEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
}

// TestLabLogsToAFile: without -log, the host's and the servers' logs go
// to a file in a folder the lab names on stderr, so that nothing follows
// the address on the terminal.
func TestLabLogsToAFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fixturetest.WriteFiles(t, dir, map[string]string{
		"servers.yaml": "servers:\n  cmdb:\n    command: " + filepath.Join(fixtureBin, "cmdb") + "\n",
	})
	p := startLabCommand(t, func(string) string { return "" }, "-servers-file", filepath.Join(dir, "servers.yaml"))
	m := regexp.MustCompile(`(?m)^hosteval lab: logs in (\S+/lab\.log) \(-log FILE to choose\)$`).FindStringSubmatch(p.stderr.String())
	if m == nil {
		t.Fatalf("stderr names no log file:\n%s", p.stderr.String())
	}
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(m[1])) })
	deadline := time.Now().Add(time.Minute)
	for {
		data, _ := os.ReadFile(m[1])
		if strings.Contains(string(data), `"operation":"mcp.request"`) && strings.Contains(string(data), `"operation":"host.connect"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s has no server or host records:\n%s", m[1], data)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if strings.Contains(p.stderr.String(), `"operation"`) {
		t.Errorf("a log record reached the terminal:\n%s", p.stderr.String())
	}
	if lines := strings.Split(strings.TrimSpace(p.stdout.String()), "\n"); !strings.HasPrefix(lines[len(lines)-1], "hosteval lab: http://127.0.0.1:") {
		t.Errorf("the last line on stdout is %q, want the address", lines[len(lines)-1])
	}
}

func jsonEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
