package host

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What the SDK's types lose, read on the wire. The go-sdk decodes a result
// into Go values and keeps what it understands: it drops a tool's
// execution.taskSupport, hides an unknown resultType, cannot tell a missing
// nextCursor from an empty one, and turns a requestState holding a lone
// surrogate into U+FFFD. The host needs each of these exactly, so a watch
// sits on every connection (a wrapper of the mcp.Connection for stdio and
// in-process servers, the HTTP tap's bodies for Streamable HTTP: the SDK's
// streamable connection cannot be wrapped) and sees every message as the
// server wrote it, before the SDK decodes it.
//
// The host tags each tools/call and tools/list request it sends with a
// progress token of its own: an exchange. As the request is written the
// watch learns its JSON-RPC id from the token, and as the answer is read it
// keeps the raw result for the exchange, so the host reads, for its own
// request, the result as sent. Progress notifications for the token reach
// the exchange in order, on the reading goroutine, before the answer does;
// so does every notifications/tools/list_changed (changes), whether it came
// on a call's stream or a subscriptions/listen stream. On the way out the
// watch sets the fields the SDK's types cannot carry (an exchange's
// rewrite): the requestState exactly as the server sent it, an empty
// cursor.

// Methods the watch follows.
const (
	methodToolsCall         = "tools/call"
	methodToolsList         = "tools/list"
	notificationListChanged = "notifications/tools/list_changed"
	notificationProgress    = "notifications/progress"
)

// watch follows one connection.
type watch struct {
	mu     sync.Mutex
	next   int
	tokens map[string]*exchange
	ids    map[jsonrpc.ID]*exchange
	// changes counts the notifications/tools/list_changed read.
	changes int
	// paths says whether the rewrites on the bytes run, or their
	// decoder's versions (Options.Paths).
	paths Paths

	// sent are the ids of the requests written and not answered yet. An
	// answer to any other id answers a request the host never sent (or
	// one answered already): the SDK drops it without a word, so the
	// watch counts it (unknown) and tells onUnknown, outside mu.
	sent      map[jsonrpc.ID]struct{}
	unknown   int64
	onUnknown func(id jsonrpc.ID, n int64)

	// deep explains the first message (as bytes: the HTTP tap's) that
	// the decoder refused as nested too deep, which the SDK refuses in
	// its own words (deep.go).
	deep error

	// written counts the messages handed to the transport; unread, set
	// for a server's stdin pipe, reports whether the server has not read
	// all that was written to it. Together they tell a change notice the
	// server sent before it had read a listing's request (received).
	written int
	unread  func() bool
}

func newWatch(paths Paths) *watch {
	return &watch{tokens: map[string]*exchange{}, ids: map[jsonrpc.ID]*exchange{}, sent: map[jsonrpc.ID]struct{}{}, paths: paths}
}

// tooDeep explains the first message read as bytes that was nested too
// deep to decode, or returns nil.
func (w *watch) tooDeep() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.deep
}

// unknownAnswers counts the answers read to ids the host never sent.
func (w *watch) unknownAnswers() int64 {
	if w == nil {
		return 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.unknown
}

// exchange is one request of the host's, followed on the wire.
type exchange struct {
	token  string
	method string
	// rewrite holds params fields the watch sets as the request is
	// written, in the server's own bytes.
	rewrite map[string]json.RawMessage
	// progress, if set, is told of each progress notification for the
	// token, on the reading goroutine.
	progress func(progressReport)
	// sent, if set, is told when the request starts to go to the server
	// (every time it is written), on the writing goroutine.
	sent func()
	// refused is set when the request's own POST got HTTP 404: the server
	// had ended the session and ran nothing (session.go).
	refused atomic.Bool

	// Set by the watch (under its mu) as the answer is read.
	ids      []jsonrpc.ID
	answered bool
	result   json.RawMessage // nil for an error answer
	// overLimit is set when the answer was over the host's limit for one
	// message, and not read (see overLimit).
	overLimit *answerTooLarge

	// For a listing: written is the watch's count once its request was
	// handed over (0 before, and then nothing is known); covered counts the change notices read
	// while it was out that its answer must reflect, and stale is set by
	// one it may not.
	written int
	covered int
	stale   bool
}

// progressReport is one notifications/progress for an exchange.
type progressReport struct {
	Progress float64  `json:"progress"`
	Total    *float64 `json:"total"`
	Message  string   `json:"message"`
}

// open starts an exchange for a request of method. Its token goes in the
// request's _meta.progressToken; done ends it.
func (w *watch) open(method string) *exchange {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.next++
	ex := &exchange{token: "hosteval-" + strconv.Itoa(w.next), method: method}
	w.tokens[ex.token] = ex
	return ex
}

// done ends an exchange and returns the raw result of its answer (nil when
// none was read, or the answer was an error).
func (w *watch) done(ex *exchange) json.RawMessage {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.tokens, ex.token)
	for _, id := range ex.ids {
		if w.ids[id] == ex {
			delete(w.ids, id)
		}
	}
	return ex.result
}

