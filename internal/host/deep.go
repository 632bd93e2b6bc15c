package host

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// A message nested past maxDepth levels is refused by the SDK's decoder
// with "exceeded maximum nesting depth", which names neither the tool nor
// the depth. A server's tool listing is where one is met (an input schema
// generated from a recursive type, unrolled), so the host says which tool
// and how deep: the connection still ends, as the SDK's would.

// nesting returns the deepest nesting of objects and arrays in data, which
// is valid JSON: linear in its length, whatever the depth.
func nesting(data []byte) int {
	depth, deepest := 0, 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			end, ok := skipString(data, i)
			if !ok {
				return deepest
			}
			i = end - 1
		case '{', '[':
			if depth++; depth > deepest {
				deepest = depth
			}
		case '}', ']':
			depth--
		}
	}
	return deepest
}

// schemaTooDeep is a tools listing refused for a tool's input schema
// nested past what the host reads.
type schemaTooDeep struct {
	tool    string
	depth   int // the schema's nesting
	message int // the whole message's
}

func (e *schemaTooDeep) Error() string {
	return fmt.Sprintf("the server's tool %s has an input schema nested %d levels deep (%d in the whole answer), past the %d levels the host reads in one message, so the listing was refused",
		strconv.Quote(e.tool), e.depth, e.message, maxDepth)
}

// tooDeep explains a message the decoder refused, when it is nested past
// maxDepth: for an answer listing tools, the tool whose input schema is
// the deepest. It returns nil for a message within the limit.
func tooDeep(data []byte) error {
	n := nesting(data)
	if n <= maxDepth {
		return nil
	}
	fields := []field{{name: "result"}}
	if readFields(data, fields) && fields[0].value != nil {
		var tools []byte
		members(fields[0].value, func(key, value []byte) bool {
			if string(key) == "tools" {
				tools = value
			}
			return true
		})
		deep := &schemaTooDeep{message: n}
		elements(tools, func(tool []byte) bool {
			var name string
			depth := 0
			members(tool, func(key, value []byte) bool {
				switch string(key) {
				case "name":
					name, _ = plainString(value)
				case "inputSchema":
					depth = nesting(value)
				}
				return true
			})
			if depth > deep.depth {
				deep.tool, deep.depth = name, depth
			}
			return true
		})
		if deep.tool != "" {
			return deep
		}
	}
	return fmt.Errorf("the message is nested %d levels deep, past the %d levels the host reads in one message", n, maxDepth)
}

// On the go-sdk's stdio connection (Options.Paths sdk) and over Streamable
// HTTP the SDK decodes a message before the host could, and fails in its
// own words. The same explanation is given there too:
//
//   - over HTTP the tap's bodies hand every message to the watch, whose
//     decoder fails on the same message: the watch keeps the explanation
//     (a failure costs the explanation, a message that decodes nothing);
//   - on the go-sdk's stdio connection a deepReader keeps a copy of the
//     line being read, so that when the SDK refuses a message as too deep
//     the line is at hand to explain (sdkPipeConn.Read).
//
// listTools then reports the explanation in place of the SDK's words.

// deepKeep bounds the line a deepReader keeps: a tools listing is tens of
// kilobytes, a deep one generated from a recursive type hundreds. A
// listing longer than that and too deep is refused in the SDK's words on
// that path. It bounds what the copy costs a long answer too: an endless
// one allocates 8 MiB more (twice the bound, the buffer doubling).
const deepKeep = 4 << 20

// deepReader passes a server's stdout through, keeping a copy of the line
// being read (up to deepKeep), and explains a line nested past maxDepth.
// It costs a copy of what it reads: only the go-sdk's path, the reference
// the host's own connection is held to, uses it.
type deepReader struct {
	r io.ReadCloser

	mu   sync.Mutex
	line []byte
	over bool // the line is longer than deepKeep: not kept
	// deep explains the first line read that was nested too deep.
	deep error
}

func (d *deepReader) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	if n > 0 {
		d.mu.Lock()
		d.see(p[:n])
		d.mu.Unlock()
	}
	return n, err
}

func (d *deepReader) Close() error { return d.r.Close() }

// see takes bytes read, under mu.
func (d *deepReader) see(data []byte) {
	for len(data) > 0 {
		chunk, rest, ended := bytes.Cut(data, []byte{'\n'})
		data = rest
		switch {
		case d.over:
		case len(d.line)+len(chunk) > deepKeep:
			d.over, d.line = true, nil
		default:
			d.line = appendDoubling(d.line, chunk)
		}
		if !ended {
			return
		}
		if d.deep == nil && !d.over {
			d.deep = explainDeep(d.line)
		}
		d.over = false
		if cap(d.line) > 64<<10 {
			d.line = nil // let a large message's buffer go
		}
		d.line = d.line[:0]
	}
}

// explain returns why the message the SDK just refused as too deep was
// refused, or nil when it is not known (a line past deepKeep). The SDK
// may have decoded the message before its newline was read: then it is
// the line still being read.
func (d *deepReader) explain() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.deep != nil {
		return d.deep
	}
	if !d.over {
		return explainDeep(d.line)
	}
	return nil
}

// explainDeep is tooDeep for any line: most cost a count of their
// brackets, and only one with more than maxDepth is measured.
func explainDeep(line []byte) error {
	if bytes.Count(line, []byte{'{'})+bytes.Count(line, []byte{'['}) <= maxDepth {
		return nil
	}
	return tooDeep(line)
}

// errNestedTooDeep is the SDK's decoder's error for a message nested past
// maxDepth, which it gives as text only.
const errNestedTooDeep = "exceeded maximum nesting depth"
