package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// A run's live heap is a megabyte or two, and nearly all it allocates is
// garbage. At the runtime's smallest heap goal (4 MB) the collector ran
// every few calls, a fifth of the process's CPU (docs/perf.md has the
// figures). A large run's heap is another matter (the 100,000-case run
// must stay under 150 MB), so the percent goes back to the default once
// the live heap outgrows smallHeapBytes, as the Go compiler does for its
// own small heaps. A GC ballast was tried first: it keeps its size
// resident for as long as the process lives. The percent is 600, a first
// goal of 24 MB: the 100-call job of make bench-peers allocates 14.4 MB
// (the go-sdk's 32 KB decoding buffer, twice a call, is half of it), and
// at 400 its one collection, of a live heap of 2 MB, cost 7 ms of the
// process's 54 ms of CPU (docs/perf.md).
const (
	smallHeapGCPercent = 600
	smallHeapBytes     = 8 << 20
)

// tuneGC sets GOGC=600 until, after a collection, the live heap is over
// smallHeap bytes, and then the default. A GOGC or GOMEMLIMIT in the
// environment is the user's choice, and is left alone.
func tuneGC(getenv func(string) string, smallHeap uint64) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(smallHeapGCPercent)
	afterEachGC(func() bool {
		live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(live)
		if live[0].Value.Kind() == metrics.KindUint64 && live[0].Value.Uint64() <= smallHeap {
			return true
		}
		debug.SetGCPercent(100)
		return false
	})
}

// gcSentinel has a pointer so that it is never a tiny allocation, whose
// cleanup may never run.
type gcSentinel struct{ _ *byte }

// afterEachGC calls fn after each collection (at some point after it, on
// the runtime's cleanup goroutine) for as long as fn returns true.
func afterEachGC(fn func() bool) {
	var arm func()
	arm = func() {
		runtime.AddCleanup(&gcSentinel{}, func(struct{}) {
			if fn() {
				arm()
			}
		}, struct{}{})
	}
	arm()
}

// returnHeapWhile gives the heap back to the operating system (free is
// debug.FreeOSMemory) while the shared servers' grace runs, that is while
// stopped is open. What a run allocated is otherwise freed by the kernel
// as the process exits, on the way to its parent's wait: most of it is
// garbage never collected (at GOGC 600 a 100-call run touches some 15 MB,
// half of it the go-sdk's decoding buffers), and returning it during the
// grace took 0.8 ms off the 100-call job's exit (docs/perf.md). Once the
// servers have stopped, nothing is left to wait for but the exit, and
// freeing first would only add a collection to it.
func returnHeapWhile(stopped <-chan struct{}, free func()) {
	select {
	case <-stopped:
	default:
		free()
	}
}
