package yamlx

import "fmt"

// Suggest returns ` (did you mean "x"?)` for the known name closest to
// name, when it is close enough to be a likely typo, and "" otherwise.
func Suggest(name string, known []string) string {
	best, ok := Closest(name, known)
	if !ok {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// Closest returns the known name closest to name when it is close enough
// to be a likely typo: at most 1 + len(name)/4 edits away. The command
// line's flags and commands are suggested by the same rule as the files'
// keys.
func Closest(name string, known []string) (string, bool) {
	best, bestD := "", 2+len(name)/4 // accept distances up to 1 + len/4
	for _, k := range known {
		if d := editDistance(name, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best, best != ""
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
