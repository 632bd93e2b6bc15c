// Command hosteval is an MCP host and a batch eval harness built on it.
//
// Subcommands:
//
//	run       run scenario files and write results/<run-id>/
//	report    rebuild reports from a results folder
//	compare   compare two runs, benchstat style
//	gate      check a run against gates and a baseline
//	catalog   measure what a tool catalog costs in model context
//	tools     list the host's namespaced tool table
//	chat      talk to a model through the host, or call tools by hand
//	version   print the version
//
// Exit codes: 0 every case passed and every gate held; 1 a case or a gate
// failed; 2 a usage or scenario error; 3 an infrastructure failure (a server
// would not start, the model endpoint could not be reached).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// Exit codes.
const (
	exitOK       = 0
	exitFailed   = 1
	exitUsage    = 2
	exitInfra    = 3
	exitSignaled = 130
)

func main() {
	ctx := context.Background()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// env is what a command gets: its streams, its context, and the signal
// handling of the process (a test runs commands without signals).
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// interrupts delivers Ctrl-C (and SIGTERM); nil when not wired.
	interrupts <-chan os.Signal
	getenv     func(string) string
}

// command is one subcommand: its name, a one-line summary, a usage text with
// examples, and its run function, which returns the exit code.
type command struct {
	name    string
	summary string
	usage   string
	run     func(ctx context.Context, e *env, args []string) int
}

func commands() []command {
	return []command{
		runCommand,
		reportCommand,
		compareCommand,
		gateCommand,
		catalogCommand,
		toolsCommand,
		chatCommand,
		conformanceCommand,
		versionCommand,
	}
}

// run is the whole CLI: it returns the exit code instead of exiting, so
// that tests run it in-process.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	return runEnv(ctx, &env{stdin: stdin, stdout: stdout, stderr: stderr, interrupts: sigs, getenv: os.Getenv}, args)
}

func runEnv(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help" {
		usage(e.stderr)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, e, args[1:])
		}
	}
	fmt.Fprintf(e.stderr, "hosteval: unknown command %q\n\n", args[0])
	usage(e.stderr)
	return exitUsage
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

// parseFlags parses args; it returns the exit code to stop with, or -1 to go on.
func parseFlags(fs *flag.FlagSet, args []string) int {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	return -1
}

// usageErr reports a usage problem and returns the usage exit code.
func usageErr(e *env, format string, args ...any) int {
	fmt.Fprintf(e.stderr, "hosteval: "+format+"\n", args...)
	return exitUsage
}
