// Package tabletest finds, for tests, the text tables in a command's
// output and says which of their lines do not fit a terminal.
package tabletest

import (
	"fmt"
	"strings"

	"github.com/hosteval/hosteval/internal/table"
)

// Overflows returns the lines of the text tables in out that are wider
// than width display columns or end in a space, each with its width, and
// how many table lines it checked. A table is what [table.Table.WriteText]
// lays out: a title, a header, a rule of dashes, the rows and the notes,
// up to a blank line; it is found by its rule.
func Overflows(out string, width int) (problems []string, checked int) {
	lines := strings.Split(out, "\n")
	in := make([]bool, len(lines))
	for r, line := range lines {
		if len(line) < 3 || strings.Trim(line, "-") != "" || r == 0 {
			continue
		}
		start := r - 1 // the header
		if start > 0 && lines[start-1] != "" {
			start-- // the title
		}
		end := r + 1
		for end < len(lines) && lines[end] != "" {
			end++
		}
		for i := start; i < end; i++ {
			in[i] = true
		}
	}
	for i, line := range lines {
		if !in[i] {
			continue
		}
		checked++
		if w := table.DisplayWidth(line); w > width {
			problems = append(problems, fmt.Sprintf("%d columns wide: %s", w, line))
		}
		if strings.HasSuffix(line, " ") {
			problems = append(problems, fmt.Sprintf("ends in a space: %q", line))
		}
	}
	return problems, checked
}

// Lines returns the lines of out, every one and not only its tables',
// that are wider than width display columns or end in a space, each with
// its line number and width, and how many lines it checked.
func Lines(out string, width int) (problems []string, checked int) {
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		checked++
		if w := table.DisplayWidth(line); w > width {
			problems = append(problems, fmt.Sprintf("line %d, %d columns wide: %s", i+1, w, line))
		}
		if strings.HasSuffix(line, " ") {
			problems = append(problems, fmt.Sprintf("line %d ends in a space: %q", i+1, line))
		}
	}
	return problems, checked
}
