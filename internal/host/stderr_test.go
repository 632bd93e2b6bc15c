package host

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestStderrKeeper(t *testing.T) {
	tests := []struct {
		name   string
		budget int
		lines  []string
		// want is what is passed on, in order, with a note of what was
		// left out as "[dropped N bytes, M lines]".
		want []string
	}{
		{"within the budget", 10, []string{"ab", "cd", "ef"}, []string{"ab", "cd", "ef"}},
		{"head and tail", 4, []string{"ab", "cd", "ef", "gh", "ij", "kl"}, []string{"ab", "cd", "[dropped 6 bytes, 2 lines]", "ij", "kl"}},
		{"a line over the budget is cut", 3, []string{"abcdef", "g", "hijkl"}, []string{"abc", "[dropped 2 bytes, 1 lines]", "hij"}},
		{"nothing dropped, the tail still waits", 2, []string{"ab", "cd"}, []string{"ab", "cd"}},
		{"no budget", -1, []string{"abc", "def", "ghi"}, []string{"abc", "def", "ghi"}},
		{"a line cut on a character's start", 4, []string{"abcé"}, []string{"abc"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			k := newStderrKeeper(tt.budget, func(line []byte, _ time.Time) { got = append(got, string(line)) },
				func(bytes, lines int64) { got = append(got, fmt.Sprintf("[dropped %d bytes, %d lines]", bytes, lines)) })
			for _, l := range tt.lines {
				k.add([]byte(l))
			}
			k.flush()
			if !slices.Equal(got, tt.want) {
				t.Errorf("passed on %q, want %q", got, tt.want)
			}
		})
	}
	// A flood through a small tail: the counts, and the lines kept.
	var got []string
	k := newStderrKeeper(20, func(line []byte, _ time.Time) { got = append(got, string(line)) }, func(int64, int64) {})
	for i := range 100_000 {
		k.add(fmt.Appendf(nil, "%04d", i%10_000))
	}
	k.flush()
	if bytes, lines := k.dropped(); bytes != 5*(100_000-10) || lines != 100_000-10 {
		t.Errorf("dropped %d bytes, %d lines; want %d, %d", bytes, lines, 5*(100_000-10), 100_000-10)
	}
	if want := "0000 0001 0002 0003 0004 9995 9996 9997 9998 9999"; strings.Join(got, " ") != want {
		t.Errorf("kept %q, want %q", strings.Join(got, " "), want)
	}
}
