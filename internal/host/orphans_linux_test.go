package host

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServerOrphansEnded: a server that starts a helper in a session of
// its own (setsid), holding the server's stderr. Before issue 23 the
// helper outlived the server, and stopping the server waited for its
// stderr to end: as long as the helper lived (600 s here). Now stopping
// the server ends the helper (found in the server's tree, or, detached by
// a double fork while the server runs, handed to this process as its
// subreaper and found by the server's tag), reaps it, logs it and counts
// it on the server's record.
func TestServerOrphansEnded(t *testing.T) {
	if err := BecomeSubreaper(); err != nil {
		t.Fatalf("BecomeSubreaper: %v", err)
	}
	for _, args := range []string{
		`{}`,
		`{"detach": true}`,
		// Holding none of the server's streams, it kept nothing waiting,
		// so before the stop looked for what was handed over always, it
		// escaped.
		`{"detach": true, "quiet": true}`,
	} {
		t.Run(args, func(t *testing.T) {
			var log syncBuffer
			h := startHost(t, Options{Servers: []ServerSpec{chaosWith("orphan")}, Log: &log})
			text, ev := call(t, h, "chaos__orphan", args)
			m := regexp.MustCompile(`"pid":\s*(\d+)`).FindStringSubmatch(text)
			if ev.Outcome != "ok" || m == nil {
				t.Fatalf("outcome %s, text %q: want ok and a pid", ev.Outcome, text)
			}
			pid, _ := strconv.Atoi(m[1])
			st, ok := readStat(pid)
			if !ok || st.state == 'Z' || st.command != "sleep" {
				t.Fatalf("the helper %d: %+v, %v; want a live sleep", pid, st, ok)
			}
			// Should the host miss it, the test must not leave it (nor
			// wait 600 s for it).
			t.Cleanup(func() {
				if now, ok := readStat(pid); ok && now.start == st.start {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			})
			closed := make(chan struct{})
			go func() {
				h.Close()
				close(closed)
			}()
			select {
			case <-closed:
			case <-time.After(time.Minute):
				syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("Close did not return: the helper %d holds the server's stderr", pid)
			}
			if after, ok := readStat(pid); ok && after.start == st.start {
				t.Errorf("the helper %d outlived its server (state %c, parent %d)", pid, after.state, after.ppid)
			}
			want := "the server left 1 process running outside its process group (" + m[1] + " sleep): the host ended it"
			if !strings.Contains(string(log.Bytes()), want) || !strings.Contains(string(log.Bytes()), `"operation":"host.orphans"`) {
				t.Errorf("the log does not say %q:\n%s", want, log.Bytes())
			}
			if n := h.Servers()[0].Orphans; n != 1 {
				t.Errorf("the record counts %d orphans, want 1", n)
			}
		})
	}
}

func TestParseStat(t *testing.T) {
	tests := []struct {
		line string
		want procStat
		ok   bool
	}{
		{"4242 (sleep) S 77 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987654 100 200", procStat{'S', 77, 4242, 987654, "sleep"}, true},
		{"7 (a (b) c)) Z 1 9 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0", procStat{'Z', 1, 9, 5, "a (b) c)"}, true},
		{"7 (a) R 1 2", procStat{}, false},
		{"garbage", procStat{}, false},
	}
	for _, tt := range tests {
		if got, ok := parseStat([]byte(tt.line)); got != tt.want || ok != tt.ok {
			t.Errorf("parseStat(%q) = %+v, %v; want %+v, %v", tt.line, got, ok, tt.want, tt.ok)
		}
	}
}

// BenchmarkOrphanScan is what stopping a server adds on the normal path:
// the walk of its tree before it stops, and the look at what was handed
// to this process's main thread, for a server that left nothing (its
// stderr ends, so the children of every thread are not looked at). The
// server is in the run's registry, as a run's are.
func BenchmarkOrphanScan(b *testing.B) {
	if err := BecomeSubreaper(); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	servers := NewProcessGroups()
	servers.add(cmd.Process.Pid)
	for b.Loop() {
		tree := descendants(cmd.Process.Pid)
		endTree("no-such-tag", -1, tree, false, servers)
	}
}

// BenchmarkHandedOver is the look at what was handed to this process's
// main thread, which every stop of a server makes: one read of one file
// when the main thread has no child outside the run's registry.
func BenchmarkHandedOver(b *testing.B) {
	if err := BecomeSubreaper(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		handedOver("no-such-tag", -1, nil)
	}
}

// TestChildrenAllocs: children reads /proc/PID/task and each task's
// children file into buffers on the stack, as every stop of a server
// does for its tree: it finds a child of this process, whichever thread
// started it, with no allocation but its answer's (os.ReadDir and
// os.ReadFile made 54 for this test's process, and 15 for a sleep).
func TestChildrenAllocs(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	self := os.Getpid()
	if got := children(self); !slices.Contains(got, cmd.Process.Pid) {
		t.Fatalf("children(%d) = %v, want %d among them", self, got, cmd.Process.Pid)
	}
	if got := children(cmd.Process.Pid); len(got) != 0 {
		t.Errorf("children of sleep = %v, want none", got)
	}
	// The answer's slice grows once for each doubling; other tests'
	// children may be there too.
	const most = 4
	if got := testing.AllocsPerRun(50, func() { children(self) }); got > most {
		t.Errorf("children(self): %.0f allocations, want at most %d", got, most)
	}
	if got := testing.AllocsPerRun(50, func() { children(cmd.Process.Pid) }); got != 0 {
		t.Errorf("children of a process without any: %.0f allocations, want none", got)
	}
}
