package host

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// TestStopGraceCountsFromInputEnd: the grace before SIGTERM counts from
// the end of the server's input, not from the call to stop. A server that
// ignores its input's end (sleep reads none), whose input ended a whole
// grace ago, is signalled at once; counted from the stop, it would get the
// grace again (a minute here).
func TestStopGraceCountsFromInputEnd(t *testing.T) {
	const grace = time.Minute
	p, err := startProcess(ServerSpec{Name: "s", Command: "sleep", Args: []string{"600"}}, grace, nil, discardLines{})
	if err != nil {
		t.Fatal(err)
	}
	p.endInput()
	if p.inputEnded.Load() == 0 {
		t.Fatal("endInput noted no time")
	}
	p.inputEnded.Store(time.Now().Add(-grace).UnixNano())
	start := time.Now()
	p.stop()
	if took := time.Since(start); took >= grace/2 {
		t.Errorf("stop took %v, want the SIGTERM at once: the grace had passed since the input ended", took)
	}
	if got, want := p.exitStatus(), "was killed by signal SIGTERM"; got != want {
		t.Errorf("exit status %q, want %q (SIGTERM, not SIGKILL)", got, want)
	}
}

// TestPoolEndInputs: EndInputs ends the input of each started stdio server
// of the pool before it returns, so that a server that exits at the end of
// its input (cmdb) is gone before Close is called; Close then reaps it.
func TestPoolEndInputs(t *testing.T) {
	ctx := context.Background()
	pool := NewPool(Options{})
	defer pool.Close()
	cmdb := fixture("cmdb")
	cmdb.Shareable = true
	h, err := Start(ctx, Options{Servers: []ServerSpec{cmdb}, Pool: pool})
	if err != nil {
		t.Fatal(err)
	}
	h.Close() // a host leaves its shared servers running
	s := h.servers["cmdb"]
	if s == nil || s.proc == nil {
		t.Fatal("no process for the shared cmdb")
	}
	if s.proc.waitExit(0) {
		t.Fatal("the shared server ended with the host that used it")
	}
	pool.EndInputs()
	if s.proc.inputEnded.Load() == 0 {
		t.Fatal("EndInputs returned with the server's input open")
	}
	if !s.proc.waitExit(time.Minute) {
		t.Fatal("cmdb did not exit at the end of its input")
	}
	pool.Close()
}

// TestAwaitInputRead: the wait before the first listing ends as soon as
// the server has read what was written, and at its bound when it reads
// nothing.
func TestAwaitInputRead(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		bound   time.Duration
		pending bool
	}{
		{"reads", []string{"-c", "exec cat > /dev/null"}, time.Minute, false},
		{"reads nothing", []string{"-c", "exec sleep 600"}, 100 * time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := startProcess(ServerSpec{Name: "s", Command: "/bin/sh", Args: tc.args}, 10*time.Millisecond, nil, discardLines{})
			if err != nil {
				t.Fatal(err)
			}
			defer p.stop()
			if _, err := p.stdin.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			p.awaitInputRead(tc.bound)
			took := time.Since(start)
			if pending := p.input() == inputPending; pending != tc.pending {
				t.Fatalf("input pending after the wait: %v, want %v", pending, tc.pending)
			}
			if tc.pending && took < tc.bound {
				t.Errorf("returned after %v with the input unread, want the whole %v", took, tc.bound)
			}
			if !tc.pending && took >= tc.bound/2 {
				t.Errorf("returned after %v, want as soon as the input was read", took)
			}
		})
	}
}

// BenchmarkAwaitInputRead is the wait before a first listing on a server
// that reads at once (cat): a line written, then the wait for its read.
// With time.Sleep as the poll's pause it took 0.79-0.85 ms an operation
// (a sleep of 50 µs lasted a millisecond); with pause, 0.02-0.12 ms.
func BenchmarkAwaitInputRead(b *testing.B) {
	p, err := startProcess(ServerSpec{Name: "s", Command: "/bin/sh", Args: []string{"-c", "exec cat > /dev/null"}}, 10*time.Millisecond, nil, discardLines{})
	if err != nil {
		b.Fatal(err)
	}
	defer p.stop()
	if p.input() == inputUnknown {
		b.Skip("the platform cannot tell what a pipe holds: nothing waits")
	}
	line := []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	for b.Loop() {
		if _, err := p.stdin.Write(line); err != nil {
			b.Fatal(err)
		}
		p.awaitInputRead(time.Second)
	}
}

// TestStarted: Options.Started is called once for each stdio server
// process the host starts, with the process running by then, and a
// shared server's start calls its pool's once, however many hosts use it;
// a server that could not be started calls nothing.
func TestStarted(t *testing.T) {
	ctx := context.Background()
	var calls atomic.Int32
	counted := func() func() { return func() { calls.Add(1) } }
	t.Run("own servers", func(t *testing.T) {
		calls.Store(0)
		h, err := Start(ctx, Options{Servers: []ServerSpec{fixture("cmdb"), fixture("tickets")}, Started: counted()})
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		if got := calls.Load(); got != 2 {
			t.Errorf("Started called %d times for two servers, want 2", got)
		}
		var exited []string
		for name, s := range h.servers {
			if s.proc == nil || s.proc.waitExit(0) {
				exited = append(exited, name)
			}
		}
		if len(exited) > 0 {
			t.Errorf("servers %v not running after Started", exited)
		}
	})
	t.Run("shared server", func(t *testing.T) {
		calls.Store(0)
		pool := NewPool(Options{Started: counted()})
		defer pool.Close()
		cmdb := fixture("cmdb")
		cmdb.Shareable = true
		for range 3 {
			h, err := Start(ctx, Options{Servers: []ServerSpec{cmdb}, Pool: pool})
			if err != nil {
				t.Fatal(err)
			}
			h.Close()
		}
		if got := calls.Load(); got != 1 {
			t.Errorf("Started called %d times for one shared server used by three hosts, want 1", got)
		}
	})
	t.Run("not started", func(t *testing.T) {
		calls.Store(0)
		missing := ServerSpec{Name: "missing", Command: filepath.Join(t.TempDir(), "no-such-server")}
		h, _ := Start(ctx, Options{Servers: []ServerSpec{missing}, Started: counted()})
		if h != nil {
			h.Close()
		}
		if got := calls.Load(); got != 0 {
			t.Errorf("Started called %d times for a server whose command is missing, want 0", got)
		}
	})
}
