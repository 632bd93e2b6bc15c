//go:build race

package report

// raceEnabled is set when the tests run under the race detector, which
// makes decoding several times slower: the large-run tests run fewer cases.
const raceEnabled = true