// overLimit notes that the answer to the request req (its body, over
// HTTP) was over the host's limit and was not read.
func (w *watch) overLimit(req []byte, e *answerTooLarge) {
	if w == nil {
		return
	}
	msg, err := jsonrpc.DecodeMessage(req)
	if err != nil {
		return
	}
	call, ok := msg.(*jsonrpc.Request)
	if !ok || !call.ID.IsValid() {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if ex := w.ids[call.ID]; ex != nil {
		ex.overLimit = e
	}
}

// answerOverLimit returns why the answer of ex was not read, when it was
// over the host's limit, or nil.
func (w *watch) answerOverLimit(ex *exchange) *answerTooLarge {
	w.mu.Lock()
	defer w.mu.Unlock()
	return ex.overLimit
}

// changed returns how many tools/list_changed notifications were read.
func (w *watch) changed() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.changes
}

// meta returns the _meta of an exchange's request: m and the progress
// token.
func (ex *exchange) meta(m mcp.Meta) mcp.Meta {
	out := maps.Clone(m)
	if out == nil {
		out = mcp.Meta{}
	}
	out["progressToken"] = ex.token
	return out
}

// exchangeKey is the context key of the exchange a request is written
// for (withExchange).
type exchangeKey struct{}

// withExchange returns ctx carrying ex: the request of ex's method that
// the SDK writes with it is ex's, known without reading its token back
// from the params. (Over HTTP, where the request's context may be another,
// the token is read.)
func withExchange(ctx context.Context, ex *exchange) context.Context {
	return context.WithValue(ctx, exchangeKey{}, ex)
}

// sending notes a request about to be written, with the context it is
// written with, and returns it as it must go out: with the exchange's
// rewrite applied.
func (w *watch) sending(ctx context.Context, msg jsonrpc.Message) jsonrpc.Message {
	req, ok := msg.(*jsonrpc.Request)
	w.mu.Lock()
	w.written++
	if ok && req.ID.IsValid() {
		w.sent[req.ID] = struct{}{}
	}
	w.mu.Unlock()
	if !ok || !req.ID.IsValid() {
		return msg
	}
	if req.Method != methodToolsCall && req.Method != methodToolsList {
		return msg
	}
	var token string
	if ex, _ := ctx.Value(exchangeKey{}).(*exchange); ex != nil && ex.method == req.Method {
		token = ex.token
	} else {
		var p struct {
			Meta struct {
				Token any `json:"progressToken"`
			} `json:"_meta"`
		}
		if json.Unmarshal(req.Params, &p) != nil {
			return msg
		}
		token, _ = p.Meta.Token.(string)
	}
	w.mu.Lock()
	ex := w.tokens[token]
	var rewrite map[string]json.RawMessage
	var sent func()
	if ex != nil {
		w.ids[req.ID] = ex
		ex.ids = append(ex.ids, req.ID)
		rewrite, sent = ex.rewrite, ex.sent
		ex.written = w.written
	}
	w.mu.Unlock()
	if sent != nil {
		sent()
	}
	if len(rewrite) == 0 {
		return msg
	}
	var data []byte
	onBytes := false
	if !w.paths.sdk() {
		data, onBytes = rewriteParams(req.Params, rewrite)
	}
	if !onBytes {
		var params map[string]json.RawMessage
		if json.Unmarshal(req.Params, &params) != nil {
			return msg
		}
		maps.Copy(params, rewrite)
		var err error
		if data, err = marshalCompact(params); err != nil {
			return msg
		}
	}
	return &jsonrpc.Request{ID: req.ID, Method: req.Method, Params: data, Extra: req.Extra}
}

