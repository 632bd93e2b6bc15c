package host

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/text"
)

// httpTap is the host's side of every request of the Streamable HTTP
// transport (POSTs; the GETs of a 2025-11-25 session's standalone stream and
// of a resumed stream; the DELETE that ends a session). It adds the server's configured headers, records the JSON-RPC
// messages of request and response bodies in the wire trace, and applies the
// -32003/-32004 code guard of codes.go to what the server sends. It never
// records headers: the Authorization header (configured, or an OAuth
// handler's token) is in no trace.
//
// The guard works on the bodies here, not on the mcp.Connection as it does
// for stdio: the streamable connection has an unexported hook the SDK calls
// after the handshake (it sets the Mcp-Protocol-Version header of a
// 2025-11-25 session), and a wrapper would hide it.
type httpTap struct {
	server  string
	headers map[string]string
	// oauth says an OAuth handler answers 401s; without one, a 401 with a
	// Bearer challenge ends the request with an authRefusal.
	oauth bool
	wire  *serverWire
	// watch follows the messages as the server wrote them (watch.go).
	watch *watch
	// ends notes the sessions the server ended (session.go).
	ends *sessionEnds
	next http.RoundTripper
}

func (t *httpTap) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range t.headers {
		// A configured header never replaces one the transport set
		// (Content-Type, Accept, Last-Event-ID, Authorization from an OAuth
		// handler): those carry the protocol.
		if req.Header.Get(k) == "" {
			req.Header.Set(k, v)
		}
	}
	var sent []byte // the request's body, to name its answer
	if (t.wire != nil || t.watch != nil) && req.Body != nil && req.GetBody != nil {
		if body, err := req.GetBody(); err == nil {
			data, _ := io.ReadAll(body)
			sent = data
			body.Close()
			if out := t.watch.sendingBytes(req.Context(), data); !bytes.Equal(out, data) {
				data = out
				req.Body = io.NopCloser(bytes.NewReader(out))
				req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(out)), nil }
				req.ContentLength = int64(len(out))
			}
			if t.wire != nil {
				t.wire.message("http", "->", data)
			}
		}
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	if id := req.Header.Get("Mcp-Session-Id"); id != "" && resp.StatusCode == http.StatusNotFound {
		t.ends.note(id)
		if ex, _ := req.Context().Value(exchangeKey{}).(*exchange); ex != nil && req.Method == http.MethodPost {
			ex.refused.Store(true)
		}
	}
	if resp.StatusCode == http.StatusUnauthorized && !t.oauth && req.Method == http.MethodPost && bearerChallenge(resp.Header) {
		// Said here, where the status is known: the SDK reports only
		// "Unauthorized", and the person needs to know what to configure.
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
		_, configured := headerValue(t.headers, "Authorization")
		return nil, &authRefusal{server: t.server, configured: configured}
	}
	mediaType, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch mediaType {
	case "application/json":
		// Also on an error status: the SDK reads a JSON-RPC error from the
		// body of a 4xx answer.
		resp.Body = &jsonBody{body: resp.Body, wire: t.wire, watch: t.watch, sent: sent}
		resp.ContentLength = -1
		resp.Header.Del("Content-Length")
	case "text/event-stream":
		resp.Body = &sseBody{body: resp.Body, r: bufio.NewReader(resp.Body), wire: t.wire, watch: t.watch, sent: sent}
	default:
		// Read by the SDK only for an error's text, but never without a
		// bound.
		resp.Body = &limitedBody{ReadCloser: resp.Body, left: maxMessageBytes}
	}
	return resp, nil
}

// An answer over HTTP is bounded as a line from a stdio server is: a body
// of one message (application/json) or one event's line over
// maxMessageBytes is not read, the read fails with an answerTooLarge, and
// the exchange of the request it answers is told, so that the call says
// what happened. Before, a body was read whole whatever its size (an
// endless one took 4 GB in 20 s).

