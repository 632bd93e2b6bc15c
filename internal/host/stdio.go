package host

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The host's stdio connection does what the SDK's (mcp.IOTransport) does,
// with a cheaper way to a message. The SDK's reads a value with
// encoding/json (two scans of it), then decodes it twice more with its own
// decoder, once as a batch (an array) and once as a message, and each of
// those allocates a 32 KB buffer: garbage the collector then spends a good
// part of a call's time on (docs/perf.md has the figures). Here
// a message is one line (one search for a newline), checked once by
// encoding/json's validator, and its envelope is split on the bytes; params
// and result are passed on as written, for the SDK to decode as before.
// Whatever the usual shape does not cover (a key with an escape, an id that
// is not a plain integer or string, an error member, a batch) is decoded by
// jsonrpc.DecodeMessage, so what the SDK receives is what its own decoder
// would have made (FuzzDecodeEnvelope holds the two together).
//
// What the SDK's connection accepts, this one accepts (FuzzStdioFrames
// reads the same streams with both): a message that spans lines (read on
// by a decoder over the stream, as the SDK's is), a lone CR as the end of
// a line, blank lines, and a batch, which is taken apart and its answers
// sent back as one array. It ends the connection where the SDK's does:
// invalid JSON, data after a message on its line, a message over the line
// limit, the stream's end inside a message.

// stdioTransport connects once over a server's stdout and stdin.
type stdioTransport struct {
	r io.ReadCloser
	w io.WriteCloser
	// tap, if set, is given every byte written (the wire trace).
	tap     io.Writer
	maxLine int
	// conn is the connection made, once Connect returned.
	conn *stdioConn
}

// stall returns the write to the server that ended with its context while
// the pipe was full, or nil.
func (t *stdioTransport) stall() *stalledWrite {
	if t == nil || t.conn == nil {
		return nil
	}
	return t.conn.stall()
}

// overLimit returns the message over the limit that ended the connection,
// or nil.
func (t *stdioTransport) overLimit() *answerTooLarge {
	if t == nil || t.conn == nil {
		return nil
	}
	return t.conn.overLimit.Load()
}

func (t *stdioTransport) Connect(context.Context) (mcp.Connection, error) {
	if t.conn != nil {
		return nil, errors.New("stdio transport: connected already")
	}
	c := &stdioConn{
		in:       bufio.NewReaderSize(t.r, readBufferSize),
		r:        t.r,
		w:        t.w,
		tap:      t.tap,
		maxLine:  t.maxLine,
		incoming: make(chan frameOrErr),
		writing:  make(chan struct{}, 1),
		closed:   make(chan struct{}),
	}
	if f, ok := t.w.(*os.File); ok {
		// A pipe: each write is bounded by its context (pipewrite.go).
		c.pipe = newPipeWriter(f)
	}
	t.conn = c
	go c.readFrames()
	return c, nil
}

type frameOrErr struct {
	msgs  []jsonrpc.Message
	batch bool
	err   error
}

// stdioConn is an mcp.Connection over a newline-delimited stream.
type stdioConn struct {
	in      *bufio.Reader // read by readFrames only
	r       io.ReadCloser
	w       io.WriteCloser
	pipe    *pipeWriter // w, when it is a pipe
	tap     io.Writer
	maxLine int

	// incoming carries decoded frames from readFrames, so that Close
	// returns a blocked Read at once whatever the pipe does.
	incoming chan frameOrErr
	queue    []jsonrpc.Message // the rest of a batch; Read is serial
	pending  []byte            // read from the stream, not yet taken; readFrames only

	// writing holds the right to write, taken within the write's context
	// (a write blocked on a full pipe holds it until its own context
	// ends). stalled, once set, fails every write: a write ended with its
	// context while the pipe was full, maybe inside a message.
	writing chan struct{}
	stalled atomic.Pointer[stalledWrite]
	// overLimit is set when a message over maxLine ended the connection.
	overLimit atomic.Pointer[answerTooLarge]

	batchMu sync.Mutex
	batches map[jsonrpc.ID]*answerBatch

	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error
}

// answerBatch collects the answers to the requests of a batch, to be sent
// as one array once the last is in.
type answerBatch struct {
	pending   map[jsonrpc.ID]int
	responses []*jsonrpc.Response
}

// readBufferSize is the stdout reader's buffer: a usual message (a call's
// result, a page of tools) in one read; a longer one is read in pieces.
const readBufferSize = 16 << 10