// rewriteParams is params with the rewrite's fields set, as
// marshalCompact writes the params decoded into a map with the fields
// copied in: members sorted by key, each value compacted. It works on the
// bytes, without decoding the values (the arguments, the answers of the
// person), and reports false for params it leaves to the decoder: not an
// object, or a key with an escape, not in UTF-8, or given twice.
func rewriteParams(params []byte, rewrite map[string]json.RawMessage) ([]byte, bool) {
	type member struct {
		key   string
		value []byte
	}
	fields := make([]member, 0, 8)
	ok := members(params, func(key, value []byte) bool {
		if bytes.IndexByte(key, '\\') >= 0 || !utf8.Valid(key) {
			return false
		}
		if _, set := rewrite[string(key)]; !set {
			fields = append(fields, member{string(key), value})
		}
		return true
	})
	if !ok {
		return nil, false
	}
	for k, v := range rewrite {
		fields = append(fields, member{k, v})
	}
	slices.SortFunc(fields, func(a, b member) int { return strings.Compare(a.key, b.key) })
	size := 2
	for i, f := range fields {
		if i > 0 && f.key == fields[i-1].key {
			return nil, false
		}
		size += len(f.key) + len(f.value) + 4
	}
	out := bytes.NewBuffer(make([]byte, 0, size))
	out.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			out.WriteByte(',')
		}
		out.Write(appendString(out.AvailableBuffer(), f.key))
		out.WriteByte(':')
		if json.Compact(out, f.value) != nil {
			return nil, false
		}
	}
	out.WriteByte('}')
	return out.Bytes(), true
}

// noteChange tells each listing out whether its answer must reflect the
// change notice just read. It must when the server had not read all of
// the listing's request when it was checked, later than the notice was
// written: the request was the last thing written, and bytes are still
// unread in the server's stdin (its tail, the request's). A server
// cannot have handled a request it had not read, so its answer was made
// after the change. Otherwise (a request the watch did not see handed
// over among them), and wherever the pipe cannot be seen (HTTP,
// in-process), the notice may be later than the answer's making, and the
// listing is stale. The caller holds mu.
func (w *watch) noteChange() {
	for _, ex := range w.tokens {
		if ex.method != methodToolsList {
			continue
		}
		if ex.answered {
			ex.stale = true // a change after the answer was read
			continue
		}
		if ex.written != 0 && ex.written == w.written && w.unread != nil && w.unread() {
			ex.covered++
		} else {
			ex.stale = true
		}
	}
}

// coverage says how many change notices read while the listing ex was out
// its answer reflects, or -1 when one of them it may not.
func (w *watch) coverage(ex *exchange) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ex.stale {
		return -1
	}
	return ex.covered
}

