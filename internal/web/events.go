package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Event is one server-sent event.
type Event struct {
	ID   int64
	Name string // the event type the page listens for
	Data []byte // JSON
}

// Events is a server-sent events stream with any number of subscribers:
// a live run being watched, the lab's conversation in several tabs. It
// keeps the last events so that a page that reconnects (the browser sends
// Last-Event-ID) misses nothing that is still kept. The zero value is not
// usable; use NewEvents.
type Events struct {
	mu     sync.Mutex
	next   int64
	kept   []Event
	keep   int
	subs   map[chan Event]struct{}
	closed bool
}

// NewEvents returns a stream that keeps the last keep events for
// reconnecting pages.
func NewEvents(keep int) *Events {
	return &Events{keep: keep, subs: map[chan Event]struct{}{}}
}

// Publish sends v, as JSON, to every subscriber under the event type name.
// A subscriber too slow to take it is dropped; its page reconnects and
// catches up from what is kept.
func (e *Events) Publish(name string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("event %s: %w", name, err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.next++
	ev := Event{ID: e.next, Name: name, Data: data}
	e.kept = append(e.kept, ev)
	if len(e.kept) > e.keep {
		e.kept = e.kept[len(e.kept)-e.keep:]
	}
	for ch := range e.subs {
		select {
		case ch <- ev:
		default:
			delete(e.subs, ch)
			close(ch)
		}
	}
	return nil
}

// Close ends every stream; later publications are dropped.
func (e *Events) Close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	e.closed = true
	for ch := range e.subs {
		close(ch)
	}
	clear(e.subs)
}

// subscribe returns the kept events after lastID and a channel of the
// ones to come.
func (e *Events) subscribe(lastID int64) ([]Event, chan Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var missed []Event
	for _, ev := range e.kept {
		if ev.ID > lastID {
			missed = append(missed, ev)
		}
	}
	ch := make(chan Event, 64)
	if e.closed {
		close(ch)
		return missed, ch
	}
	e.subs[ch] = struct{}{}
	return missed, ch
}

func (e *Events) unsubscribe(ch chan Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.subs[ch]; ok {
		delete(e.subs, ch)
		close(ch)
	}
}

// keepAlive is how often an idle stream sends a comment, so that proxies
// and browsers do not take it for dead.
const keepAlive = 15 * time.Second

// ServeHTTP streams the events to one page until it goes away or the
// stream is closed. The page's EventSource reconnects by itself and sends
// Last-Event-ID, so it resumes where it stopped.
func (e *Events) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	last, _ := strconv.ParseInt(r.Header.Get("Last-Event-ID"), 10, 64)
	missed, ch := e.subscribe(last)
	defer e.unsubscribe(ch)

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	for _, ev := range missed {
		writeEvent(w, ev)
	}
	if rc.Flush() != nil {
		return
	}
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			fmt.Fprint(w, ": keep-alive\n\n")
		case ev, ok := <-ch:
			if !ok {
				return
			}
			writeEvent(w, ev)
		}
		if rc.Flush() != nil {
			return
		}
	}
}

func writeEvent(w http.ResponseWriter, ev Event) {
	// JSON never holds a raw newline, so one data line carries it whole.
	fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", ev.ID, ev.Name, ev.Data)
}
