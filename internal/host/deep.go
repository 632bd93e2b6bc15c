package host

import (
	"fmt"
	"strconv"
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