// errFrameTooLarge is the SDK's wording for the same end.
var errFrameTooLarge = errors.New("inbound JSON-RPC frame exceeded the configured maximum line length")

// answerTooLarge is a message from a server over the host's limit for one
// message (maxMessageBytes), which the host did not read. fatal says the
// connection ended with it (a stdio stream, an HTTP answer the SDK reads
// whole); an event of an HTTP stream ends only its call.
type answerTooLarge struct {
	limit int
	fatal bool
}

func (e *answerTooLarge) Error() string {
	return fmt.Sprintf("an answer over the host's limit of %s for one message", sizeText(e.limit))
}

// sizeText writes a byte count as people read it: 64 MiB, 47.7 MiB,
// 300 KiB, 17 bytes.
func sizeText(n int) string {
	unit := func(v float64, name string) string {
		if v == float64(int64(v)) {
			return strconv.FormatInt(int64(v), 10) + " " + name
		}
		return strconv.FormatFloat(v, 'f', 1, 64) + " " + name
	}
	switch {
	case n >= 1<<20:
		return unit(float64(n)/(1<<20), "MiB")
	case n >= 1<<10:
		return unit(float64(n)/(1<<10), "KiB")
	}
	return strconv.Itoa(n) + " bytes"
}

func (c *stdioConn) SessionID() string { return "" }

func (c *stdioConn) readFrames() {
	for {
		var f frameOrErr
		frame, err := c.readFrame()
		if err == nil {
			f.msgs, f.batch, err = decodeFrame(frame)
		}
		f.err = err
		if errors.Is(err, errFrameTooLarge) {
			c.overLimit.Store(&answerTooLarge{limit: c.maxLine, fatal: true})
		}
		select {
		case c.incoming <- f:
		case <-c.closed:
			return
		}
		if err != nil {
			return
		}
	}
}

// readFrame returns the next message's bytes, in a slice of their own (the
// messages made of it keep parts of it).
func (c *stdioConn) readFrame() ([]byte, error) {
	for {
		line, err := c.readLine(0)
		if err != nil && (len(line) == 0 || !errors.Is(err, io.EOF)) {
			return nil, err
		}
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) == 0 {
			continue // a blank line
		}
		if json.Valid(trimmed) {
			return trimmed, nil
		}
		// Not a whole value: it goes on on the next line, or is not JSON,
		// or something follows it on its line.
		var raw json.RawMessage
		dec := json.NewDecoder(bytes.NewReader(line))
		switch derr := dec.Decode(&raw); {
		case derr == nil:
			// The SDK's reader takes a lone CR after a message as the
			// end of its line.
			end := int(dec.InputOffset())
			if line[end] != '\r' {
				return nil, errTrailingData
			}
			c.pending = append(line[end+1:len(line):len(line)], c.pending...)
			return bytes.TrimSpace(line[:end]), nil
		case !errors.Is(derr, io.ErrUnexpectedEOF):
			return nil, derr
		case err != nil:
			return nil, io.ErrUnexpectedEOF
		}
		return c.readSpanning(line)
	}
}

// errTrailingData is the SDK's wording for the same end.
var errTrailingData = errors.New("invalid trailing data at the end of stream")

// readSpanning reads a message that goes on past its first line, first,
// with a decoder over the stream, as the SDK's reader does: checking the
// message again at each of its lines would take time in the square of
// their number.
func (c *stdioConn) readSpanning(first []byte) ([]byte, error) {
	pending := bytes.NewReader(c.pending)
	c.pending = nil
	var in io.Reader = c.in
	var limited *io.LimitedReader
	if c.maxLine > 0 {
		limited = &io.LimitedReader{R: c.in, N: int64(c.maxLine - len(first) - pending.Len())}
		in = limited
	}
	dec := json.NewDecoder(io.MultiReader(bytes.NewReader(first), pending, in))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		if limited != nil && limited.N <= 0 {
			return nil, errFrameTooLarge
		}
		return nil, err
	}
	// What the decoder read past the message is the start of what comes
	// next, and what it left of the pending bytes follows it.
	after, _ := io.ReadAll(dec.Buffered())
	if len(after) > 0 && after[0] != '\n' && after[0] != '\r' {
		return nil, errTrailingData
	}
	rest, _ := io.ReadAll(pending)
	c.pending = append(after, rest...)
	return raw, nil
}