// received notes a message read from the server and returns it as the SDK
// must see it.
func (w *watch) received(msg jsonrpc.Message) jsonrpc.Message {
	switch m := msg.(type) {
	case *jsonrpc.Request:
		switch m.Method {
		case notificationListChanged:
			w.mu.Lock()
			w.changes++
			w.noteChange()
			w.mu.Unlock()
		case notificationProgress:
			var p struct {
				Token any `json:"progressToken"`
				progressReport
			}
			if json.Unmarshal(m.Params, &p) != nil {
				return msg
			}
			token, _ := p.Token.(string)
			w.mu.Lock()
			ex := w.tokens[token]
			w.mu.Unlock()
			if ex != nil && ex.progress != nil {
				ex.progress(p.progressReport)
			}
		}
	case *jsonrpc.Response:
		w.mu.Lock()
		if _, sent := w.sent[m.ID]; !sent {
			w.unknown++
			n := w.unknown
			w.mu.Unlock()
			if w.onUnknown != nil {
				w.onUnknown(m.ID, n)
			}
			return msg
		}
		delete(w.sent, m.ID)
		defer w.mu.Unlock()
		ex := w.ids[m.ID]
		if ex == nil {
			return msg
		}
		delete(w.ids, m.ID)
		ex.answered = true
		if m.Error != nil {
			return msg
		}
		// The result is the decoder's own copy, which the SDK only reads.
		ex.result = m.Result
		if ex.method == methodToolsList {
			if res, ok := withoutTTL(m.Result, w.paths); ok {
				return &jsonrpc.Response{ID: m.ID, Result: res, Error: m.Error, Extra: m.Extra}
			}
		}
	}
	return msg
}

// withoutTTL returns a tools/list result without its ttlMs. The host keeps
// its own table and lists again when the server says its tools changed;
// the SDK's cache of tools/list results (SEP-2549, keyed by cursor) would
// answer that listing from memory for as long as the server allowed.
func withoutTTL(result json.RawMessage, paths Paths) (json.RawMessage, bool) {
	if !bytes.Contains(result, []byte(`"ttlMs"`)) {
		return nil, false
	}
	if paths.sdk() {
		return withoutTTLDecoded(result)
	}
	// Usually on the bytes: the other members as written, in order (a
	// catalog of tools is tens of kilobytes, and every listing has a
	// ttlMs). A key with an escape is left to the decoder.
	out := make([]byte, 0, len(result))
	out = append(out, '{')
	found := false
	if members([]byte(result), func(key, value []byte) bool {
		if bytes.IndexByte(key, '\\') >= 0 {
			return false
		}
		if string(key) == "ttlMs" {
			found = true
			return true
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(append(append(append(out, '"'), key...), '"', ':'), value...)
		return true
	}) {
		return append(out, '}'), found
	}
	return withoutTTLDecoded(result)
}

// withoutTTLDecoded is withoutTTL by way of the decoder.
func withoutTTLDecoded(result json.RawMessage) (json.RawMessage, bool) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(result, &fields) != nil {
		return nil, false
	}
	if _, ok := fields["ttlMs"]; !ok {
		return nil, false
	}
	delete(fields, "ttlMs")
	out, err := marshalCompact(fields)
	return out, err == nil
}

// sendingBytes and receivedBytes are sending and received for a message
// as bytes (the HTTP tap's bodies). They return data itself when nothing
// changes.
func (w *watch) sendingBytes(ctx context.Context, data []byte) []byte {
	return w.bytes(data, func(msg jsonrpc.Message) jsonrpc.Message { return w.sending(ctx, msg) })
}

func (w *watch) receivedBytes(data []byte) []byte {
	return w.bytes(data, w.received)
}

func (w *watch) bytes(data []byte, see func(jsonrpc.Message) jsonrpc.Message) []byte {
	if w == nil || len(bytes.TrimSpace(data)) == 0 {
		return data
	}
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		if strings.Contains(err.Error(), errNestedTooDeep) {
			if deep := tooDeep(data); deep != nil {
				w.mu.Lock()
				if w.deep == nil {
					w.deep = deep
				}
				w.mu.Unlock()
			}
		}
		return data
	}
	out := see(msg)
	if out == msg {
		return data
	}
	enc, err := jsonrpc.EncodeMessage(out)
	if err != nil {
		return data
	}
	return enc
}

// watchTransport applies a watch to the connection it makes.
type watchTransport struct {
	mcp.Transport
	watch *watch
}

func (t watchTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return watchConn{conn, t.watch}, nil
}

type watchConn struct {
	mcp.Connection
	watch *watch
}

func (c watchConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	return c.Connection.Write(ctx, c.watch.sending(ctx, msg))
}

func (c watchConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		msg = c.watch.received(msg)
	}
	return msg, err
}
