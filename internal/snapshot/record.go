package snapshot

import (
	"encoding/json"
	"errors"
	"sync"

	"github.com/hosteval/hosteval/internal/lines"
	"github.com/hosteval/hosteval/internal/record"
)

// Recorder keeps the exchanges of some servers from the host's wire trace:
// give it as (or beside) host.Options.Wire, and Close it when the case
// ends to write one server cassette per server. It is safe for concurrent
// use.
type Recorder struct {
	lines   *lines.Writer // hands the trace to line, line by line
	mu      sync.Mutex
	servers map[string]*recording
}

// recording is one server's exchanges so far.
type recording struct {
	path      string
	exchanges []Exchange
	// pending are the requests sent and not yet answered, by ID, with
	// where their exchange is; early the answers traced before their
	// request (the host traces a request once written, and the server may
	// answer first).
	pending map[string]pendingRequest
	early   map[string]record.WireLine
}

type pendingRequest struct {
	index int
	sent  float64 // the trace's ms
}

// NewRecorder records the servers named in paths (server -> file).
func NewRecorder(paths map[string]string) *Recorder {
	r := &Recorder{servers: map[string]*recording{}}
	r.lines = lines.NewWriter(r.line)
	for name, path := range paths {
		r.servers[name] = &recording{path: path, pending: map[string]pendingRequest{}, early: map[string]record.WireLine{}}
	}
	return r
}

// Write reads lines of the wire trace; a line may come in pieces.
func (r *Recorder) Write(p []byte) (int, error) {
	return r.lines.Write(p)
}

// line takes one line of the trace: a request to a recorded server opens
// an exchange, its answer closes it. Requests from the server, notifications
// and pings are not kept.
func (r *Recorder) line(data []byte) {
	var l record.WireLine
	if json.Unmarshal(data, &l) != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := r.servers[l.Server]
	if rec == nil || len(l.ID) == 0 {
		return
	}
	id := string(l.ID)
	switch {
	case l.Dir == "->" && l.Kind == "request" && l.Method != "ping":
		var msg struct {
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(l.Message, &msg) != nil {
			return
		}
		params, err := stripped(msg.Params)
		if err != nil {
			return
		}
		rec.exchanges = append(rec.exchanges, Exchange{Method: l.Method, Params: params})
		// An ID used again (a restarted server's new connection) is a new
		// request; the old one was never answered.
		p := pendingRequest{index: len(rec.exchanges) - 1, sent: l.MS}
		if answer, ok := rec.early[id]; ok {
			delete(rec.early, id)
			rec.answer(p, answer)
			return
		}
		rec.pending[id] = p
	case l.Dir == "<-" && (l.Kind == "result" || l.Kind == "error"):
		p, ok := rec.pending[id]
		if !ok {
			rec.early[id] = l
			return
		}
		delete(rec.pending, id)
		rec.answer(p, l)
	}
}

// answer completes the exchange of request p with its answer l.
func (rec *recording) answer(p pendingRequest, l record.WireLine) {
	var msg struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if json.Unmarshal(l.Message, &msg) != nil {
		return
	}
	e := &rec.exchanges[p.index]
	if l.Kind == "error" {
		e.Error = msg.Error
	} else {
		e.Result = msg.Result
		if e.Result == nil {
			e.Result = json.RawMessage("null")
		}
	}
	// An answer traced before its request has no latency to speak of.
	e.LatencyMS = max(0, l.MS-p.sent)
}

// Paths are the files the recorder writes, by server.
func (r *Recorder) Paths() map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]string{}
	for name, rec := range r.servers {
		out[name] = rec.path
	}
	return out
}

// Close writes every server cassette, also that of a server that got no
// request (a case that stopped before it started): a stale file would
// replay answers of another recording.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	for name, rec := range r.servers {
		errs = append(errs, write(rec.path, name, rec.exchanges))
	}
	return errors.Join(errs...)
}
