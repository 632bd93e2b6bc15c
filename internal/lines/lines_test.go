package lines

import (
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWriter(t *testing.T) {
	tests := []struct {
		name   string
		pieces []string
		want   []string
	}{
		{"one write, one line", []string{"a\n"}, []string{"a"}},
		{"one write, two lines", []string{"a\nb\n"}, []string{"a", "b"}},
		{"a line in pieces", []string{`{"id"`, `:1}`, "\n"}, []string{`{"id":1}`}},
		{"a line ends inside the next write", []string{"a\nb", "c\nd"}, []string{"a", "bc"}},
		{"empty lines are skipped", []string{"\n\na\n\n"}, []string{"a"}},
		{"a partial line waits", []string{"no end"}, nil},
		{"a carriage return stays", []string{"a\r\n"}, []string{"a\r"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			w := NewWriter(func(line []byte) { got = append(got, string(line)) })
			for _, p := range tt.pieces {
				if n, err := w.Write([]byte(p)); n != len(p) || err != nil {
					t.Fatalf("Write(%q) = %d, %v; want %d, nil", p, n, err, len(p))
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWriterConcurrent: lines written with one Write each from several
// goroutines arrive whole.
func TestWriterConcurrent(t *testing.T) {
	const writers, each = 8, 200
	seen := map[string]int{}
	w := NewWriter(func(line []byte) { seen[string(line)]++ })
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				fmt.Fprintf(w, "writer %d line %d\n", g, i)
			}
		})
	}
	wg.Wait()
	if len(seen) != writers*each {
		t.Fatalf("%d distinct lines, want %d", len(seen), writers*each)
	}
	for line, n := range seen {
		if n != 1 {
			t.Errorf("%q seen %d times, want once", line, n)
		}
	}
}
