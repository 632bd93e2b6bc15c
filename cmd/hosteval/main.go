// Command hosteval is an MCP host and a batch eval harness built on it.
//
// Subcommands:
//
//	init      start a suite for a server: servers.yaml, a scenario per tool, gates
//	run       run scenario files and write results/<run-id>/
//	report    rebuild reports from a results folder
//	show      print the transcript of one case of a run
//	view      browse a results folder in a local web page
//	compare   compare two runs, benchstat style
//	gate      check a run against gates and a baseline
//	catalog   measure what a tool catalog costs in model context
//	tools     list the host's namespaced tool table
//	chat      talk to a model through the host, or call tools by hand
//	merge     merge the run folders of a suite's shards into one run
//	lab       the host as a web page: chat, forms, calls and logs
//	version   print the version
//
// Exit codes: 0 every case passed and every gate held; 1 a case or a gate
// failed; 2 a usage, scenario or configuration error; 3 an infrastructure
// failure (a server would not start, the model endpoint could not be
// reached); 130 interrupted (Ctrl-C or SIGTERM).
//
// Every command returns an error; [exitCode] turns it into the exit code
// and [run] prints it, once. The interrupt is installed once, in run, for
// every command (see [interrupts]).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/hosteval/hosteval/internal/host"
)

func main() {
	tuneGC(os.Getenv, smallHeapBytes)
	ctx := context.Background()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// env is what a command gets: its streams, its environment, and the
// process's interrupt (a test runs commands without one).
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	// interrupt is the two-stage Ctrl-C; its channels are nil when not wired.
	interrupt interrupts
	// groups holds the process group of every stdio server the command
	// starts, so that the second interrupt kills them all, grandchildren
	// included.
	groups *host.ProcessGroups
	// oauth are a test's replacements for the person and the token cache.
	oauth oauthSeams
}

// onInterrupt says what the first interrupt does to a command.
type onInterrupt int

const (
	// exitNow: the command holds nothing that must be stopped (it reads
	// files and writes them whole), so the process exits at once.
	exitNow onInterrupt = iota
	// cancelContext: the command's context is cancelled and it stops its
	// servers before it returns; a second interrupt kills them and exits.
	cancelContext
	// drainCases: the command reads the interrupt itself (run: no new
	// cases; running ones get a grace).
	drainCases
)

// command is one subcommand: its name, a one-line summary, a usage text with
// examples, what an interrupt does to it, and its run function.
type command struct {
	name        string
	summary     string
	usage       string
	onInterrupt onInterrupt
	run         func(ctx context.Context, e *env, args []string) error
}

func commands() []command {
	return []command{
		initCommand,
		runCommand,
		reportCommand,
		showCommand,
		viewCommand,
		compareCommand,
		gateCommand,
		catalogCommand,
		toolsCommand,
		chatCommand,
		labCommand,
		conformanceCommand,
		schemaCommand,
		mergeCommand,
		versionCommand,
	}
}

// run is the whole CLI: it returns the exit code instead of exiting, so
// that tests run it in-process.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	intr, stop := watchSignals()
	defer stop()
	return runEnv(ctx, &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv, interrupt: intr}, args)
}

// abortWait is how long the second interrupt waits for a command to say
// how it ended (run writes run.json) before the process exits anyway.
const abortWait = 3 * time.Second

// runEnv runs the command args name, handles the interrupt, and prints
// the error the command returns: the one place that decides the exit code.
func runEnv(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help" {
		usage(e.stderr)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	var c *command
	for _, cmd := range commands() {
		if cmd.name == args[0] {
			c = &cmd
			break
		}
	}
	if c == nil {
		fmt.Fprintf(e.stderr, "hosteval: unknown command %q\n\n", args[0])
		usage(e.stderr)
		return exitUsage
	}
	if e.groups == nil {
		e.groups = host.NewProcessGroups()
	}

	ctx, cancelCtx := context.WithCancelCause(ctx)
	defer cancelCtx(nil)
	// The command runs on its own goroutine so that an interrupt can end
	// the process while it is blocked; the process exits when this
	// returns, which ends the goroutine with it.
	result := make(chan error, 1)
	go func() { result <- c.run(ctx, e, args[1:]) }()

	first, second := e.interrupt.first, e.interrupt.second
	interrupted := false
	for {
		select {
		case err := <-result:
			return exit(e.stderr, c.name, err, interrupted)
		case <-first:
			first, interrupted = nil, true
			switch c.onInterrupt {
			case exitNow:
				return exit(e.stderr, c.name, nil, true)
			case cancelContext:
				fmt.Fprintln(e.stderr, "\nhosteval: interrupted: stopping the servers (Ctrl-C again to exit now)")
				cancelCtx(errInterrupted)
			}
		case <-second:
			fmt.Fprintln(e.stderr, "hosteval: exiting now")
			e.groups.Kill()
			cancelCtx(errInterrupted)
			select {
			case err := <-result:
				return exit(e.stderr, c.name, err, true)
			case <-time.After(abortWait):
				return exit(e.stderr, c.name, nil, true)
			}
		}
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: hosteval <command> [flags] [args]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	for _, c := range commands() {
		if c.summary == "" {
			continue // a command people do not run (conformance-client)
		}
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'hosteval <command> -h' for a command's flags and examples.")
}

// newFlags returns a command's FlagSet, which prints the command's usage and
// flags on -h and on a bad flag.
func newFlags(e *env, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "%s\n\nflags:\n", strings.TrimSpace(usage))
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args. The flag package has printed what was wrong (or
// the help), so the error it returns is not printed again.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return shown{usageError{err}}
	}
	return nil
}
