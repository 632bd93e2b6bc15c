// Command fakeapi serves the project's OpenAI-compatible test endpoint
// (servers/fakeapi/endpoint): a Chat Completions endpoint that answers from
// rules in a YAML file instead of model weights, in vLLM's shape. The suite's
// cassettes are recorded from it (make cassettes), so that they are what a
// real endpoint would have produced, without a GPU.
//
// With a command after the flags, fakeapi listens on a free port of
// 127.0.0.1, runs the command with OPENAI_BASE_URL set to the endpoint, and
// exits with the command's status once it ends:
//
//	fakeapi -config scenarios/cassettes/fakeapi.yaml -- hosteval run -record scenarios/cassettes scenarios/real-ab.yaml
//
// Without one, it prints the endpoint's URL on its first line of output and
// serves until it is interrupted:
//
//	fakeapi -config rules.yaml -addr 127.0.0.1:8000
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/hosteval/hosteval/internal/yamlx"

	"github.com/hosteval/hosteval/servers/fakeapi/endpoint"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `usage: fakeapi -config FILE [-addr HOST:PORT] [-now TIME] [-- command [args...]]

Serves an OpenAI-compatible Chat Completions endpoint that answers from the
rules in FILE (servers/fakeapi/endpoint's Config in YAML). With a command, runs
it with OPENAI_BASE_URL set to the endpoint and exits with its status;
without, prints the endpoint's URL and serves until interrupted.

examples:
  fakeapi -config scenarios/cassettes/fakeapi.yaml -- hosteval run -record scenarios/cassettes scenarios/real-ab.yaml
  fakeapi -config rules.yaml -addr 127.0.0.1:8000
`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fakeapi", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage, "\nflags:\n"); fs.PrintDefaults() }
	config := fs.String("config", "", "the endpoint's rules, a YAML `file`")
	addr := fs.String("addr", "127.0.0.1:0", "where to listen (port 0: a free one)")
	now := fs.String("now", "", "answer with this created time (RFC 3339), so that recordings of an unchanged suite do not differ by it")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *config == "" {
		fmt.Fprintln(stderr, "fakeapi: -config is required")
		return 2
	}
	h, err := handler(*config, *now)
	if err != nil {
		fmt.Fprintf(stderr, "fakeapi: %v\n", err)
		return 2
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "fakeapi: %v\n", err)
		return 1
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
		<-served
	}()
	url := "http://" + ln.Addr().String() + "/v1"

	if fs.NArg() == 0 {
		fmt.Fprintln(stdout, url)
		select {
		case <-ctx.Done():
			return 0
		case err := <-served:
			fmt.Fprintf(stderr, "fakeapi: %v\n", err)
			served <- err // for the deferred shutdown
			return 1
		}
	}
	cmd := exec.CommandContext(ctx, fs.Arg(0), fs.Args()[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	cmd.Env = append(os.Environ(), "OPENAI_BASE_URL="+url)
	// An interrupt reaches the command too (same process group); let it
	// finish its own way rather than kill it.
	cmd.Cancel = func() error { return nil }
	cmd.WaitDelay = time.Minute
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return exit.ExitCode()
	case err != nil:
		fmt.Fprintf(stderr, "fakeapi: %v\n", err)
		return 1
	}
	return 0
}

// handler reads the rules file into an endpoint.
func handler(path, now string) (*endpoint.Handler, error) {
	// The strict reader of hosteval's own files: every problem with its
	// line and key (docs/fakeapi.md is the reference).
	var cfg endpoint.Config
	if err := yamlx.DecodeFile(path, &cfg, nil); err != nil {
		return nil, err
	}
	if now != "" {
		t, err := time.Parse(time.RFC3339, now)
		if err != nil {
			return nil, fmt.Errorf("-now: %w", err)
		}
		cfg.Now = func() time.Time { return t }
	}
	h, err := endpoint.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return h, nil
}
