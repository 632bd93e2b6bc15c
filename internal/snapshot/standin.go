package snapshot

import (
	"context"
	"encoding/json"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Transport returns the stand-in: a transport for host.ServerSpec whose
// every connection answers from the cassette, in process. Connections share
// the cassette's place in its answers, as one server's connections would
// share its state.
func (c *Cassette) Transport(context.Context) (mcp.Transport, error) {
	return standIn{c}, nil
}

type standIn struct{ c *Cassette }

func (s standIn) Connect(context.Context) (mcp.Connection, error) {
	return &standInConn{c: s.c, out: make(chan jsonrpc.Message, 16), closed: make(chan struct{})}, nil
}

// standInConn is one connection to the stand-in: each request written to
// it queues its recorded answer for Read.
type standInConn struct {
	c      *Cassette
	out    chan jsonrpc.Message
	once   sync.Once
	closed chan struct{}
}

// MissCode is the JSON-RPC error code of the stand-in's answer to a request
// its cassette does not hold.
const MissCode = -32603

func (s *standInConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.ID.IsValid() {
		return nil // answers to the server's requests, notifications
	}
	resp := &jsonrpc.Response{ID: req.ID}
	if req.Method == "ping" {
		resp.Result = json.RawMessage(`{}`)
		return s.send(ctx, resp)
	}
	params, err := stripped(req.Params)
	if err != nil {
		resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		return s.send(ctx, resp)
	}
	e, miss, ok := s.c.find(req.Method, params)
	switch {
	case !ok:
		resp.Error = &jsonrpc.Error{Code: MissCode, Message: "hosteval replay: " + miss}
	case !e.Answered():
		return nil // the server never answered it: neither does its stand-in
	case e.Error != nil:
		var werr jsonrpc.Error
		if err := json.Unmarshal(e.Error, &werr); err != nil {
			werr = jsonrpc.Error{Code: MissCode, Message: "hosteval replay: a recorded error does not parse: " + err.Error()}
		}
		resp.Error = &werr
	default:
		resp.Result = e.Result
	}
	return s.send(ctx, resp)
}

func (s *standInConn) send(ctx context.Context, msg jsonrpc.Message) error {
	select {
	case s.out <- msg:
		return nil
	case <-s.closed:
		return io.EOF
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *standInConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case msg := <-s.out:
		return msg, nil
	case <-s.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *standInConn) Close() error {
	s.once.Do(func() { close(s.closed) })
	return nil
}

func (*standInConn) SessionID() string { return "" }
