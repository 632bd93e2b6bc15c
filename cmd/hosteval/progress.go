package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/runner"
	"github.com/hosteval/hosteval/internal/text"
)

// progress shows how a run is going: on a terminal, one line rewritten in
// place (done/total, passed, failed, elapsed, ETA); elsewhere (CI) one plain
// line per finished case, which logs well. Its done method is the runner's
// OnCase. A case's line wider than width columns (0: no limit) goes on on
// the next, indented.
type progress struct {
	w        io.Writer
	terminal bool
	width    int
	total    int
	start    time.Time
	mu       sync.Mutex
	stopped  chan struct{}
	ticker   *time.Ticker
	wg       sync.WaitGroup
	tally    runner.Result
}

func newProgress(w io.Writer, terminal bool, width, total int, start time.Time) *progress {
	p := &progress{w: w, terminal: terminal, width: width, total: total, start: start, stopped: make(chan struct{})}
	if terminal {
		// Elapsed time moves even while no case finishes.
		p.ticker = time.NewTicker(500 * time.Millisecond)
		p.wg.Go(func() {
			for {
				select {
				case <-p.ticker.C:
					p.mu.Lock()
					p.draw()
					p.mu.Unlock()
				case <-p.stopped:
					return
				}
			}
		})
	}
	return p
}

func (p *progress) done(rec *record.Record, tally runner.Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tally = tally
	if p.terminal {
		if rec.Status != record.StatusPass {
			fmt.Fprintf(p.w, "\r\033[K%s\n", strings.Join(text.Wrap(caseLine(rec), p.width), "\n"))
		}
		p.draw()
		return
	}
	line := fmt.Sprintf("[%d/%d] %s", tally.Ran, p.total, caseLine(rec))
	fmt.Fprintln(p.w, strings.Join(text.Wrap(line, p.width), "\n"))
}

// caseLine is one finished case: its verdict, id, time, and why it failed.
func caseLine(rec *record.Record) string {
	replayed := ""
	if c := rec.Cassette; c != nil && c.Replayed > 0 {
		replayed = ", replayed"
	}
	line := fmt.Sprintf("%-5s %s (%.2fs%s)", strings.ToUpper(rec.Status), rec.CaseID, rec.MS/1000, replayed)
	switch {
	case rec.Error != "":
		// An errored case, or one whose conversation left its cassette.
		line += ": " + rec.Error
	case rec.Status == record.StatusFail:
		for _, e := range rec.Expectations {
			if !e.Passed {
				line += ": " + e.Name
				if e.Detail != "" {
					line += ": " + e.Detail
				}
				break
			}
		}
	}
	return line
}

func (p *progress) draw() {
	elapsed := time.Since(p.start)
	eta := "?"
	if p.tally.Ran > 0 {
		left := time.Duration(float64(elapsed) / float64(p.tally.Ran) * float64(p.total-p.tally.Ran))
		eta = left.Round(100 * time.Millisecond).String()
	}
	fmt.Fprintf(p.w, "\r\033[K[%d/%d] %d passed, %d failed, %s, %s elapsed, ETA %s",
		p.tally.Ran, p.total, p.tally.Passed, p.tally.Failed, text.Count(p.tally.Errors, "error"), elapsed.Round(100*time.Millisecond), eta)
}

// stop stops the ticker and ends the line on a terminal.
func (p *progress) stop() {
	if p.ticker != nil {
		p.ticker.Stop()
		close(p.stopped)
		p.wg.Wait()
		p.mu.Lock()
		p.draw()
		fmt.Fprintln(p.w)
		p.mu.Unlock()
	}
}
