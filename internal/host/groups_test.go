package host

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestProcessGroups: a started server's group is registered until it is
// stopped; Kill kills it; a server started after Kill is killed at once.
func TestProcessGroups(t *testing.T) {
	g := NewProcessGroups()
	spec := ServerSpec{Name: "s", Command: "/bin/sh", Args: []string{"-c", "sleep 300 & sleep 300"}}
	start := func() *process {
		t.Helper()
		p, err := startProcess(spec, 100*time.Millisecond, g, discardLines{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.stop)
		return p
	}
	p := start()
	if n := g.Len(); n != 1 {
		t.Fatalf("%d groups registered, want 1", n)
	}
	if n := g.Kill(); n != 1 {
		t.Errorf("Kill signalled %d groups, want 1", n)
	}
	if !p.waitExit(time.Minute) {
		t.Fatal("the server outlived Kill")
	}
	if got := p.exitStatus(); !strings.Contains(got, syscall.SIGKILL.String()) {
		t.Errorf("exit status %q, want killed", got)
	}
	p.stop()
	if n := g.Len(); n != 0 {
		t.Errorf("%d groups registered after stop, want 0", n)
	}

	late := start()
	if !late.waitExit(time.Minute) {
		t.Fatal("a server started after Kill was not killed")
	}
}

// discardLines takes a server's stderr and keeps nothing.
type discardLines struct{}

func (discardLines) add([]byte) {}
func (discardLines) flush()     {}
