//go:build linux

package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// openTerminal opens a pseudo-terminal: the side a command writes to (its
// terminal) and the side a person reads.
func openTerminal(t *testing.T) (term, person *os.File) {
	t.Helper()
	person, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { person.Close() })
	fd := int(person.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	term, err = os.OpenFile(filepath.Join("/dev/pts", strconv.Itoa(n)), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { term.Close() })
	return term, person
}

// shownOn reads what the terminal shows once the command is done: the
// command's side is closed first, so the read ends.
func shownOn(t *testing.T, term, person *os.File) string {
	t.Helper()
	term.Close()
	data, _ := io.ReadAll(person) // ends in EIO once the other side is closed
	return strings.ReplaceAll(string(data), "\r\n", "\n")
}

// TestFailureOnTheTerminal: a command that fails with its stderr sent to a
// file (hosteval chat ... 2>host.log) still leaves one line on the
// terminal saying it failed, why and with which exit code; with -log, the
// host's logs go to that file and the error to the terminal. Output that
// is not a terminal gets no such line: a pipeline reads only what it asked
// for.
func TestFailureOnTheTerminal(t *testing.T) {
	dir := t.TempDir()
	servers := filepath.Join(dir, "servers.yaml")
	script := filepath.Join(dir, "script.yaml")
	for name, text := range map[string]string{
		servers: "servers:\n  broken:\n    command: " + filepath.Join(dir, "no-such-server") + "\n",
		script:  "- answer: hi\n",
	} {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	missing := []string{"chat", "-servers-file", servers, "-servers", "broken", "-script", filepath.Join(dir, "nosuch.yaml"), "-ask", "hi"}
	broken := []string{"chat", "-servers-file", servers, "-servers", "broken", "-script", script, "-ask", "hi"}
	runIt := func(args []string, stdout, stderr io.Writer) int {
		return runEnv(context.Background(), &env{stdin: strings.NewReader(""), stdout: stdout, stderr: stderr, getenv: func(string) string { return "" }}, args)
	}

	t.Run("stderr to a file", func(t *testing.T) {
		term, person := openTerminal(t)
		log, err := os.Create(filepath.Join(dir, "host.log"))
		if err != nil {
			t.Fatal(err)
		}
		defer log.Close()
		if code := runIt(missing, term, log); code != exitUsage {
			t.Fatalf("exit %d, want %d", code, exitUsage)
		}
		want := "hosteval: chat: -script: open " + filepath.Join(dir, "nosuch.yaml") + ": no such file or directory (exit 2)\n"
		if got := shownOn(t, term, person); got != want {
			t.Errorf("the terminal shows %q, want %q", got, want)
		}
		if data, _ := os.ReadFile(log.Name()); !strings.HasPrefix(string(data), "hosteval: chat: -script: open ") || strings.Count(string(data), "\n") != 1 {
			t.Errorf("stderr (the file) got %q, want the error once", data)
		}
	})

	t.Run("-log and a server that does not start", func(t *testing.T) {
		term, person := openTerminal(t)
		logFile := filepath.Join(dir, "chat.log")
		if code := runIt(append(broken, "-log", logFile), term, term); code != exitInfra {
			t.Fatalf("exit %d, want %d", code, exitInfra)
		}
		got := shownOn(t, term, person)
		if !strings.Contains(got, "hosteval: chat: server broken: start broken: ") || strings.Contains(got, `"operation"`) {
			t.Errorf("the terminal shows %q, want the error and no JSON log", got)
		}
		if data, _ := os.ReadFile(logFile); !strings.Contains(string(data), `"server":"broken"`) {
			t.Errorf("-log %s holds %q, want the host's logs", logFile, data)
		}
	})

	t.Run("stdout not a terminal", func(t *testing.T) {
		var stdout, stderr strings.Builder
		if code := runIt(missing, &stdout, &stderr); code != exitUsage {
			t.Fatalf("exit %d, want %d", code, exitUsage)
		}
		if stdout.String() != "" {
			t.Errorf("stdout got %q, want nothing", stdout.String())
		}
		if !strings.HasPrefix(stderr.String(), "hosteval: chat: -script: open ") {
			t.Errorf("stderr got %q", stderr.String())
		}
	})
}
