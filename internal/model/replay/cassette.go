// Package replay keeps model exchanges (a request body and the endpoint's
// answer to it) so that they can be served again without the endpoint:
// per-case cassettes, committed next to a suite and replayed strictly, and
// a content-addressed response cache for development.
//
// Both are keyed by the same canonical hash of the request body ([Key]),
// which holds everything that decides the answer: the model name, the
// messages, the tools and the sampling parameters. Neither ever holds a
// header, a URL or an API key: only bodies are stored.
//
// Bodies, not the values of the model interface, are kept because a replay
// then hands the recorded answer to the parser a live answer goes through:
// every figure of a replayed run is the recorded one, and a cassette is
// what a real endpoint produced. A cassette is YAML because it is read in
// pull requests: a changed tool description is one changed line, and
// texts of several lines read as text.
package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"gopkg.in/yaml.v3"
)

// Exchange is one request and the endpoint's answer to it, as sent and
// received on the wire.
type Exchange struct {
	// Request is the request body.
	Request []byte
	// Status is the HTTP status of the answer: 200, or the status of an
	// answer that is kept because it is the model's own failure (an
	// endpoint that could not parse the model's tool call).
	Status int
	// Response is the answer body.
	Response []byte
	// Latency is how long the endpoint took to answer.
	Latency time.Duration
}

// Mode says what a [Cassette] does with a request.
type Mode string

const (
	// Replay answers every request from the cassette; a request that is not
	// in it is a [*Miss] and never reaches the endpoint.
	Replay Mode = "replay"
	// Record sends every request to the endpoint and writes the cassette
	// anew with every exchange.
	Record Mode = "record"
	// Fallback answers what the cassette holds and sends the rest to the
	// endpoint, appending their exchanges.
	Fallback Mode = "fallback"
)

// ParseMode reads a mode by name: replay, record or fallback.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case Replay, Record, Fallback:
		return m, nil
	}
	return "", fmt.Errorf("cassette mode %q: want replay, record or fallback", s)
}

// FormatVersion is the version of the cassette file format; a cassette
// of another version is refused rather than misread. Version 2 keeps each
// distinct tools array once, in the file's tools section, and a request
// names it (tools: !tools <id>); version 1 repeated the array in every
// request, and is still read.
const FormatVersion = 2

// oldestVersion is the oldest format still read.
const oldestVersion = 1

const header = `A hosteval cassette: the model requests of one case and the endpoint's answers,
request and response bodies as they were on the wire (no headers, URLs or keys).
Replay is strict: a request that differs from every one recorded here fails the
case with what changed. Record again with hosteval run -record (docs/models.md).
Each tools array sent is kept once, under tools:, and a request names it by its
id (tools: !tools <id>).`

// Cassette holds the exchanges of one case in one YAML file. It is safe
// for concurrent use (a case's judge may ask while its model does).
type Cassette struct {
	path string
	mode Mode

	mu        sync.Mutex
	exchanges []stored
	used      map[string]int // key -> times replayed
	requests  int            // requests asked so far
	replayed  int
	recorded  int
	written   bool
}

type stored struct {
	Exchange
	key     string
	request any // parsed, for the diff of a miss
}

// Open opens the cassette at path in mode. In Replay mode the file must
// exist; in Fallback mode a missing file is an empty cassette; in Record
// mode an existing file is replaced at the first exchange (or at Close).
func Open(path string, mode Mode) (*Cassette, error) {
	if _, err := ParseMode(string(mode)); err != nil {
		return nil, err
	}
	c := &Cassette{path: path, mode: mode, used: map[string]int{}}
	if mode == Record {
		return c, nil
	}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && mode == Fallback:
		return c, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("cassette %s: not recorded yet (record it with -record, or replay with fallback)", path)
	case err != nil:
		return nil, fmt.Errorf("cassette: %w", err)
	}
	if c.exchanges, err = decodeFile(data); err != nil {
		return nil, fmt.Errorf("cassette %s: %w", path, err)
	}
	return c, nil
}

