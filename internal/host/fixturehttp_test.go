package host

import (
	"bufio"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fixtureHTTP starts the fixture server name serving Streamable HTTP
// (FIXTURE_HTTP) with args and env, and returns a spec that reaches it
// under the name name. The process ends with the test: its stdin is
// closed and it is waited for.
func fixtureHTTP(t *testing.T, name string, args []string, env ...string) ServerSpec {
	t.Helper()
	cmd := exec.Command(filepath.Join(fixtureBin, name), args...)
	cmd.Env = append([]string{"FIXTURE_HTTP=127.0.0.1:0"}, env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := bufio.NewReader(stdout)
	line, err := out.ReadString('\n')
	drained := make(chan struct{})
	go func() {
		// The rest is read so that the server never blocks on stdout.
		io.Copy(io.Discard, out)
		close(drained)
	}()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-drained:
		case <-time.After(time.Minute):
			cmd.Process.Kill()
			<-drained
		}
		cmd.Wait()
	})
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok {
		t.Fatalf("%s over HTTP: first line %q (%v), stderr: %s", name, line, err, stderr.String())
	}
	return ServerSpec{Name: name, URL: url}
}
