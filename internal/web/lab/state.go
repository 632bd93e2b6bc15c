package lab

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/text"
	"github.com/hosteval/hosteval/internal/web"
)

// The lab's state: what every page shows. Each change is made under one
// lock and published as one numbered event, so a page that loads the
// snapshot and then follows the events (ignoring those it has seen, by
// number) shows exactly what the lab holds.

// Bounds of what the lab keeps, so that a long session holds its memory.
const (
	maxLogs        = 5000
	maxWire        = 5000
	maxWireMessage = 16 << 10
	keptEvents     = 8192
)

// Item is one entry of the conversation.
type Item struct {
	ID   string `json:"id"`
	Kind string `json:"kind"` // user, step, answer, error, question, call, result
	Turn int    `json:"turn,omitempty"`
	// TraceID and Step place the item in the logs.
	TraceID string `json:"trace_id,omitempty"`
	Step    int    `json:"step,omitempty"`
	// Who acted, for a step: host, model or server.
	Who  string         `json:"who,omitempty"`
	Text string         `json:"text,omitempty"`
	Data map[string]any `json:"data,omitempty"`
	// Name, Arguments, Outcome and Result describe a call of the manual
	// panel: Text is the person's sentence, Result the model's text.
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
	Outcome   string `json:"outcome,omitempty"`
	Result    string `json:"result,omitempty"`
	// Stopped marks an answer cut short by max_steps.
	Stopped bool `json:"stopped,omitempty"`
	// Question is a question to the person (Kind question).
	Question *Question `json:"question,omitempty"`
}

// Question is what the person is asked: an approval of a call, or a
// server's form.
type Question struct {
	Kind   string `json:"kind"` // approval or form
	Server string `json:"server"`
	Tool   string `json:"tool,omitempty"`
	// Name and Arguments are the call an approval is for.
	Name      string         `json:"name,omitempty"`
	Arguments map[string]any `json:"arguments,omitempty"`
	// Effect says why the call needs approval.
	Effect  string         `json:"effect,omitempty"`
	Key     string         `json:"key,omitempty"`
	Mode    string         `json:"mode,omitempty"`
	Message string         `json:"message,omitempty"`
	Schema  map[string]any `json:"schema,omitempty"`
	URL     string         `json:"url,omitempty"`
	// State is pending until answered: then approved, denied, accept,
	// decline or cancel; withdrawn or unanswered when it ended without an
	// answer, Why saying how.
	State   string         `json:"state"`
	Why     string         `json:"why,omitempty"`
	Content map[string]any `json:"content,omitempty"`
}

// Row is a row of the side panel: one host.tool_call event, with its
// arguments and result, and what became of it in a sentence.
type Row struct {
	ID       string `json:"id"`
	Sentence string `json:"sentence"`
	record.Call
}

// LogLine is one line of the host's log or a server's.
type LogLine struct {
	N         int    `json:"n"`
	Source    string `json:"source"` // host or server
	Server    string `json:"server,omitempty"`
	Operation string `json:"operation,omitempty"`
	TraceID   string `json:"trace_id,omitempty"`
	Step      int    `json:"step,omitempty"`
	Text      string `json:"text"`
}

// WireMessage is one JSON-RPC message between the host and a server.
type WireMessage struct {
	MS      float64         `json:"ms"`
	Server  string          `json:"server"`
	Dir     string          `json:"dir"` // "->" to the server, "<-" from it
	Kind    string          `json:"kind"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Bytes   int             `json:"bytes"`
	Message string          `json:"message,omitempty"`
	// call is the trace_id and step of the call it belongs to.
	call string
}

// setup is what the page shows before anything happens.
type setup struct {
	Title       string          `json:"title,omitempty"`
	SessionID   string          `json:"session_id"`
	Manual      bool            `json:"manual"`
	Model       string          `json:"model,omitempty"`
	Suggestions []string        `json:"suggestions,omitempty"`
	Servers     []record.Server `json:"servers"`
	Tools       []toolInfo      `json:"tools"`
	ToolDefs    record.ToolDefs `json:"tool_defs"`
	Limits      map[string]any  `json:"limits"`
}

// toolInfo is one tool of the host's table, as the manual panel offers it.
type toolInfo struct {
	Name        string `json:"name"`
	Server      string `json:"server"`
	Tool        string `json:"tool"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description"`
	AutoRun     bool   `json:"auto_run"`
	Offered     bool   `json:"offered"`
	InputSchema any    `json:"input_schema"`
}

