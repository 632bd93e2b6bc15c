package host

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

// process is one stdio server's child process. The host owns its pipes (not
// exec's, whose Wait would close stdout under the SDK's reader and lose the
// last message of a server that answers and exits), starts it in its own
// process group so that stopping it also stops what it started (npx starts
// node), and always reaps it.
type process struct {
	cmd      *exec.Cmd
	stdin    *os.File // host's write end
	stdout   *os.File // host's read end
	grace    time.Duration
	exited   chan struct{} // closed when Wait returned
	exitErr  error         // valid after exited is closed
	stderrWG chan struct{} // closed when the stderr reader is done
}

// startProcess starts spec's command. Each stderr line is given to onStderr
// from a goroutine the process owns and stop waits for.
func startProcess(spec ServerSpec, grace time.Duration, onStderr func([]byte)) (*process, error) {
	cmd := exec.Command(spec.Command, spec.Args...)
	cmd.Dir = spec.Dir
	cmd.Env = append(serverEnv(os.Environ(), spec.InheritEnv), spec.Env...)
	cmd.SysProcAttr = processAttr()

	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	startErr := cmd.Start()
	// The child has its copies; the host keeps only its own ends, so that the
	// child's exit is seen as EOF.
	inR.Close()
	outW.Close()
	errW.Close()
	if startErr != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, startErr
	}
	p := &process{
		cmd: cmd, stdin: inW, stdout: outR, grace: grace,
		exited: make(chan struct{}), stderrWG: make(chan struct{}),
	}
	go func() {
		defer close(p.stderrWG)
		defer errR.Close()
		sc := bufio.NewScanner(errR)
		sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
		for sc.Scan() {
			onStderr(sc.Bytes())
		}
		// A line over the limit ends the scan; drain so the child never blocks.
		io.Copy(io.Discard, errR)
	}()
	go func() {
		p.exitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// baseEnv are the variables a server gets from the host's environment by
// default: enough to find programs, write temporary files and read text.
var baseEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR", "TEMP", "TMP", "LANG", "LANGUAGE", "TZ", "TERM", "SYSTEMROOT"}

// serverEnv filters the host's environment for a server.
func serverEnv(environ []string, inherit bool) []string {
	if inherit {
		return environ
	}
	var out []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if slices.Contains(baseEnv, k) || strings.HasPrefix(k, "LC_") {
			out = append(out, kv)
		}
	}
	return out
}

// exitStatus describes how the process ended, or "" while it runs.
func (p *process) exitStatus() string {
	select {
	case <-p.exited:
	default:
		return ""
	}
	var ee *exec.ExitError
	if errors.As(p.exitErr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return fmt.Sprintf("was killed by %v", ws.Signal())
		}
		return fmt.Sprintf("exited with status %d", ee.ExitCode())
	}
	if p.exitErr != nil {
		return p.exitErr.Error()
	}
	return "exited with status 0"
}

// waitExit waits up to d for the process to exit and reports whether it did.
func (p *process) waitExit(d time.Duration) bool {
	select {
	case <-p.exited:
		return true
	case <-time.After(d):
		return false
	}
}

// stop ends the process as the stdio transport asks (close its input, wait,
// SIGTERM, wait, SIGKILL), signalling its whole group, and reaps it. The
// grace is short: a fixture server exits in milliseconds once its input
// closes, and one that does not is stuck, not busy.
func (p *process) stop() {
	p.stdin.Close()
	if !p.waitExit(p.grace) {
		p.signal(syscall.SIGTERM)
		if !p.waitExit(p.grace) {
			p.signal(syscall.SIGKILL)
			<-p.exited
		}
	}
	// Children that outlived the leader would keep stderr open.
	p.signal(syscall.SIGKILL)
	p.stdout.Close()
	<-p.stderrWG
}

func (p *process) signal(sig syscall.Signal) {
	// The whole process group the child leads (see signalGroup).
	if err := signalGroup(p.cmd.Process.Pid, sig); err != nil {
		p.cmd.Process.Signal(sig)
	}
}
