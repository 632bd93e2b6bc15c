// Package snapshot keeps what one MCP server answered during one case (the
// "snapshot MCP" pattern), and serves it again from a stand-in, so that a
// benchmark over a server whose answers change over time (a live API, a
// remote url: server) can be rerun a month later with the same answers.
//
// A Recorder reads the host's wire trace (host.Options.Wire: every
// JSON-RPC message exchanged with every server) and keeps, for each server
// it records, every request the host sent and the server's answer: the
// handshake (server/discover, initialize), tools/list, tools/call, and
// anything else the host asked. A Cassette read back from that file is a
// Transport for host.ServerSpec: an in-process stand-in that answers each
// request with its recorded answer, so the host negotiates the recorded
// revision and lists the recorded tools. A request is matched by its method
// and its parameters as canonical JSON (keys sorted), without the
// per-request _meta (trace IDs, the revision) and a multi-round-trip
// call's requestState (sealed by the server, new every time); a call is
// thus matched by tool and arguments. The handshake is matched by its
// method alone: the host's own version is not the server's business.
// Requests recorded several times are answered in the order recorded, the
// last one repeating; a request the server never answered is never answered
// again (a server that ignores server/discover is restarted as legacy in
// the replay too). A request that is not in the cassette is answered with
// a JSON-RPC error that says so, and counted as a miss, which fails the
// case.
//
// Not replayed: requests the server sent the client (a 2025-11-25
// elicitation/create in the middle of a call; a 2026-07-28 server asks
// through input_required results, which are replayed), and notifications.
// A stand-in answers at once: a replayed call's latency is the stand-in's,
// while the recorded latency is kept in the file for reference.
package snapshot

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/hosteval/hosteval/internal/model/replay"
	"github.com/hosteval/hosteval/internal/record"
)

// FormatVersion is the version of the server cassette format; a file of
// another version is refused rather than misread.
const FormatVersion = 1

// Exchange is one request the host sent a server and the server's answer.
type Exchange struct {
	Method string
	// Params are the request's parameters without _meta and requestState
	// (nil for none).
	Params json.RawMessage
	// Result or Error is the answer (the JSON-RPC error object); neither
	// for a request the server never answered.
	Result json.RawMessage
	Error  json.RawMessage
	// LatencyMS is how long the server took to answer, for reference.
	LatencyMS float64
}

// Answered reports whether the server answered the request.
func (e Exchange) Answered() bool { return e.Result != nil || e.Error != nil }

// key is what a request is matched by.
func (e Exchange) key() string { return keyOf(e.Method, e.Params) }

// handshake methods are matched by their method alone.
var handshake = map[string]bool{"initialize": true, "server/discover": true}

// keyOf is the match key of a request: its method and its parameters as
// canonical JSON, or its method alone for the handshake.
func keyOf(method string, params json.RawMessage) string {
	if handshake[method] || len(params) == 0 {
		return method
	}
	return method + " " + string(params)
}

// stripped returns params without _meta and requestState, as canonical
// JSON (keys sorted, numbers as written), nil for no parameters.
func stripped(params json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(params)) == 0 || string(bytes.TrimSpace(params)) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(params))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("params are not JSON: %w", err)
	}
	if m, ok := v.(map[string]any); ok {
		delete(m, "_meta")
		delete(m, "requestState")
		if len(m) == 0 {
			return nil, nil
		}
	}
	// encoding/json sorts the keys of a map: canonical.
	return json.Marshal(v)
}

// Cassette is one server's recorded answers for one case, served by its
// Transport. It is safe for concurrent use.
type Cassette struct {
	path      string
	server    string
	exchanges []Exchange

	mu     sync.Mutex
	used   map[string]int
	misses []string
}

// Open reads the server cassette at path.
func Open(path string) (*Cassette, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("server cassette %s: not recorded yet (record it with -record, or replay with fallback)", path)
		}
		return nil, fmt.Errorf("server cassette: %w", err)
	}
	server, exchanges, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("server cassette %s: %w", path, err)
	}
	return &Cassette{path: path, server: server, exchanges: exchanges, used: map[string]int{}}, nil
}