// snapshot is the whole state, as a page loads it.
type snapshot struct {
	Seq   int64     `json:"seq"`
	Setup setup     `json:"setup"`
	Busy  bool      `json:"busy"`
	Items []Item    `json:"items"`
	Calls []Row     `json:"calls"`
	Logs  []LogLine `json:"logs"`
}

// event is the payload of one published change; Seq numbers it.
type event struct {
	Seq  int64    `json:"seq"`
	Item *Item    `json:"item,omitempty"`
	Call *Row     `json:"call,omitempty"`
	Log  *LogLine `json:"log,omitempty"`
	Busy *bool    `json:"busy,omitempty"`
	// Setup is the page's setup again, when it changed (the tools).
	Setup *setup `json:"setup,omitempty"`
}

// question is a question waiting for the person.
type question struct {
	item   string
	kind   string
	schema map[string]any
	answer chan answer // buffered: the answer never waits for the asker
}

// answer is the person's answer to a question.
type answer struct {
	approved bool
	elicit   host.ElicitAnswer
}

type state struct {
	events *web.Events

	mu        sync.Mutex
	seq       int64
	setup     setup
	busy      bool
	turns     int
	items     []*Item
	byID      map[string]*Item
	calls     []*Row
	logs      []LogLine
	logN      int
	wire      []*WireMessage
	join      map[string]*wireJoin // by server
	questions map[string]*question // pending, by item id
	nextID    int
}

func newState() *state {
	return &state{
		events: web.NewEvents(keptEvents),
		byID:   map[string]*Item{}, join: map[string]*wireJoin{}, questions: map[string]*question{},
	}
}

func (s *state) close() { s.events.Close() }

// publish numbers and sends one change; s.mu is held.
func (s *state) publish(name string, ev event) {
	s.seq++
	ev.Seq = s.seq
	s.events.Publish(name, ev)
}

func (s *state) newID(prefix string) string {
	s.nextID++
	return prefix + strconv.Itoa(s.nextID)
}

func (s *state) setSetup(v setup) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setup = v
}

// changeSetup replaces the setup of a page that shows it already: the
// tools changed.
func (s *state) changeSetup(v setup) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setup = v
	s.publish("setup", event{Setup: &v})
}

func (s *state) setBusy(busy bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.busy = busy
	s.publish("busy", event{Busy: &busy})
}

// addItem adds an item to the conversation and returns its id.
func (s *state) addItem(it Item) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addItemLocked(it)
}

func (s *state) addItemLocked(it Item) string {
	it.ID = s.newID("i")
	if it.Turn == 0 {
		it.Turn = s.turns
	}
	p := &it
	s.items = append(s.items, p)
	s.byID[it.ID] = p
	cp := *p
	s.publish("item", event{Item: &cp})
	return it.ID
}

// addUser adds the person's question as a new turn and returns its number.
func (s *state) addUser(text string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.turns++
	s.addItemLocked(Item{Kind: "user", Text: text})
	return s.turns
}

func (s *state) addStep(st host.Step) {
	s.addItem(Item{Kind: "step", Who: st.Who, Text: st.Text, Data: st.Data})
}

func (s *state) addCall(ev record.Call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	row := &Row{ID: s.newID("c"), Sentence: host.Explain(ev), Call: ev}
	s.calls = append(s.calls, row)
	cp := *row
	s.publish("call", event{Call: &cp})
}

