package host

import (
	"context"
	"encoding/json"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tools that only run as tasks. A tool whose execution.taskSupport is
// "required" must be called with task augmentation, which this host does
// not implement: every call of it fails ("requires task augmentation",
// server-everything's simulate-research-query, docs/peers.md #7). The go-sdk
// drops the execution field from mcp.Tool, so the host reads it from the raw
// tools/list results on the connection, and does not offer such tools to
// the model.
//
// Only stdio connections are watched: the Streamable HTTP connection has
// unexported methods the SDK needs, which a wrapper would hide.

// taskWatch remembers, for one connection, which tools listed by the
// server require task augmentation.
type taskWatch struct {
	mu       sync.Mutex
	lists    map[jsonrpc.ID]bool // tools/list requests waiting for their result
	required []string
}

func newTaskWatch() *taskWatch {
	return &taskWatch{lists: map[jsonrpc.ID]bool{}}
}

// taskOnly returns the names of the tools listed so far that require task
// augmentation. A nil watch has none.
func (w *taskWatch) taskOnly() []string {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.required)
}

func (w *taskWatch) sent(msg jsonrpc.Message) {
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/list" && req.ID.IsValid() {
		w.mu.Lock()
		w.lists[req.ID] = true
		w.mu.Unlock()
	}
}

func (w *taskWatch) received(msg jsonrpc.Message) {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.lists[resp.ID] {
		return
	}
	delete(w.lists, resp.ID)
	var page struct {
		Tools []struct {
			Name      string `json:"name"`
			Execution struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		} `json:"tools"`
	}
	if resp.Error != nil || json.Unmarshal(resp.Result, &page) != nil {
		return
	}
	for _, t := range page.Tools {
		if t.Execution.TaskSupport == "required" && !slices.Contains(w.required, t.Name) {
			w.required = append(w.required, t.Name)
		}
	}
}

// taskWatchTransport applies a taskWatch to the connection it makes.
type taskWatchTransport struct {
	mcp.Transport
	watch *taskWatch
}

func (t taskWatchTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return taskWatchConn{conn, t.watch}, nil
}

type taskWatchConn struct {
	mcp.Connection
	watch *taskWatch
}

func (c taskWatchConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	c.watch.sent(msg)
	return c.Connection.Write(ctx, msg)
}

func (c taskWatchConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		c.watch.received(msg)
	}
	return msg, err
}

// taskOnlyTools returns the namespaced names of the tools of connected
// servers that require task augmentation.
func taskOnlyTools(servers []*serverConn) []string {
	var names []string
	for _, s := range servers {
		if s.session == nil {
			continue
		}
		for _, name := range s.tasks.taskOnly() {
			names = append(names, Namespaced(s.spec.Name, name))
		}
	}
	return names
}