// readLine returns the next line, newline included, in a slice of its own
// (or a part of the pending bytes that no other slice shares); have bytes
// of the message are read already. At the end of the stream it returns
// what is left with io.EOF.
func (c *stdioConn) readLine(have int) ([]byte, error) {
	if len(c.pending) > 0 {
		if i := bytes.IndexByte(c.pending, '\n'); i >= 0 {
			line := c.pending[: i+1 : i+1]
			c.pending = c.pending[i+1:]
			if c.maxLine > 0 && have+len(line) > c.maxLine {
				return nil, errFrameTooLarge
			}
			return line, nil
		}
		start := c.pending
		c.pending = nil
		more, err := c.readLine(have + len(start))
		return append(start[:len(start):len(start)], more...), err
	}
	var line []byte
	for {
		chunk, err := c.in.ReadSlice('\n')
		line = appendDoubling(line, chunk)
		if c.maxLine > 0 && have+len(line) > c.maxLine {
			return nil, errFrameTooLarge
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

// appendDoubling is append for a line read in pieces, which doubles the
// room it takes where append grows a large slice by a quarter: a message
// of tens of MiB would cost five times its size in copies, not two.
func appendDoubling(line, chunk []byte) []byte {
	if need := len(line) + len(chunk); need > cap(line) && len(line) > 0 {
		grown := make([]byte, len(line), 2*need)
		copy(grown, line)
		line = grown
	}
	return append(line, chunk...)
}

func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(c.queue) > 0 {
		next := c.queue[0]
		c.queue = c.queue[1:]
		return next, nil
	}
	var f frameOrErr
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case f = <-c.incoming:
	case <-c.closed:
		return nil, io.EOF
	}
	if f.err != nil {
		select {
		case <-c.closed:
			return nil, io.EOF
		default:
			return nil, f.err
		}
	}
	if f.batch {
		if err := c.addBatch(f.msgs); err != nil {
			return nil, err
		}
	}
	c.queue = f.msgs[1:]
	return f.msgs[0], nil
}

// addBatch notes the requests of an incoming batch, whose answers go back
// together.
func (c *stdioConn) addBatch(msgs []jsonrpc.Message) error {
	var b *answerBatch
	for _, msg := range msgs {
		req, ok := msg.(*jsonrpc.Request)
		if !ok || !req.IsCall() {
			continue
		}
		if b == nil {
			b = &answerBatch{pending: map[jsonrpc.ID]int{}}
		}
		if _, dup := b.pending[req.ID]; dup {
			return fmt.Errorf("duplicate message ID %q", req.ID)
		}
		b.pending[req.ID] = len(b.responses)
		b.responses = append(b.responses, nil)
	}
	if b == nil {
		return nil
	}
	c.batchMu.Lock()
	defer c.batchMu.Unlock()
	for id := range b.pending {
		if _, ok := c.batches[id]; ok {
			return fmt.Errorf("invalid request: batch contains previously seen request %v", id.Raw())
		}
	}
	if c.batches == nil {
		c.batches = map[jsonrpc.ID]*answerBatch{}
	}
	for id := range b.pending {
		c.batches[id] = b
	}
	return nil
}

// answered records resp if it answers a request of a batch; done is the
// whole batch once resp was its last answer.
func (c *stdioConn) answered(resp *jsonrpc.Response) (done []*jsonrpc.Response, inBatch bool) {
	c.batchMu.Lock()
	defer c.batchMu.Unlock()
	b, ok := c.batches[resp.ID]
	if !ok {
		return nil, false
	}
	b.responses[b.pending[resp.ID]] = resp
	delete(b.pending, resp.ID)
	delete(c.batches, resp.ID)
	if len(b.pending) == 0 {
		return b.responses, true
	}
	return nil, true
}

func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var data []byte
	if resp, ok := msg.(*jsonrpc.Response); ok {
		if batch, inBatch := c.answered(resp); inBatch {
			if batch == nil {
				return nil
			}
			raws := make([]json.RawMessage, len(batch))
			for i, r := range batch {
				raw, err := jsonrpc.EncodeMessage(r)
				if err != nil {
					return fmt.Errorf("encoding batch message: %w", err)
				}
				raws[i] = raw
			}
			enc, err := json.Marshal(raws)
			if err != nil {
				return err
			}
			data = enc
		}
	}
	if data == nil {
		enc, err := jsonrpc.EncodeMessage(msg)
		if err != nil {
			return fmt.Errorf("marshaling message: %v", err)
		}
		data = enc
	}
	data = append(data, '\n')
	select {
	case c.writing <- struct{}{}:
	default:
		select {
		case c.writing <- struct{}{}:
		case <-ctx.Done():
			// Another write holds the pipe, which the server does not
			// empty.
			stall := &stalledWrite{size: len(data), cause: context.Cause(ctx)}
			c.stalled.CompareAndSwap(nil, stall)
			return stall
		case <-c.closed:
			return io.ErrClosedPipe
		}
	}
	defer func() { <-c.writing }()
	if stall := c.stalled.Load(); stall != nil {
		return stall
	}
	var (
		n   int
		err error
	)
	if c.pipe != nil {
		n, err = c.pipe.write(ctx, data)
	} else {
		n, err = c.w.Write(data)
	}
	if c.tap != nil && n > 0 {
		c.tap.Write(data[:n])
	}
	var stall *stalledWrite
	if errors.As(err, &stall) {
		c.stalled.CompareAndSwap(nil, stall)
	}
	return err
}

