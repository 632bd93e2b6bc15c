//go:build race

package fixturetest

// raceEnabled reports whether the test binary was built with -race, so that
// the servers under test are built the same way.
const raceEnabled = true
