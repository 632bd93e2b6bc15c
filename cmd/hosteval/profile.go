package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
)

// profileFlags are run's -cpuprofile, -memprofile and -trace: Go's own
// profiles of the hosteval process, as `go test` writes them, so that a
// user whose suite is slow can see where hosteval spends its time (go tool
// pprof FILE, go tool trace FILE) without building it.
type profileFlags struct {
	cpu, mem, trace string
}

func (p *profileFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&p.cpu, "cpuprofile", "", "write a CPU profile of the run to `FILE` (go tool pprof FILE)")
	fs.StringVar(&p.mem, "memprofile", "", "write a memory profile (allocations, and what is in use at the end) to `FILE` when the run ends")
	fs.StringVar(&p.trace, "trace", "", "write an execution trace of the run to `FILE` (go tool trace FILE)")
}

// start creates the files and starts the CPU profile and the trace. The
// returned stop ends them and writes the memory profile; it returns the
// first error. A file that cannot be created is a usage error naming its
// flag, before anything runs.
func (p *profileFlags) start() (stop func() error, err error) {
	var stops []func() error
	stop = func() error {
		var errs []error
		for i := len(stops) - 1; i >= 0; i-- {
			errs = append(errs, stops[i]())
		}
		return errors.Join(errs...)
	}
	create := func(flag, path string) (*os.File, error) {
		f, err := os.Create(path)
		if err != nil {
			stop()
			return nil, usagef("-%s: %w", flag, err)
		}
		return f, nil
	}
	if p.cpu != "" {
		f, err := create("cpuprofile", p.cpu)
		if err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			stop()
			return nil, usagef("-cpuprofile: %w", err)
		}
		stops = append(stops, func() error {
			pprof.StopCPUProfile()
			return closeProfile("cpuprofile", f)
		})
	}
	if p.trace != "" {
		f, err := create("trace", p.trace)
		if err != nil {
			return nil, err
		}
		if err := trace.Start(f); err != nil {
			f.Close()
			stop()
			return nil, usagef("-trace: %w", err)
		}
		stops = append(stops, func() error {
			trace.Stop()
			return closeProfile("trace", f)
		})
	}
	if p.mem != "" {
		// Created now, so that a path that cannot be written stops the
		// run before it starts; written at the end.
		f, err := create("memprofile", p.mem)
		if err != nil {
			return nil, err
		}
		stops = append(stops, func() error {
			// What is in use at the end, as go test -memprofile has it:
			// after a collection. The profile holds the run's allocations
			// too (go tool pprof -sample_index=alloc_space).
			runtime.GC()
			if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
				f.Close()
				return fmt.Errorf("-memprofile: %w", err)
			}
			return closeProfile("memprofile", f)
		})
	}
	return stop, nil
}

func closeProfile(flag string, f *os.File) error {
	if err := f.Close(); err != nil {
		return fmt.Errorf("-%s: %w", flag, err)
	}
	return nil
}
