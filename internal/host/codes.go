package host

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The go-sdk uses JSON-RPC codes -32003 and -32004 for its own "client is
// closing" and "server is closing" errors and compares errors by code, so a
// server's own error with one of those codes (the support server's
// "-32003 forbidden") reaches the caller as mcp.ErrConnectionClosed, with
// the code lost. codeGuard moves those two codes out of the way as a
// response is read, and errorCode restores them, so the model gets the
// server's message and the event its code.

// shiftedCode is added to a guarded code; no JSON-RPC code is near it.
const shiftedCode = -1 << 40

func isGuarded(code int64) bool { return code == -32003 || code == -32004 }

// codeGuard wraps a client connection.
type codeGuard struct{ mcp.Connection }

func (c codeGuard) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok && resp.Error != nil {
		var werr *jsonrpc.Error
		if errors.As(resp.Error, &werr) && isGuarded(werr.Code) {
			resp.Error = &jsonrpc.Error{Code: werr.Code + shiftedCode, Message: werr.Message, Data: werr.Data}
		}
	}
	return msg, err
}

// errorCode returns the code the server sent.
func errorCode(werr *jsonrpc.Error) int64 {
	if isGuarded(werr.Code - shiftedCode) {
		return werr.Code - shiftedCode
	}
	return werr.Code
}

// guardedTransport applies codeGuard to the connections it makes.
type guardedTransport struct{ mcp.Transport }

func (t guardedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return codeGuard{conn}, nil
}
