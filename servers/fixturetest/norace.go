//go:build !race

package fixturetest

const raceEnabled = false
