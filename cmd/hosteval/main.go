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
//	lint      check what a tool catalog tells the model: poisoning, gaps, cost
//	pin       write hosteval.lock: each tool's definition and hash
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
	"runtime"
	"strings"
	"time"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/table"
	"github.com/hosteval/hosteval/internal/yamlx"
)

func main() {
	tuneGC(os.Getenv, smallHeapBytes)
	// A server's helper that leaves its process group and outlives its
	// parent is then handed to hosteval, which ends it with its server
	// (internal/host/orphans.go). Linux only; elsewhere it escapes.
	host.BecomeSubreaper()
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
	// maxProcs sets the process's GOMAXPROCS (runProcs says when); nil
	// in a test that runs commands in-process, whose GOMAXPROCS is the
	// test binary's.
	maxProcs func(n int)
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
		lintCommand,
		pinCommand,
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
	return runEnv(ctx, &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv, interrupt: intr,
		maxProcs: func(n int) { runtime.GOMAXPROCS(n) }}, args)
}

// abortWait is how long the second interrupt waits for a command to say
// how it ended (run writes run.json) before the process exits anyway.
const abortWait = 3 * time.Second

// runEnv runs the command args name, handles the interrupt, and prints
// the error the command returns: the one place that decides the exit code.
func runEnv(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help" && len(args) == 1 {
		usage(e.stderr)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	if args[0] == "help" {
		// hosteval help run is hosteval run -h.
		args = []string{args[1], "-h"}
	}
	c := findCommand(args[0])
	if c == nil {
		unknownCommand(e.stderr, args[0])
		return exitUsage
	}
	if _, err := table.ParseLayout(e.getenv(table.LayoutEnv)); err != nil {
		// Checked before the command runs, so that a misspelt switch
		// is not a table laid out the default way without a word.
		return exit(e.stderr, c.name, usageError{err}, false)
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
			code := exit(e.stderr, c.name, err, interrupted)
			if code != exitOK && code != exitSignaled && isCharDevice(e.stdout) && !isCharDevice(e.stderr) {
				// stderr goes to a file (2>host.log): the person at the
				// terminal still learns that the command failed, and where
				// to look.
				fmt.Fprintln(e.stdout, terminalSummary(c.name, err, code))
			}
			return code
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

// isCharDevice reports whether w is a terminal (or another character
// device).
func isCharDevice(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// terminalSummary is the one line a failed command leaves on the terminal
// when its stderr goes elsewhere: the first line of what it printed there,
// and the exit code.
func terminalSummary(name string, err error, code int) string {
	var b strings.Builder
	printError(&b, name, err)
	first, rest, _ := strings.Cut(strings.TrimSpace(b.String()), "\n")
	switch {
	case first == "":
		return fmt.Sprintf("hosteval: %s: exit %d (stderr says why)", name, code)
	case rest != "":
		return fmt.Sprintf("%s (exit %d; stderr has the rest)", first, code)
	}
	return fmt.Sprintf("%s (exit %d)", first, code)
}

// findCommand returns the command named name, or nil.
func findCommand(name string) *command {
	for _, cmd := range commands() {
		if cmd.name == name {
			return &cmd
		}
	}
	return nil
}

// unknownCommand says so in one line, with the closest command when name
// looks like a typo of one, and how to list them: not the whole usage.
func unknownCommand(w io.Writer, name string) {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	line := fmt.Sprintf("hosteval: unknown command %q", name)
	if best, ok := yamlx.Closest(name, names); ok {
		line += fmt.Sprintf(": did you mean %s?", best)
	}
	fmt.Fprintln(w, line)
	fmt.Fprintln(w, "usage: hosteval <command> [flags] [args]")
	fmt.Fprintln(w, "Run 'hosteval help' for the commands.")
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

// newFlags returns a command's FlagSet, whose Usage prints the command's
// usage and flags to the set's output (-h prints them all; a mistake in
// the command line only their first line: see parseFlags).
func newFlags(e *env, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "%s\n\nflags:\n", strings.TrimSpace(usage))
		printFlags(fs.Output(), fs)
	}
	return fs
}

// parseFlags parses args with the flags anywhere among the arguments
// (`hosteval run evals/ -out x` is `hosteval run -out x evals/`) until a
// "--", after which every word is an argument; fs.Args returns the
// arguments in their order. The help (-h) is printed whole; a mistake in
// the command line is one line, with the closest flag when it looks like
// a typo, then the command's usage line: the error is shown, not printed
// again.
func parseFlags(fs *flag.FlagSet, args []string) error {
	return parseCommandLine(fs, args, true)
}

// parseFlagsFirst is parseFlags with the flags before the first argument
// only: what follows is another program's command line (init's server).
func parseFlagsFirst(fs *flag.FlagSet, args []string) error {
	return parseCommandLine(fs, args, false)
}

func parseCommandLine(fs *flag.FlagSet, args []string, interspersed bool) error {
	out, help := fs.Output(), fs.Usage
	// The flag package prints its error and the whole usage itself: not
	// while parsing.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	defer func() { fs.SetOutput(out); fs.Usage = help }()

	var positional []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			fs.SetOutput(out)
			if errors.Is(err, flag.ErrHelp) {
				help()
				return err
			}
			fmt.Fprintf(out, "hosteval: %s: %s\n", fs.Name(), flagMistake(fs, err))
			fmt.Fprintln(out, shortUsage(fs, help))
			return shown{usageError{err}}
		}
		left := fs.Args()
		consumed := len(rest) - len(left)
		if !interspersed || len(left) == 0 || consumed > 0 && rest[consumed-1] == "--" {
			positional = append(positional, left...)
			break
		}
		positional, rest = append(positional, left[0]), left[1:]
	}
	// Leave the arguments where fs.Args finds them.
	return fs.Parse(append([]string{"--"}, positional...))
}

// flagMistake is the flag package's error in one line, naming the closest
// flag when the one given is not defined and looks like a typo of one.
func flagMistake(fs *flag.FlagSet, err error) string {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return err.Error()
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if best, ok := yamlx.Closest(name, names); ok {
		return fmt.Sprintf("flag -%s: did you mean -%s?", name, best)
	}
	return err.Error()
}

// shortUsage is the first line of a command's usage and where the rest
// is.
func shortUsage(fs *flag.FlagSet, help func()) string {
	var b strings.Builder
	fs.SetOutput(&b)
	help()
	fs.SetOutput(io.Discard)
	first, _, _ := strings.Cut(b.String(), "\n")
	return fmt.Sprintf("%s\nRun 'hosteval %s -h' for its flags and examples.", first, fs.Name())
}
