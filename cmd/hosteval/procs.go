package main

// A run that holds one conversation at a time (one case, or -concurrency
// 1) has no work for a second P: a call is a write to the server, a wait,
// and a read. But with two Ps, every answer read makes a goroutine
// runnable while a P is idle, and the runtime wakes a second thread to
// look for work (wakep); it finds none, spins, and parks again. On a
// small CI machine (2 cores) that thread takes its turns from the server
// under test, which is starting or answering at that very moment. With
// one P, in the 100-call job of make bench-peers (150 rounds in turns),
// the 100 calls took 29.0 ms against 32.4, the server's exec came 0.6 ms
// sooner after the fork, and the whole run 4.1 ms (paired median); the
// job went from 1.053x the bare go-sdk client to 1.034x (docs/perf.md,
// "The last 5%, a fifth look"). A run of many cases at once keeps every
// P, and GOMAXPROCS in the environment is the user's choice, left alone.

// runProcs returns the GOMAXPROCS a run of cases cases, concurrency of
// them at once, should have, or 0 to leave it as the runtime set it.
func runProcs(getenv func(string) string, concurrency, cases int) int {
	if getenv("GOMAXPROCS") != "" {
		return 0
	}
	if min(concurrency, cases) == 1 {
		return 1
	}
	return 0
}
