package main

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// gcPercent reads the current GOGC.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestTuneGC changes this process's collector: it runs alone and puts
// the default back.
func TestTuneGC(t *testing.T) {
	t.Cleanup(func() { debug.SetGCPercent(100) })
	none := func(string) string { return "" }

	for _, env := range []map[string]string{{"GOGC": "200"}, {"GOMEMLIMIT": "1GiB"}} {
		debug.SetGCPercent(100)
		tuneGC(func(k string) string { return env[k] }, 1<<40)
		if got := gcPercent(); got != 100 {
			t.Errorf("env %v: GOGC=%d, want the user's (100 here)", env, got)
		}
	}

	// A small heap stays at smallHeapGCPercent through collections.
	debug.SetGCPercent(100)
	tuneGC(none, 1<<40)
	for range 5 {
		runtime.GC()
	}
	if got := gcPercent(); got != smallHeapGCPercent {
		t.Errorf("small heap after 5 collections: GOGC=%d, want %d", got, smallHeapGCPercent)
	}

	// A heap over the limit goes back to the default after a collection.
	tuneGC(none, 1<<20)
	live := make([]*[1024]byte, 4096) // 4 MiB kept live
	for i := range live {
		live[i] = new([1024]byte)
	}
	for i := 0; gcPercent() != 100; i++ {
		if i == 1000 {
			t.Fatalf("GOGC still %d after %d collections with 4 MiB live", gcPercent(), i)
		}
		runtime.GC()
		runtime.Gosched()
	}
	runtime.KeepAlive(live)
}

// TestReturnHeapWhile: the heap is freed while the servers stop, and not
// once they have.
func TestReturnHeapWhile(t *testing.T) {
	stopped := make(chan struct{})
	freed := 0
	free := func() { freed++ }
	returnHeapWhile(stopped, free)
	if freed != 1 {
		t.Errorf("freed %d times while the servers stop, want 1", freed)
	}
	close(stopped)
	returnHeapWhile(stopped, free)
	if freed != 1 {
		t.Errorf("freed %d times in all, want no more once they stopped", freed)
	}
}
