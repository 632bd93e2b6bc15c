package host

import (
	"bufio"
	"context"
	"io"
	"strings"
)

// Lines hands out the lines of one input, such as a terminal's stdin, to
// several readers in turn: a chat's prompt and the Terminal person. One
// goroutine reads the input; a reader that stops waiting (its context
// ended) takes no line, so a line typed after a form was withdrawn goes to
// the next reader, not to the form.
//
// The goroutine reads one line ahead of the readers and ends at the end of
// the input. Nothing else can stop a read of a terminal, so while the input
// stays open it lives as long as the program.
type Lines struct {
	lines chan string
	done  chan struct{} // closed at the end of the input
	err   error         // why the input ended; valid once done is closed
}

// NewLines starts reading r.
func NewLines(r io.Reader) *Lines {
	l := &Lines{lines: make(chan string), done: make(chan struct{})}
	go l.read(r)
	return l
}

func (l *Lines) read(r io.Reader) {
	defer close(l.done)
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			l.lines <- strings.TrimRight(line, "\r\n")
		}
		if err != nil {
			l.err = err
			return
		}
	}
}

// Next returns the next line, without its line ending; a last line without
// one is returned too. At the end of the input it returns io.EOF (or the
// read error). If ctx ends first it returns ctx's error, and the line stays
// for the next reader.
func (l *Lines) Next(ctx context.Context) (string, error) {
	select {
	case line := <-l.lines:
		return line, nil
	case <-l.done:
		return "", l.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}
