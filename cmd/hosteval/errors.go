package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/scenario"
)

// Exit codes.
const (
	exitOK       = 0
	exitFailed   = 1
	exitUsage    = 2
	exitInfra    = 3
	exitSignaled = 130
)

// Kinds of error, as the exit code sees them. Anything else a command
// returns is an infrastructure failure (3).
var (
	// errFailed marks a verdict: a case or a gate failed (1).
	errFailed = errors.New("failed")
	// errInterrupted marks an interrupted command (130); it is also the
	// cause of a context cancelled by an interrupt.
	errInterrupted = errors.New("interrupted")
	// errConfig marks a configuration a run found wrong only when it used
	// it, such as a model endpoint answering 401 or 404 (2).
	errConfig = errors.New("configuration")
)

// usageError is a mistake in the command line: a flag, an argument, a file
// named on it that cannot be used (2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usagef returns a usageError.
func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// failedf returns an error that counts as errFailed with the given text.
func failedf(format string, args ...any) error {
	return kind{fmt.Errorf(format, args...), errFailed}
}

// configf returns an error that counts as errConfig with the given text.
func configf(format string, args ...any) error {
	return kind{fmt.Errorf(format, args...), errConfig}
}

// interruptedf returns an error that counts as errInterrupted with the
// given text.
func interruptedf(format string, args ...any) error {
	return kind{fmt.Errorf(format, args...), errInterrupted}
}

// kind gives an error a kind for errors.Is without changing its text.
type kind struct {
	error
	is error
}

func (k kind) Is(target error) bool { return target == k.is }
func (k kind) Unwrap() error        { return k.error }

// shown wraps an error the user has already seen (the flag package prints
// its own), so that it is not printed again.
type shown struct{ error }

func (s shown) Unwrap() error { return s.error }

// exitCode is the one table of exit codes.
func exitCode(err error) int {
	var usage usageError
	var load *scenario.LoadError
	switch {
	case err == nil || errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.Is(err, errInterrupted):
		return exitSignaled
	case errors.As(err, &usage) || errors.As(err, &load) || errors.Is(err, host.ErrConfig) || errors.Is(err, errConfig):
		return exitUsage
	case errors.Is(err, errFailed):
		return exitFailed
	}
	return exitInfra
}

// exit prints err, once, and returns its exit code. An interrupted command
// exits 130 whatever it returned.
func exit(w io.Writer, name string, err error, interrupted bool) int {
	if interrupted && !errors.Is(err, errInterrupted) {
		// What a cancelled command says about its cancellation is noise.
		err = interruptedf("interrupted")
	}
	printError(w, name, err)
	return exitCode(err)
}

// printError prints err as "hosteval: name: text", one line for each error
// joined in it. A scenario's problems are printed as they are (each names
// its file and line).
func printError(w io.Writer, name string, err error) {
	var (
		sh   shown
		load *scenario.LoadError
	)
	switch {
	case err == nil || errors.Is(err, flag.ErrHelp) || errors.As(err, &sh):
		return
	case errors.As(err, &load):
		fmt.Fprintln(w, load)
		return
	}
	prefix := "hosteval: " + name + ": "
	errs := []error{err}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		errs = joined.Unwrap()
	}
	for _, e := range errs {
		for line := range strings.SplitSeq(e.Error(), "\n") {
			fmt.Fprintln(w, prefix+line)
		}
	}
}