// overLimit reports an answer over the limit to the watch and the wire
// trace, and returns the error a read of it fails with.
func overLimit(w *watch, wire *serverWire, sent []byte, read int, fatal bool) error {
	e := &answerTooLarge{limit: maxMessageBytes, fatal: fatal}
	w.overLimit(sent, e)
	if wire != nil {
		wire.trace.write(record.WireLine{Server: wire.server, Stream: "http", Dir: "<-", Kind: "invalid", Bytes: read,
			Text: fmt.Sprintf("%v: not read", e)})
	}
	return e
}

// limitedBody is a body read only up to left bytes; past them the read
// fails.
type limitedBody struct {
	io.ReadCloser
	left int
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, &answerTooLarge{limit: maxMessageBytes}
	}
	if len(p) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= n
	return n, err
}

// jsonBody is a response body holding one JSON-RPC message. It is read whole
// on the first Read (the SDK reads it whole too), recorded as one message
// however it is laid out, guarded and watched.
type jsonBody struct {
	body  io.ReadCloser
	wire  *serverWire
	watch *watch
	sent  []byte // the request's body
	read  bool
	rest  []byte
	err   error
}

func (b *jsonBody) Read(p []byte) (int, error) {
	if !b.read {
		b.read = true
		data, err := io.ReadAll(io.LimitReader(b.body, maxMessageBytes+1))
		if len(data) > maxMessageBytes {
			// The SDK gives the connection up when it cannot read a body.
			b.err = overLimit(b.watch, b.wire, b.sent, len(data), true)
			return 0, b.err
		}
		if b.wire != nil {
			b.wire.message("http", "<-", data)
		}
		b.rest, b.err = b.watch.receivedBytes(guardMessage(data)), err
	}
	if len(b.rest) == 0 {
		if b.err != nil {
			return 0, b.err
		}
		return 0, io.EOF
	}
	n := copy(p, b.rest)
	b.rest = b.rest[n:]
	return n, nil
}

func (b *jsonBody) Close() error { return b.body.Close() }

// sseBody passes a server-sent event stream through line by line, recording,
// guarding and watching the message of each data line. A line is handed on
// as soon as it is complete: a stream stays open for as long as the call
// runs, and the SDK must see each event when it arrives.
type sseBody struct {
	body  io.ReadCloser
	r     *bufio.Reader
	wire  *serverWire
	watch *watch
	sent  []byte // the request's body
	rest  []byte
	err   error
}

// maxEventLine bounds one line of an event stream: a message and its
// field's name.
const maxEventLine = maxMessageBytes + 64

func (b *sseBody) Read(p []byte) (int, error) {
	for len(b.rest) == 0 {
		if b.err != nil {
			return 0, b.err
		}
		line, read, err := readLineLimited(b.r, maxEventLine)
		if errors.Is(err, errLineTooLong) {
			// The SDK ends the call (not the session) on a stream it
			// cannot read on, and drains the body: this read fails
			// again at once.
			b.err = overLimit(b.watch, b.wire, b.sent, read, false)
			return 0, b.err
		}
		b.err = err
		b.rest = b.line(line)
	}
	n := copy(p, b.rest)
	b.rest = b.rest[n:]
	return n, nil
}

// errLineTooLong ends a line read past its limit.
var errLineTooLong = errors.New("line too long")

// readLineLimited reads a line, newline included, of at most limit bytes;
// past them it returns errLineTooLong and how many bytes it read.
func readLineLimited(r *bufio.Reader, limit int) (line []byte, read int, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > limit {
			return nil, len(line) + len(chunk), errLineTooLong
		}
		line = appendDoubling(line, chunk)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, len(line), err
		}
	}
}

func (b *sseBody) line(line []byte) []byte {
	content := bytes.TrimRight(line, "\r\n")
	data, ok := bytes.CutPrefix(content, []byte("data:"))
	if !ok {
		return line
	}
	data = bytes.TrimPrefix(data, []byte(" "))
	if b.wire != nil {
		b.wire.message("http", "<-", data)
	}
	guarded := b.watch.receivedBytes(guardMessage(data))
	if bytes.Equal(guarded, data) {
		return line
	}
	out := append([]byte("data: "), guarded...)
	return append(out, line[len(content):]...)
}

func (b *sseBody) Close() error { return b.body.Close() }