// Path is the cassette's file.
func (c *Cassette) Path() string { return c.path }

// Mode is the mode the cassette was opened in.
func (c *Cassette) Mode() Mode { return c.mode }

// Find returns the recorded answer to the request body. In Record mode
// nothing is looked up. In Replay mode a request that is not recorded is a
// [*Miss] saying what differs from the nearest recorded request; in
// Fallback mode it is just not found. Identical requests recorded several
// times are answered in the order recorded, the last one repeating.
func (c *Cassette) Find(body []byte) (Exchange, bool, error) {
	canon, err := Canonical(body)
	if err != nil {
		return Exchange{}, false, err
	}
	key := keyOf(canon)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.requests++
	if c.mode == Record {
		return Exchange{}, false, nil
	}
	var found []int
	for i, s := range c.exchanges {
		if s.key == key {
			found = append(found, i)
		}
	}
	if len(found) == 0 {
		if c.mode == Fallback {
			return Exchange{}, false, nil
		}
		req, _ := parse(body) // parsed by Canonical above
		return Exchange{}, false, c.miss(req)
	}
	n := c.used[key]
	c.used[key]++
	c.replayed++
	return c.exchanges[found[min(n, len(found)-1)]].Exchange, true, nil
}

// Add appends an exchange the endpoint answered and writes the cassette,
// so that a crash loses nothing recorded. In Replay mode it is an error:
// nothing may be recorded.
func (c *Cassette) Add(ex Exchange) error {
	if c.mode == Replay {
		return fmt.Errorf("cassette %s: opened for replay, not recording", c.path)
	}
	canon, err := Canonical(ex.Request)
	if err != nil {
		return fmt.Errorf("cassette %s: %w", c.path, err)
	}
	req, _ := parse(canon)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.exchanges = append(c.exchanges, stored{Exchange: ex, key: keyOf(canon), request: req})
	c.recorded++
	return c.writeLocked()
}

// Close writes a Record-mode cassette that recorded nothing (a case that
// made no request leaves an empty cassette, not a stale one). Exchanges
// are written as they are added, so Close has nothing else to do.
func (c *Cassette) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mode == Record && !c.written {
		return c.writeLocked()
	}
	return nil
}

// Stats counts the requests answered from the cassette and those recorded
// into it so far.
func (c *Cassette) Stats() (replayed, recorded int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.replayed, c.recorded
}

func (c *Cassette) writeLocked() error {
	data, err := encodeFile(c.exchanges)
	if err != nil {
		return fmt.Errorf("cassette %s: %w", c.path, err)
	}
	if err := writeAtomic(c.path, data); err != nil {
		return fmt.Errorf("cassette: %w", err)
	}
	c.written = true
	return nil
}

// writeAtomic replaces path with data through a temporary file in the same
// folder, so a reader never sees half a file.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// The file: a mapping with the format version, the tools arrays the
// requests sent (each once, by id) and a list of exchanges, each a
// mapping with request, status, latency_ms and response (or
// response_text, for an answer body that is not JSON). A request's tools
// array is written as a reference to its entry in tools.
func encodeFile(exchanges []stored) ([]byte, error) {
	return encodeVersion(exchanges, FormatVersion)
}

