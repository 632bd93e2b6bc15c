package main

// npmPeer says how an npm harness would make the calls, or why it cannot.
func npmPeer(name, modules, dir, node, everything string, n int) peer {
	return peer{name: name, why: "not wired yet"}
}