// Path is the cassette's file.
func (c *Cassette) Path() string { return c.path }

// Misses are the requests the stand-in could not answer from the
// cassette, each saying what was asked and what was recorded instead.
func (c *Cassette) Misses() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.misses...)
}

// find returns the recorded answer to a request, in the order recorded,
// or what is recorded instead (the miss, which it counts).
func (c *Cassette) find(method string, params json.RawMessage) (e Exchange, miss string, ok bool) {
	key := keyOf(method, params)
	c.mu.Lock()
	defer c.mu.Unlock()
	var found []Exchange
	for _, e := range c.exchanges {
		if e.key() == key {
			found = append(found, e)
		}
	}
	if len(found) == 0 {
		miss = c.missLocked(method, params)
		c.misses = append(c.misses, miss)
		return Exchange{}, miss, false
	}
	i := min(c.used[key], len(found)-1)
	c.used[key]++
	return found[i], "", true
}

// missLocked says what was asked and what the cassette holds of it.
func (c *Cassette) missLocked(method string, params json.RawMessage) string {
	var recorded []string
	tool := toolOf(params)
	for _, e := range c.exchanges {
		if e.Method != method || (tool != "" && toolOf(e.Params) != tool) {
			continue
		}
		recorded = append(recorded, string(e.Params))
	}
	what := method
	if len(params) > 0 {
		what += " " + string(params)
	}
	msg := fmt.Sprintf("server cassette %s: %s is not recorded", c.path, what)
	switch {
	case len(recorded) == 0 && tool != "":
		msg += fmt.Sprintf(" (no call of %s is)", tool)
	case len(recorded) == 0:
		msg += fmt.Sprintf(" (no %s request is)", method)
	default:
		msg += "; recorded: " + strings.Join(recorded, ", ")
	}
	return msg
}

// toolOf is the tool a tools/call's parameters name.
func toolOf(params json.RawMessage) string {
	var p struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(params, &p) != nil {
		return ""
	}
	return p.Name
}

// fileExchange is one exchange as a server cassette is written.
type fileExchange struct {
	Method     string     `yaml:"method"`
	Params     *yaml.Node `yaml:"params,omitempty"`
	Result     *yaml.Node `yaml:"result,omitempty"`
	Error      *yaml.Node `yaml:"error,omitempty"`
	Unanswered bool       `yaml:"unanswered,omitempty"`
	LatencyMS  *float64   `yaml:"latency_ms,omitempty"`
}

const header = `# A hosteval server cassette: what one MCP server answered during one case,
# request by request (tools/call matched by tool and arguments), replayed by a
# stand-in in place of the server. Record again with hosteval run -record.
`

