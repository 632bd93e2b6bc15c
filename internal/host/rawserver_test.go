package host

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawServer is a scriptable JSON-RPC server for the spec's edges: it
// answers with canned JSON, written byte for byte, what no SDK's server
// types would write (an unknown resultType, an empty nextCursor, a lone
// surrogate, a code 0, execution.taskSupport). It serves in process (an
// mcp.Transport of its own, no SDK server behind it) and over Streamable
// HTTP (httptest, every answer an event stream), and keeps every message
// it received as it received it.
//
// A handler gets each request and a send function that writes one raw
// message back (notifications and requests of its own first, its answer
// last); ask sends a request of the server's and waits for the client's
// answer. Methods without a handler get the defaults: server/discover and
// initialize answer for revision, ping answers {}, and anything else is
// method-not-found.
type rawServer struct {
	t        testing.TB
	revision string // what discover and initialize say
	// caps is the server's capabilities object (default {"tools":{}}).
	caps string

	mu       sync.Mutex
	handlers map[string]rawHandler
	received []rawMessage
	pending  map[string]chan json.RawMessage // the server's own requests, by id
	nextID   int
}

type rawHandler func(req rawMessage, send func(string))

// rawMessage is one message the server received.
type rawMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	// Raw is the message's bytes as received.
	Raw string `json:"-"`
}

func newRawServer(t testing.TB, revision string) *rawServer {
	return &rawServer{t: t, revision: revision, caps: `{"tools":{}}`, handlers: map[string]rawHandler{}, pending: map[string]chan json.RawMessage{}}
}

// newToolServer returns a 2026-07-28 raw server that lists a read-only
// tool of each name (rawTool) and answers tools/call with call.
func newToolServer(t testing.TB, call rawHandler, names ...string) *rawServer {
	s := newRawServer(t, Revision20260728)
	tools := make([]string, len(names))
	for i, name := range names {
		tools[i] = rawTool(name)
	}
	s.answer("tools/list", `{"tools":[`+strings.Join(tools, ",")+`]}`)
	s.on("tools/call", call)
	return s
}

// rawTool is a read-only tool as a server lists it.
func rawTool(name string) string {
	return fmt.Sprintf(`{"name":%q,"inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`, name)
}

// on sets the handler of method.
func (s *rawServer) on(method string, h rawHandler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handlers[method] = h
}

// answer sets a handler that answers method with result, raw JSON.
func (s *rawServer) answer(method, result string) {
	s.on(method, func(req rawMessage, send func(string)) { send(rawResult(req.ID, result)) })
}

func rawResult(id json.RawMessage, result string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result)
}

func rawError(id json.RawMessage, code int, message string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`, id, code, message)
}

// messages returns what the server received of method, in order.
func (s *rawServer) messages(method string) []rawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []rawMessage
	for _, m := range s.received {
		if m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

// ask sends a request of the server's own and waits for the answer.
func (s *rawServer) ask(ctx context.Context, send func(string), method, params string) json.RawMessage {
	s.mu.Lock()
	s.nextID++
	id := fmt.Sprintf(`"srv-%d"`, s.nextID)
	ch := make(chan json.RawMessage, 1)
	s.pending[id] = ch
	s.mu.Unlock()
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, id, method, params))
	select {
	case r := <-ch:
		return r
	case <-ctx.Done():
		return nil
	}
}

// handle takes one message from the client and runs what answers it (a
// handler, or the defaults) with send; it returns false for a message that
// needs no answer.
func (s *rawServer) handle(ctx context.Context, data []byte, send func(string)) bool {
	var m rawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		s.t.Errorf("raw server: not JSON: %s", data)
		return false
	}
	m.Raw = string(data)
	s.mu.Lock()
	s.received = append(s.received, m)
	h := s.handlers[m.Method]
	var ch chan json.RawMessage
	if m.Method == "" {
		ch = s.pending[string(m.ID)]
		delete(s.pending, string(m.ID))
	}
	s.mu.Unlock()
	switch {
	case m.Method == "":
		if ch != nil {
			ch <- m.Result
		}
		return false
	case len(m.ID) == 0 || string(m.ID) == "null":
		return false // a notification
	case h != nil:
		h(m, send)
	case m.Method == "server/discover" && s.revision == Revision20260728:
		send(rawResult(m.ID, fmt.Sprintf(`{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":%s,`+
			`"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"raw","version":"1"}}}`, s.caps)))
	case m.Method == "initialize":
		send(rawResult(m.ID, fmt.Sprintf(`{"protocolVersion":%q,"capabilities":%s,"serverInfo":{"name":"raw","version":"1"}}`, Revision20251125, s.caps)))
	case m.Method == "ping":
		send(rawResult(m.ID, `{}`))
	default:
		send(rawError(m.ID, jsonrpc.CodeMethodNotFound, "Method not found"))
	}
	return true
}

// spec returns a spec that reaches the server in process.
func (s *rawServer) spec(name string) ServerSpec {
	return ServerSpec{Name: name, Transport: func(context.Context) (mcp.Transport, error) {
		return rawTransport{s}, nil
	}}
}

type rawTransport struct{ s *rawServer }

func (t rawTransport) Connect(context.Context) (mcp.Connection, error) {
	return &rawConn{s: t.s, out: make(chan jsonrpc.Message, 64), closed: make(chan struct{})}, nil
}

// rawConn is the client's end of an in-process connection: what it writes
// goes to the server's handlers, on a goroutine each, and what they send
// comes back through Read.
type rawConn struct {
	s      *rawServer
	out    chan jsonrpc.Message
	closed chan struct{}
	once   sync.Once
	wg     sync.WaitGroup
}

func (c *rawConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-c.out:
		return m, nil
	case <-c.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *rawConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	send := func(raw string) {
		m, err := jsonrpc.DecodeMessage([]byte(raw))
		if err != nil {
			c.s.t.Errorf("raw server: bad message to send: %s", raw)
			return
		}
		select {
		case c.out <- m:
		case <-c.closed:
		}
	}
	c.wg.Go(func() { c.s.handle(context.Background(), data, send) })
	return nil
}

func (c *rawConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return nil
}

func (c *rawConn) SessionID() string { return "" }

// httpURL serves the server over Streamable HTTP and returns its URL. A
// request is answered with an event stream that carries what its handler
// sends; a notification or a response with 202; a GET (a 2025-11-25
// session's standalone stream) with 405.
func (s *rawServer) httpURL() string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "no stream here", http.StatusMethodNotAllowed)
			return
		}
		data, _ := io.ReadAll(r.Body)
		var mu sync.Mutex
		started := false
		bw := bufio.NewWriter(w)
		send := func(raw string) {
			mu.Lock()
			defer mu.Unlock()
			if !started {
				started = true
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
			}
			fmt.Fprintf(bw, "event: message\ndata: %s\n\n", strings.ReplaceAll(raw, "\n", ""))
			bw.Flush()
			w.(http.Flusher).Flush()
		}
		if !s.handle(r.Context(), data, send) {
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	s.t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// transports are the ways a test reaches a raw server.
var rawTransports = []struct {
	name string
	spec func(s *rawServer, name string) ServerSpec
}{
	{"memory", func(s *rawServer, name string) ServerSpec { return s.spec(name) }},
	{"http", func(s *rawServer, name string) ServerSpec { return ServerSpec{Name: name, URL: s.httpURL()} }},
}