// encodeVersion writes the file in the format of version, 1 or 2 (1 for
// the tests that measure what version 2 saves).
func encodeVersion(exchanges []stored, version int) ([]byte, error) {
	list := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	if len(exchanges) == 0 {
		list.Style = yaml.FlowStyle
	}
	toolsets := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	ids := map[string]string{} // a tools array's compact JSON -> its id
	for i, s := range exchanges {
		req, err := parse(s.Request)
		if err != nil {
			return nil, fmt.Errorf("exchange %d: request body is not JSON: %w", i+1, err)
		}
		if version >= 2 {
			req = referTools(req, func(tools []any) string {
				text := string(compact(tools))
				id, ok := ids[text]
				if !ok {
					id = toolsID(text, ids)
					ids[text] = id
					toolsets.Content = append(toolsets.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: id}, toNode(tools))
				}
				return id
			})
		}
		ex := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		add := func(key string, v *yaml.Node) {
			ex.Content = append(ex.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
		}
		add("request", toNode(req))
		add("status", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(s.Status)})
		add("latency_ms", number(formatMS(s.Latency)))
		if res, err := parse(s.Response); err == nil {
			add("response", toNode(res))
		} else {
			add("response_text", toNode(string(s.Response)))
		}
		list.Content = append(list.Content, ex)
	}
	doc := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", HeadComment: header}
	doc.Content = []*yaml.Node{
		{Kind: yaml.ScalarNode, Tag: "!!str", Value: "hosteval_cassette"},
		{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(version)},
	}
	if len(toolsets.Content) > 0 {
		doc.Content = append(doc.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "tools"}, toolsets)
	}
	doc.Content = append(doc.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "exchanges"}, list)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{doc}}); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	// What is written must read back to the same requests, or a replay
	// would miss what was just recorded.
	back, err := decodeFile(buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("the written cassette does not read back: %w", err)
	}
	for i := range back {
		if back[i].key != exchanges[i].key {
			return nil, fmt.Errorf("exchange %d: the written request does not read back the same", i+1)
		}
	}
	return buf.Bytes(), nil
}

// toolsRef stands for a request's tools array in the file: the id of its
// entry in the tools section.
type toolsRef string

// toolsTag marks a reference to the tools section.
const toolsTag = "!tools"

// referTools returns req with its tools array, when it has one, replaced
// by the reference ref gives it; req itself is unchanged.
func referTools(req any, ref func(tools []any) string) any {
	o, ok := req.(*object)
	if !ok {
		return req
	}
	for i, k := range o.keys {
		if tools, ok := o.vals[i].([]any); ok && k == "tools" && len(tools) > 0 {
			c := &object{keys: o.keys, vals: slices.Clone(o.vals)}
			c.vals[i] = toolsRef(ref(tools))
			return c
		}
	}
	return req
}

// toolsID names a tools array: the first 12 hex digits of the SHA-256 of
// its compact JSON, longer in the unlikely case that they name another
// array of the file already.
func toolsID(text string, taken map[string]string) string {
	sum := keyOf([]byte(text))
	used := make(map[string]bool, len(taken))
	for _, id := range taken {
		used[id] = true
	}
	for n := 12; ; n += 4 {
		if id := sum[:min(n, len(sum))]; !used[id] || n >= len(sum) {
			return id
		}
	}
}

func number(s string) *yaml.Node {
	return toNode(json.Number(s))
}

// formatMS writes a latency in milliseconds to the microsecond.
func formatMS(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', -1, 64)
}

