package main

import (
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/servers/fixturetest"
)

// The interrupt, end to end: the hosteval binary (this test binary, which
// testscript.Main put on PATH) runs as its own process, gets real signals,
// and starts real servers whose process groups must not outlive it.

// hostevalProc is a hosteval process under test.
type hostevalProc struct {
	cmd            *exec.Cmd
	stdout, stderr fixturetest.Buffer
	exited         chan struct{}
	err            error // valid once exited is closed
}

// startHosteval starts hosteval args in dir with stdin.
func startHosteval(t *testing.T, dir string, stdin io.Reader, args ...string) *hostevalProc {
	t.Helper()
	p := &hostevalProc{exited: make(chan struct{})}
	p.cmd = exec.Command("hosteval", args...)
	p.cmd.Dir, p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = dir, stdin, &p.stdout, &p.stderr
	p.cmd.Env = append(os.Environ(), "CI=true")
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.exited
	})
	return p
}

func (p *hostevalProc) signal(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// exitCode waits for the process to exit and returns its exit code.
func (p *hostevalProc) exitCode(t *testing.T) int {
	t.Helper()
	select {
	case <-p.exited:
	case <-time.After(time.Minute):
		t.Fatalf("hosteval %s did not exit; stderr:\n%s", strings.Join(p.cmd.Args[1:], " "), p.stderr.String())
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ExitCode() // -1 when killed by a signal
	}
	if p.err != nil {
		t.Fatal(p.err)
	}
	return 0
}

// until waits for cond, or fails naming what.
func (p *hostevalProc) until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		select {
		case <-p.exited:
			t.Fatalf("hosteval exited before %s: %v; stderr:\n%s", what, p.err, p.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s; stderr:\n%s", what, p.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// serverGroup waits for the helper servers' pid file in dir and returns
// the server's process group.
func serverGroup(t *testing.T, p *hostevalProc, dir string) int {
	t.Helper()
	var pid int
	p.until(t, "the server to start", func() bool {
		var err error
		pid, err = fixturetest.WaitPID(filepath.Join(dir, "server.pid"), 0)
		return err == nil
	})
	return pid
}

// noSurvivors checks that no process of the group outlived hosteval.
func noSurvivors(t *testing.T, pgid int) {
	t.Helper()
	if left, err := fixturetest.WaitGroupGone(pgid, time.Minute); err != nil || len(left) > 0 {
		t.Errorf("processes %v of the server's group %d outlived hosteval (%v)", left, pgid, err)
	}
}

// TestRunSecondInterruptKillsEveryServer: the first Ctrl-C drains, the
// second exits at once with 130, having killed every server's process group
// (a shell, the helper it started, the server under it), and run.json says
// the run was interrupted and when it ended.
func TestRunSecondInterruptKillsEveryServer(t *testing.T) {
	dir := t.TempDir()
	fixturetest.WriteFiles(t, dir, map[string]string{
		"servers.yaml": fixturetest.HelperServers(fixtureBin, dir),
		"suite.yaml":   fixturetest.HoldScenario,
	})
	p := startHosteval(t, dir, nil, "run", "-run-id", "r1", "-preflight=false", "suite.yaml")
	pgid := serverGroup(t, p, dir)
	p.signal(t, os.Interrupt)
	p.until(t, "the first interrupt", func() bool { return strings.Contains(p.stderr.String(), "no new cases start") })
	p.signal(t, os.Interrupt)
	if code := p.exitCode(t); code != exitSignaled {
		t.Errorf("exit %d, want %d; stderr:\n%s", code, exitSignaled, p.stderr.String())
	}
	noSurvivors(t, pgid)
	run, err := record.ReadRun(filepath.Join(dir, "results", "r1"))
	if err != nil {
		t.Fatal(err)
	}
	if run.Info == nil || !run.Info.Interrupted || run.Info.Finished.IsZero() {
		t.Errorf("run.json = %+v, want interrupted and finished", run.Info)
	}
}

// TestCommandsEndOnInterrupt: every command ends promptly with 130 on
// SIGINT or SIGTERM, also while it waits on a person, a server or a file,
// and leaves no server behind.
func TestCommandsEndOnInterrupt(t *testing.T) {
	// A listener that accepts and never answers: a server that hangs.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
			accepted <- struct{}{}
		}
	}()

	tests := []struct {
		name string
		args []string
		sig  os.Signal
		// ready waits until the command is blocked where it should be;
		// it returns the server's process group (0 for none).
		ready func(t *testing.T, p *hostevalProc, dir string) int
	}{
		{"chat waiting for the person's line", []string{"chat", "-servers-file", "servers.yaml", "-servers", "hold"}, syscall.SIGTERM,
			func(t *testing.T, p *hostevalProc, dir string) int {
				pgid := serverGroup(t, p, dir)
				p.until(t, "the call> prompt", func() bool { return strings.Contains(p.stdout.String(), "call> ") })
				return pgid
			}},
		{"lab serving a call in flight", []string{"lab", "-servers-file", "servers.yaml", "-servers", "hold"}, syscall.SIGTERM,
			func(t *testing.T, p *hostevalProc, dir string) int {
				pgid := serverGroup(t, p, dir)
				addr := regexp.MustCompile(`hosteval lab: (http://127\.0\.0\.1:\d+/)`)
				p.until(t, "the lab's address", func() bool { return addr.MatchString(p.stdout.String()) })
				url := addr.FindStringSubmatch(p.stdout.String())[1]
				req, _ := http.NewRequest("POST", url+"call", strings.NewReader(`{"name": "hold__search_knowledge", "arguments": "{\"query\": \"return window\"}"}`))
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil || resp.StatusCode != http.StatusAccepted {
					t.Fatalf("POST /call: %v %v", resp, err)
				}
				resp.Body.Close()
				// The host says it runs the call just before it sends it.
				p.until(t, "the call to be sent", func() bool {
					resp, err := http.Get(url + "state")
					if err != nil {
						return false
					}
					defer resp.Body.Close()
					body, _ := io.ReadAll(resp.Body)
					return strings.Contains(string(body), "read-only tool on the auto-run list: run it")
				})
				return pgid
			}},
		{"tools waiting for a server", []string{"tools", "-servers-file", "servers.yaml", "-servers", "hang", "-connect-timeout", "10m"}, os.Interrupt, serverGroup},
		{"catalog waiting for a server", []string{"catalog", "-servers-file", "servers.yaml", "-servers", "hang", "-connect-timeout", "10m"}, syscall.SIGTERM, serverGroup},
		{"conformance-client waiting for a server", []string{"conformance-client", "-scenario", "initialize", "-connect-timeout", "10m", "-timeout", "10m", "http://" + ln.Addr().String() + "/mcp"}, os.Interrupt,
			func(t *testing.T, p *hostevalProc, dir string) int {
				p.until(t, "a connection", func() bool {
					select {
					case <-accepted:
						return true
					default:
						return false
					}
				})
				return 0
			}},
		{"report reading records", []string{"report", "run"}, os.Interrupt, readingRecords},
		{"compare reading records", []string{"compare", "run", "run"}, syscall.SIGTERM, readingRecords},
		{"gate reading records", []string{"gate", "-baseline", "run", "run"}, os.Interrupt, readingRecords},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			fixturetest.WriteFiles(t, dir, map[string]string{"servers.yaml": fixturetest.HelperServers(fixtureBin, dir)})
			// records.jsonl is a FIFO that never ends: a read of it blocks
			// as one of a huge file on a slow disk would.
			if err := os.Mkdir(filepath.Join(dir, "run"), 0o755); err != nil {
				t.Fatal(err)
			}
			fifo := filepath.Join(dir, "run", record.RecordsFile)
			if err := syscall.Mkfifo(fifo, 0o644); err != nil {
				t.Fatal(err)
			}
			// Held open for writing, so that opening it to read does not block.
			w, err := os.OpenFile(fifo, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			// A person who never types. An *os.File, so that exec does not
			// wait on a copy of it.
			stdin, person, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer stdin.Close()
			defer person.Close()

			p := startHosteval(t, dir, stdin, tt.args...)
			pgid := tt.ready(t, p, dir)
			p.signal(t, tt.sig)
			if code := p.exitCode(t); code != exitSignaled {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, exitSignaled, p.stderr.String())
			}
			if !strings.Contains(p.stderr.String(), "interrupted") {
				t.Errorf("stderr does not say interrupted:\n%s", p.stderr.String())
			}
			if pgid != 0 {
				noSurvivors(t, pgid)
			}
		})
	}
}

// readingRecords waits until hosteval has the run's records.jsonl open.
func readingRecords(t *testing.T, p *hostevalProc, dir string) int {
	t.Helper()
	fifo := filepath.Join(dir, "run", record.RecordsFile)
	fds := filepath.Join("/proc", strconv.Itoa(p.cmd.Process.Pid), "fd")
	p.until(t, "records.jsonl to be open", func() bool {
		entries, _ := os.ReadDir(fds)
		for _, e := range entries {
			if target, _ := os.Readlink(filepath.Join(fds, e.Name())); target == fifo {
				return true
			}
		}
		return false
	})
	return 0
}
