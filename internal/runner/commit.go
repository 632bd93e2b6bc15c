package runner

import (
	"sync"
	"time"

	"github.com/hosteval/hosteval/internal/record"
)

// committer makes finished cases' records durable off the cases' path:
// a case hands its record over and gives its concurrency slot to the next
// case at once, and one goroutine appends whatever records are waiting and
// syncs them with one fsync (a group commit). Only then is a case reported
// finished (commit), so what a person or a caller saw finish is on disk.
// Holding the slot through an fsync of its own made each case of a fast run
// wait for the disk (4 ms median, 10 ms p90 on a busy machine) while no
// other case could start.
type committer struct {
	w *record.Writer
	// commit is told of each batch once it is synced (err nil) or could
	// not be (err set), in the order the records were handed over. It is
	// called from the committer's goroutine only, so calls are serialised.
	commit func(batch []*record.Record, err error)

	// every is the least time between two syncs (syncEvery).
	every time.Duration

	mu      sync.Mutex
	queue   []*record.Record
	closed  bool
	wake    chan struct{} // holds one token while the queue has news
	closing chan struct{} // closed by close: no more waiting between syncs
	done    chan struct{} // closed when the goroutine has ended
}

// syncEvery spaces the syncs: the records of the cases that finish within
// it share one. A sync costs the kernel about 0.3 ms of CPU here, and the
// cases of a cheap run with shared servers finish a few milliseconds
// apart: one sync each was a tenth of the run's own CPU. A case's slot is
// free before its record is synced, so the wait delays only the report
// that it finished (and a crash in it loses no case reported finished).
const syncEvery = 10 * time.Millisecond

func newCommitter(w *record.Writer, commit func([]*record.Record, error)) *committer {
	c := &committer{w: w, commit: commit, every: syncEvery,
		wake: make(chan struct{}, 1), closing: make(chan struct{}), done: make(chan struct{})}
	go c.loop()
	return c
}

// add hands a finished case's record over. It returns false, and the record
// is lost, only after close: a case that outlived an abort's wait.
func (c *committer) add(rec *record.Record) bool {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return false
	}
	c.queue = append(c.queue, rec)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	return true
}

// close refuses further records, commits those handed over, and waits
// until the last commit has been reported.
func (c *committer) close() {
	c.mu.Lock()
	if !c.closed {
		close(c.closing)
	}
	c.closed = true
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	<-c.done
}

func (c *committer) loop() {
	defer close(c.done)
	var synced time.Time
	for range c.wake {
		if wait := c.every - time.Since(synced); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-c.closing:
				t.Stop()
			}
		}
		c.mu.Lock()
		batch, closed := c.queue, c.closed
		c.queue = nil
		c.mu.Unlock()
		if len(batch) > 0 {
			c.commit(batch, c.w.WriteBatch(batch))
			synced = time.Now()
		}
		if closed {
			return
		}
	}
}