func decodeFile(data []byte) ([]stored, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("not a cassette: want a mapping with hosteval_cassette and exchanges")
	}
	root := doc.Content[0]
	var (
		version  int
		list     *yaml.Node
		toolsets *yaml.Node
		versions bool
	)
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch k.Value {
		case "hosteval_cassette":
			if err := v.Decode(&version); err != nil {
				return nil, fmt.Errorf("line %d: hosteval_cassette: %w", v.Line, err)
			}
			versions = true
		case "tools":
			if v.Kind != yaml.MappingNode {
				return nil, fmt.Errorf("line %d: tools: want a mapping of ids to tools arrays", v.Line)
			}
			toolsets = v
		case "exchanges":
			if v.Kind != yaml.SequenceNode {
				return nil, fmt.Errorf("line %d: exchanges: want a list", v.Line)
			}
			list = v
		default:
			return nil, fmt.Errorf("line %d: unknown field %s", k.Line, k.Value)
		}
	}
	if !versions || version < oldestVersion || version > FormatVersion {
		return nil, fmt.Errorf("hosteval_cassette: version %d, want %d to %d (record it again)", version, oldestVersion, FormatVersion)
	}
	if toolsets != nil && version < 2 {
		return nil, fmt.Errorf("line %d: unknown field tools (a version %d cassette)", toolsets.Line, version)
	}
	tools, err := decodeToolsets(toolsets)
	if err != nil {
		return nil, err
	}
	if list == nil {
		return nil, nil
	}
	out := make([]stored, 0, len(list.Content))
	for i, n := range list.Content {
		s, err := decodeExchange(n, tools)
		if err != nil {
			return nil, fmt.Errorf("exchanges[%d]: %w", i, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// decodeToolsets reads the tools section: each id's tools array.
func decodeToolsets(n *yaml.Node) (map[string][]any, error) {
	if n == nil {
		return nil, nil
	}
	out := make(map[string][]any, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Value == "" {
			return nil, fmt.Errorf("line %d: tools: an id must be a string", k.Line)
		}
		if _, dup := out[k.Value]; dup {
			return nil, fmt.Errorf("line %d: tools.%s: given twice", k.Line, k.Value)
		}
		arr, err := fromNode(v)
		if err != nil {
			return nil, fmt.Errorf("tools.%s: %w", k.Value, err)
		}
		a, ok := arr.([]any)
		if !ok {
			return nil, fmt.Errorf("line %d: tools.%s: want a list of tools", v.Line, k.Value)
		}
		out[k.Value] = a
	}
	return out, nil
}

// resolveTools puts back the tools array a request's reference names.
func resolveTools(req any, n *yaml.Node, tools map[string][]any) (any, error) {
	o, ok := req.(*object)
	if !ok {
		return req, nil
	}
	for i, v := range o.vals {
		ref, ok := v.(toolsRef)
		if !ok {
			continue
		}
		if o.keys[i] != "tools" {
			return nil, fmt.Errorf("line %d: request.%s: only tools may name the cassette's tools (%s %s)", n.Line, o.keys[i], toolsTag, ref)
		}
		arr, ok := tools[string(ref)]
		if !ok {
			return nil, fmt.Errorf("line %d: request.tools: no %s in the cassette's tools", n.Line, ref)
		}
		o.vals[i] = arr
	}
	return o, nil
}

func decodeExchange(n *yaml.Node, tools map[string][]any) (stored, error) {
	if n.Kind != yaml.MappingNode {
		return stored{}, fmt.Errorf("line %d: want a mapping", n.Line)
	}
	var (
		s             stored
		haveReq, have bool
	)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "request":
			req, err := fromNodeRefs(v)
			if err != nil {
				return stored{}, fmt.Errorf("request: %w", err)
			}
			if req, err = resolveTools(req, v, tools); err != nil {
				return stored{}, err
			}
			s.Request, s.request, haveReq = compact(req), req, true
		case "status":
			if err := v.Decode(&s.Status); err != nil {
				return stored{}, fmt.Errorf("line %d: status: %w", v.Line, err)
			}
		case "latency_ms":
			var ms float64
			if err := v.Decode(&ms); err != nil || ms < 0 || math.IsInf(ms, 0) || math.IsNaN(ms) {
				return stored{}, fmt.Errorf("line %d: latency_ms: want milliseconds", v.Line)
			}
			s.Latency = time.Duration(math.Round(ms*1000)) * time.Microsecond
		case "response":
			res, err := fromNode(v)
			if err != nil {
				return stored{}, fmt.Errorf("response: %w", err)
			}
			s.Response, have = compact(res), true
		case "response_text":
			var text string
			if err := v.Decode(&text); err != nil {
				return stored{}, fmt.Errorf("line %d: response_text: %w", v.Line, err)
			}
			s.Response, have = []byte(text), true
		default:
			return stored{}, fmt.Errorf("line %d: unknown field %s", k.Line, k.Value)
		}
	}
	switch {
	case !haveReq:
		return stored{}, fmt.Errorf("line %d: request: required", n.Line)
	case !have:
		return stored{}, fmt.Errorf("line %d: response: required", n.Line)
	case s.Status == 0:
		return stored{}, fmt.Errorf("line %d: status: required", n.Line)
	}
	s.key = keyOf(s.Request)
	return s, nil
}