// encode writes a server cassette.
func encode(server string, exchanges []Exchange) ([]byte, error) {
	f := struct {
		Version   int            `yaml:"hosteval_server_cassette"`
		Server    string         `yaml:"server"`
		Exchanges []fileExchange `yaml:"exchanges"`
	}{Version: FormatVersion, Server: server, Exchanges: []fileExchange{}}
	node := func(data json.RawMessage) (*yaml.Node, error) {
		if data == nil {
			return nil, nil
		}
		return replay.YAMLOf(data)
	}
	for _, e := range exchanges {
		fe := fileExchange{Method: e.Method, Unanswered: !e.Answered()}
		var err error
		if fe.Params, err = node(e.Params); err != nil {
			return nil, err
		}
		if fe.Result, err = node(e.Result); err != nil {
			return nil, err
		}
		if fe.Error, err = node(e.Error); err != nil {
			return nil, err
		}
		if e.Answered() {
			ms, _ := strconv.ParseFloat(strconv.FormatFloat(e.LatencyMS, 'f', 3, 64), 64)
			fe.LatencyMS = &ms
		}
		f.Exchanges = append(f.Exchanges, fe)
	}
	var buf bytes.Buffer
	buf.WriteString(header)
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(f); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// decode reads a server cassette.
func decode(data []byte) (string, []Exchange, error) {
	// yaml.v3 decodes a node into a yaml.Node value, not a pointer.
	var f struct {
		Version   *int   `yaml:"hosteval_server_cassette"`
		Server    string `yaml:"server"`
		Exchanges []struct {
			Method     string    `yaml:"method"`
			Params     yaml.Node `yaml:"params"`
			Result     yaml.Node `yaml:"result"`
			Error      yaml.Node `yaml:"error"`
			Unanswered bool      `yaml:"unanswered"`
			LatencyMS  *float64  `yaml:"latency_ms"`
		} `yaml:"exchanges"`
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return "", nil, err
	}
	if err := knownKeys(&doc); err != nil {
		return "", nil, err
	}
	if err := doc.Decode(&f); err != nil {
		return "", nil, err
	}
	switch {
	case f.Version == nil:
		return "", nil, errors.New("not a server cassette (no hosteval_server_cassette: version)")
	case *f.Version != FormatVersion:
		return "", nil, fmt.Errorf("format version %d, want %d", *f.Version, FormatVersion)
	}
	var out []Exchange
	jsonOf := func(n *yaml.Node) (json.RawMessage, error) {
		if n == nil || n.Kind == 0 {
			return nil, nil // not written
		}
		return replay.JSONOf(n)
	}
	for i, fe := range f.Exchanges {
		e := Exchange{Method: fe.Method}
		var err error
		if e.Params, err = jsonOf(&fe.Params); err == nil {
			// Written sorted; sorted again in case a person edited it.
			e.Params, err = stripped(e.Params)
		}
		if err == nil {
			e.Result, err = jsonOf(&fe.Result)
		}
		if err == nil {
			e.Error, err = jsonOf(&fe.Error)
		}
		if err != nil {
			return "", nil, fmt.Errorf("exchanges[%d]: %w", i, err)
		}
		if fe.Method == "" {
			return "", nil, fmt.Errorf("exchanges[%d]: method: required", i)
		}
		if !fe.Unanswered && !e.Answered() {
			return "", nil, fmt.Errorf("exchanges[%d]: want a result, an error, or unanswered: true", i)
		}
		if fe.LatencyMS != nil {
			e.LatencyMS = *fe.LatencyMS
		}
		out = append(out, e)
	}
	return f.Server, out, nil
}

// knownKeys checks the keys of the file and of its exchanges (their values
// are JSON, any keys): a misspelt key would otherwise be read as absent.
func knownKeys(doc *yaml.Node) error {
	if len(doc.Content) == 0 {
		return errors.New("empty file")
	}
	check := func(n *yaml.Node, known ...string) error {
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("line %d: want a mapping", n.Line)
		}
		for i := 0; i < len(n.Content); i += 2 {
			if k := n.Content[i]; !slices.Contains(known, k.Value) {
				return fmt.Errorf("line %d: unknown key %q (want %s)", k.Line, k.Value, strings.Join(known, ", "))
			}
		}
		return nil
	}
	root := doc.Content[0]
	if err := check(root, "hosteval_server_cassette", "server", "exchanges"); err != nil {
		return err
	}
	for i := 0; i < len(root.Content); i += 2 {
		if root.Content[i].Value != "exchanges" || root.Content[i+1].Kind != yaml.SequenceNode {
			continue
		}
		for _, e := range root.Content[i+1].Content {
			if err := check(e, "method", "params", "result", "error", "unanswered", "latency_ms"); err != nil {
				return err
			}
		}
	}
	return nil
}

// write writes a server cassette whole, through a temporary file.
func write(path, server string, exchanges []Exchange) error {
	data, err := encode(server, exchanges)
	if err != nil {
		return fmt.Errorf("server cassette %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("server cassette: %w", err)
	}
	if err := record.WriteFileAtomic(path, data); err != nil {
		return fmt.Errorf("server cassette: %w", err)
	}
	return nil
}
