package record

import "encoding/json"

// WireLine is one line of a wire trace (cases/<stem>.wire.jsonl with
// run -wire, the file of chat -wire): one JSON-RPC message between the host
// and a server as it passed, or one line of a server's stderr. The host
// writes it; the transcript, the lab and the server recorder read it back.
type WireLine struct {
	// MS is the time since the host started, in milliseconds.
	MS     float64 `json:"ms"`
	Server string  `json:"server"`
	// Stream is stdin (host to server), stdout (server to host) or stderr;
	// for HTTP servers, http (both directions, see Dir).
	Stream string `json:"stream"`
	Dir    string `json:"dir"` // "->" to the server, "<-" from it
	// Kind is request, notification, result, error, log (a stderr line) or
	// invalid (not JSON-RPC: the line is in Text).
	Kind   string          `json:"kind"`
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	// Bytes is the size of the line as it passed.
	Bytes   int             `json:"bytes"`
	Message json.RawMessage `json:"message,omitempty"`
	Text    string          `json:"text,omitempty"`
}