// guardMessage returns a JSON-RPC message with a guarded error code moved as
// codeGuard moves it; any other message is returned unchanged.
func guardMessage(msg []byte) []byte {
	if !bytes.Contains(msg, []byte("-3200")) {
		return msg
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil || m["error"] == nil {
		return msg
	}
	var e map[string]json.RawMessage
	var code int64
	if json.Unmarshal(m["error"], &e) != nil || json.Unmarshal(e["code"], &code) != nil || !isGuarded(code) {
		return msg
	}
	e["code"] = json.RawMessage(fmt.Sprint(code + shiftedCode))
	var err error
	if m["error"], err = json.Marshal(e); err != nil {
		return msg
	}
	out, err := json.Marshal(m)
	if err != nil {
		return msg
	}
	return out
}

// httpTransport returns the transport to a Streamable HTTP server. Headers
// named Mcp-* are refused: they are the protocol's own, set by the
// transport on each request, and a configured value would contradict them.
// So is an Authorization header beside an OAuth handler, which sets it.
func httpTransport(spec ServerSpec, wire *serverWire, w *watch, ends *sessionEnds) (mcp.Transport, error) {
	for k := range spec.Headers {
		if strings.HasPrefix(http.CanonicalHeaderKey(k), "Mcp-") {
			return nil, fmt.Errorf("header %s: Mcp-* headers belong to the protocol and are set by the transport", k)
		}
	}
	if _, ok := headerValue(spec.Headers, "Authorization"); ok && spec.OAuth != nil {
		return nil, fmt.Errorf("header Authorization: the server's oauth: block supplies it; remove one of the two")
	}
	tap := &httpTap{server: spec.Name, headers: spec.Headers, oauth: spec.OAuth != nil, wire: wire, watch: w, ends: ends, next: http.DefaultTransport}
	return &mcp.StreamableClientTransport{
		Endpoint: spec.URL,
		// The tap bounds each event's line already (maxEventLine); the
		// SDK's own bound (16 MiB by default) would end a legitimate
		// result that a stdio server may send.
		MaxEventSize: maxEventLine + 1<<10,
		HTTPClient:   &http.Client{Transport: tap},
		OAuthHandler: spec.OAuth,
		// The standalone stream (a GET held open, 2025-11-25 sessions only)
		// stays on: a server that answers calls with application/json, and
		// every TypeScript SDK server, sends elicitation/create there and
		// not on the call's own stream (the conformance suite's
		// elicitation-sep1034-client-defaults does).
	}, nil
}

// httpFailure turns a call to an HTTP server that failed below JSON-RPC into
// the text for the model. The SDK reports two kinds. A rejected request (the
// server could not be reached, or answered 429, 502, 503 or 504) comes
// wrapped in the SDK's own JSON-RPC error -32005, which is not the server's
// and must not be recorded as its error code; the session goes on. Any other
// HTTP failure (a 4xx without a JSON-RPC error in the body) makes the SDK
// give the session up, so the server is marked dead, as a stdio server whose
// process ended.
func (h *Host) httpFailure(s *serverConn, err error) (string, bool) {
	if text, ok := h.authRefused(s, err); ok {
		return text, true
	}
	if s.spec.URL == "" || errors.Is(err, mcp.ErrConnectionClosed) {
		return "", false
	}
	why := text.Shorten(err.Error(), 200)
	var werr *jsonrpc.Error
	if errors.As(err, &werr) {
		if !isRejection(werr) {
			return "", false // the server's own JSON-RPC error
		}
		h.step("host", "HTTP request failed: "+why, nil)
		return fmt.Sprintf("error: the request to the server %s failed (%s). It may work later.", s.spec.Name, why), true
	}
	s.markDead("its connection failed")
	h.step("host", "HTTP connection given up: "+why, nil)
	return fmt.Sprintf("error: the connection to the server %s failed (%s), so its tools can't be used now.", s.spec.Name, why), true
}

// isRejection reports whether werr is the SDK's jsonrpc2.ErrRejected (an
// internal package): a request the transport could not deliver.
func isRejection(werr *jsonrpc.Error) bool {
	return werr.Code == -32005 && werr.Message == "rejected by transport"
}