// stall returns the write that ended with its context while the pipe was
// full, or nil. (The SDK may report such a call as its context's end,
// without the write's error.)
func (c *stdioConn) stall() *stalledWrite { return c.stalled.Load() }

func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() {
		// Closed first, so that a read the closing pipes fail is
		// reported as the end it is (see Read).
		close(c.closed)
		c.closeErr = errors.Join(c.r.Close(), c.w.Close())
	})
	return c.closeErr
}

// decodeFrame decodes a message, or the messages of a batch.
func decodeFrame(frame []byte) (msgs []jsonrpc.Message, batch bool, err error) {
	if frame[0] != '[' {
		msg, err := decodeMessage(frame)
		if err != nil {
			if deep := tooDeep(frame); deep != nil {
				err = deep
			}
			return nil, false, err
		}
		return []jsonrpc.Message{msg}, false, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(frame, &raws); err != nil {
		return nil, true, err
	}
	if len(raws) == 0 {
		return nil, true, errors.New("empty batch")
	}
	for _, raw := range raws {
		msg, err := decodeMessage(raw)
		if err != nil {
			return nil, true, err
		}
		msgs = append(msgs, msg)
	}
	return msgs, true, nil
}

// decodeMessage is jsonrpc.DecodeMessage for valid JSON.
func decodeMessage(data []byte) (jsonrpc.Message, error) {
	if msg := decodeEnvelope(data); msg != nil {
		return msg, nil
	}
	return jsonrpc.DecodeMessage(data)
}

// maxDepth is the SDK decoder's limit on nesting, which it checks before
// anything else.
const maxDepth = 1000

// decodeEnvelope returns the message data holds when it has the usual
// shape, else nil (jsonrpc.DecodeMessage decides). data must be valid
// JSON.
func decodeEnvelope(data []byte) jsonrpc.Message {
	// An over-count (brackets in strings) only sends data to the decoder.
	if bytes.Count(data, []byte{'{'})+bytes.Count(data, []byte{'['}) > maxDepth {
		return nil
	}
	fields := []field{{name: "jsonrpc"}, {name: "id"}, {name: "method"}, {name: "params"}, {name: "result"}, {name: "error"}}
	if !readFields(data, fields) {
		return nil
	}
	version, id, method, params, result, wireErr := fields[0].value, fields[1].value, fields[2].value, fields[3].value, fields[4].value, fields[5].value
	if string(version) != `"2.0"` || wireErr != nil || string(params) == "null" || string(result) == "null" {
		return nil
	}
	msgID, ok := plainID(id)
	if !ok {
		return nil
	}
	// An append to params or result must not write into what follows.
	params, result = params[:len(params):len(params)], result[:len(result):len(result)]
	if method != nil {
		name, ok := plainString(method)
		if !ok {
			return nil
		}
		return &jsonrpc.Request{ID: msgID, Method: name, Params: params}
	}
	if !msgID.IsValid() || params != nil {
		return nil
	}
	return &jsonrpc.Response{ID: msgID, Result: result}
}

// plainID reads an id that is absent, a plain integer, or a string
// without escapes.
func plainID(raw []byte) (jsonrpc.ID, bool) {
	if raw == nil {
		return jsonrpc.ID{}, true
	}
	if s, ok := plainString(raw); ok {
		id, err := jsonrpc.MakeID(s)
		return id, err == nil
	}
	digits := raw
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	// Fifteen digits are exact as a float64, which is what the SDK's
	// decoder makes of a number before it takes its integer part.
	if len(digits) == 0 || len(digits) > 15 || (digits[0] == '0' && len(digits) > 1) {
		return jsonrpc.ID{}, false
	}
	for _, d := range digits {
		if d < '0' || d > '9' {
			return jsonrpc.ID{}, false
		}
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(float64(n))
	return id, err == nil
}