// addLog adds a line of the host's log (source host) or of a server's.
func (s *state) addLog(source string, line []byte) {
	var f struct {
		Operation string `json:"operation"`
		Server    string `json:"server"`
		TraceID   string `json:"trace_id"`
		Step      any    `json:"step"`
		Msg       string `json:"msg"`
	}
	json.Unmarshal(line, &f) // a line that is not JSON is shown as it is
	ll := LogLine{Source: source, Server: f.Server, Operation: f.Operation, TraceID: f.TraceID, Text: string(line)}
	if ll.Operation == "" && f.Msg != "" {
		ll.Operation = "log"
	}
	switch v := f.Step.(type) {
	case float64:
		ll.Step = int(v)
	case string:
		ll.Step, _ = strconv.Atoi(v)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.logN++
	ll.N = s.logN
	s.logs = append(s.logs, ll)
	if len(s.logs) > maxLogs {
		s.logs = s.logs[len(s.logs)-maxLogs:]
	}
	s.publish("log", event{Log: &ll})
}

// wireJoin follows one server's traffic to tell which call a message
// belongs to: a tools/call request names its trace and step in _meta,
// its answer has its id, and what the server sends in between (a
// 2025-11-25 question, a progress notification) belongs to the call in
// flight.
type wireJoin struct {
	pending map[string]string // request id -> call
	current string
	// early holds the answers seen before their request: the trace
	// records a request once it is written, and a fast server may have
	// answered by then.
	early map[string]*WireMessage
}

// addWire adds one line of the host's wire trace.
func (s *state) addWire(line []byte) {
	var e record.WireLine
	if json.Unmarshal(line, &e) != nil || e.Stream == "stderr" {
		return // the server's stderr is in the logs already
	}
	m := &WireMessage{MS: e.MS, Server: e.Server, Dir: e.Dir, Kind: e.Kind, ID: e.ID, Method: e.Method, Bytes: e.Bytes,
		Message: text.Shorten(string(e.Message), maxWireMessage)}
	if e.Kind == "invalid" {
		m.Message = text.Shorten(e.Text, maxWireMessage)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.join[e.Server]
	if j == nil {
		j = &wireJoin{pending: map[string]string{}, early: map[string]*WireMessage{}}
		s.join[e.Server] = j
	}
	id := string(e.ID)
	answer := (e.Kind == "result" || e.Kind == "error") && e.Dir == "<-"
	var moved *WireMessage // an early answer, to follow its request
	switch {
	case e.Kind == "request" && e.Dir == "->" && e.Method == "tools/call":
		var msg struct {
			Params struct {
				Meta map[string]any `json:"_meta"`
			} `json:"params"`
		}
		json.Unmarshal(e.Message, &msg)
		trace, _ := msg.Params.Meta[record.MetaTraceID].(string)
		step, _ := msg.Params.Meta[record.MetaStep].(float64)
		if trace == "" {
			break
		}
		m.call = callKey(trace, int(step))
		if a := j.early[id]; a != nil {
			a.call, a.Method = m.call, e.Method
			delete(j.early, id)
			moved = a
			break
		}
		j.pending[id] = m.call
		j.current = m.call
	case answer && j.pending[id] != "":
		m.call = j.pending[id]
		delete(j.pending, id)
		if len(j.pending) == 0 {
			j.current = ""
		}
	case answer && e.Method == "":
		j.early[id] = m
		if len(j.early) > 64 {
			clear(j.early) // answers to requests the trace never showed
		}
	case len(j.pending) > 0:
		m.call = j.current
	}
	s.wire = append(s.wire, m)
	if moved != nil {
		if i := slices.Index(s.wire, moved); i >= 0 {
			s.wire = append(slices.Delete(s.wire, i, i+1), moved)
		}
	}
	if len(s.wire) > maxWire {
		s.wire = s.wire[len(s.wire)-maxWire:]
	}
}

func callKey(trace string, step int) string { return fmt.Sprintf("%s/%d", trace, step) }

// callDetail is what a click on a row opens.
type callDetail struct {
	Call        Row           `json:"call"`
	ServerLines []LogLine     `json:"server_lines"`
	Wire        []WireMessage `json:"wire"`
}

// detail returns the call of the row id with the server's lines and the
// wire messages that join it on trace_id + step.
func (s *state) detail(id string) (callDetail, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.calls {
		if r.ID != id {
			continue
		}
		d := callDetail{Call: *r, ServerLines: []LogLine{}, Wire: []WireMessage{}}
		for _, ll := range s.logs {
			if ll.Source == "server" && ll.TraceID == r.TraceID && ll.Step == r.Step && ll.TraceID != "" {
				d.ServerLines = append(d.ServerLines, ll)
			}
		}
		key := callKey(r.TraceID, r.Step)
		for _, m := range s.wire {
			if m.call == key && m.Server == r.Server {
				d.Wire = append(d.Wire, *m)
			}
		}
		return d, true
	}
	return callDetail{}, false
}

func (s *state) snapshot() snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := snapshot{Seq: s.seq, Setup: s.setup, Busy: s.busy, Items: make([]Item, len(s.items)),
		Calls: make([]Row, len(s.calls)), Logs: append([]LogLine{}, s.logs...)}
	for i, it := range s.items {
		snap.Items[i] = *it
	}
	for i, r := range s.calls {
		snap.Calls[i] = *r
	}
	return snap
}

// ask puts a question to the person: it adds it to the conversation and
// returns it, waiting for an answer.
func (s *state) ask(q Question, schema map[string]any) *question {
	s.mu.Lock()
	defer s.mu.Unlock()
	q.State = "pending"
	id := s.addItemLocked(Item{Kind: "question", Question: &q})
	pq := &question{item: id, kind: q.Kind, schema: schema, answer: make(chan answer, 1)}
	s.questions[id] = pq
	return pq
}

// settle ends a question that got no answer, saying why, unless it was
// answered first.
func (s *state) settle(q *question, st, why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, pending := s.questions[q.item]; !pending {
		return
	}
	delete(s.questions, q.item)
	s.updateQuestion(q.item, st, why, nil)
}

// updateQuestion sets a question's state and publishes it; s.mu is held.
func (s *state) updateQuestion(id, st, why string, content map[string]any) {
	it := s.byID[id]
	q := *it.Question
	q.State, q.Why, q.Content = st, why, content
	it.Question = &q
	cp := *it
	s.publish("item", event{Item: &cp})
}

// answerError is a person's answer the lab refuses, with the HTTP status
// that says why.
type answerError struct {
	Status   int                  `json:"-"`
	Message  string               `json:"error"`
	State    string               `json:"state,omitempty"`
	Problems []host.AnswerProblem `json:"problems,omitempty"`
}

func (e *answerError) Error() string { return e.Message }

// answer takes the person's answer to question id: approve or deny for an
// approval; accept (with content), decline or cancel for a form. The first
// answer wins; an accepted form is checked against its schema, as the host
// will check it again, before anything is sent.
func (s *state) answer(id, action string, content map[string]any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.questions[id]
	if q == nil {
		it := s.byID[id]
		if it == nil || it.Question == nil {
			return &answerError{Status: 404, Message: "there is no such question"}
		}
		return &answerError{Status: 409, State: it.Question.State,
			Message: "this question is no longer open (" + it.Question.State + "): another tab may have answered it"}
	}
	var a answer
	switch {
	case q.kind == "approval" && (action == "approve" || action == "deny"):
		a.approved = action == "approve"
		action = map[bool]string{true: "approved", false: "denied"}[a.approved]
		content = nil
	case q.kind == "form" && action == host.ActionAccept:
		if content == nil {
			content = map[string]any{}
		}
		if err := host.CheckAnswer(q.schema, content); err != nil {
			var ae *host.AnswerError
			problems := []host.AnswerProblem{}
			if errors.As(err, &ae) {
				problems = ae.Problems
			}
			return &answerError{Status: 422, Message: err.Error(), Problems: problems}
		}
		a.elicit = host.ElicitAnswer{Action: host.ActionAccept, Content: content}
	case q.kind == "form" && (action == host.ActionDecline || action == host.ActionCancel):
		a.elicit = host.ElicitAnswer{Action: action}
		content = nil
	default:
		return &answerError{Status: 400, Message: fmt.Sprintf("%q is not an answer to this question", action)}
	}
	delete(s.questions, id)
	s.updateQuestion(id, action, "", content)
	q.answer <- a
	return nil
}
