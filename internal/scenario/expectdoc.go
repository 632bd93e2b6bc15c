package scenario

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/model"
	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/yamlx"
)

// Reading a scenario's expectations (expect.go evaluates them). An
// expectation is one of six kinds, chosen by the presence of tool, order,
// server, state, judge (judge.go) or tools_changed; a mapping with none of
// them holds answer, count and bound checks, all of which must hold. Each kind is a struct below, so
// that the schema and the reference list its keys.

// toolExpectDoc is an expectation on the calls of one tool.
type toolExpectDoc struct {
	Tool          string         `yaml:"tool" required:"true" doc:"The tool, namespaced (server__tool); a name that no server offers is allowed where the expectation says it was not called or was unknown." example:"tickets__open_ticket"`
	Nth           *int           `yaml:"nth" doc:"Check only the tool's Nth call (the first is 1); default: some call must match." example:"2"`
	Called        *bool          `yaml:"called" doc:"Whether the tool was called at all; called: false goes with nothing but count." example:"false"`
	Count         *intRange      `yaml:"count" doc:"How many times it was called: N, or {min: N, max: N}." example:"{min: 1, max: 2}"`
	Outcome       *outcomeValue  `yaml:"outcome" doc:"The call's outcome." example:"ok"`
	Approval      *approvalValue `yaml:"approval" doc:"Whether it ran without asking (auto), after the person approved, or was denied." example:"approved"`
	AskedUser     *bool          `yaml:"asked_user" doc:"Whether the call put a question to the person (elicitation)." example:"true"`
	Rounds        *int           `yaml:"rounds" doc:"The rounds of a multi-round-trip call (input_required)." example:"2"`
	ErrorCode     *int           `yaml:"error_code" doc:"The JSON-RPC error code of a call answered by an error." example:"-32602"`
	ErrorMatches  *yamlx.Regexp  `yaml:"error_matches" doc:"A regular expression on the call's error text." example:"(?i)not found"`
	Args          map[string]any `yaml:"args" doc:"Arguments the call had (a subset: other keys may be there too); numbers compare by value." example:"{hostname: jump-prod-02}"`
	ArgsExact     map[string]any `yaml:"args_exact" doc:"The call's arguments, exactly." example:"{hostname: jump-prod-02}"`
	Clipped       *bool          `yaml:"clipped" doc:"Whether the host cut the result to its budget." example:"true"`
	ResultMatches *yamlx.Regexp  `yaml:"result_matches" doc:"A regular expression on the result the model got." example:"Camille Michel"`
}

// orderExpectDoc says that tools were called in a relative order.
type orderExpectDoc struct {
	Order []string `yaml:"order" required:"true" doc:"Two or more tools, called in this order (other calls may come between)." example:"[cmdb__get_asset, tickets__open_ticket]"`
}

// serverExpectDoc is an expectation on one server's connection.
type serverExpectDoc struct {
	Server         string         `yaml:"server" required:"true" doc:"A server of the scenario; alone, it must have connected." example:"tickets"`
	Protocol       *revisionValue `yaml:"protocol" doc:"The protocol revision negotiated." example:"2026-07-28"`
	VersionFailure *bool          `yaml:"version_failure" doc:"Whether the server and the host had no common revision (the server then did not connect, and that is the verdict, not an error)." example:"true"`
	Restarted      *bool          `yaml:"restarted" doc:"Whether the host restarted the server to fall back to 2025-11-25 (a server a run already knows to be silent is not restarted: see era_reason)." example:"false"`
	EraReason      *yamlx.Regexp  `yaml:"era_reason" doc:"A regular expression on why the host chose the revision: answered discover, discover error code N, answered ping, not discover, no answer to discover within T, exited, ...; remembered: REASON when the run already knew the server." example:"answered ping, not discover"`
	Connected      *bool          `yaml:"connected" doc:"Whether the server connected (connected: false makes its failure the verdict)." example:"false"`
}

// stateExpectDoc is a call the harness makes after the conversation, and
// what its result must hold.
type stateExpectDoc struct {
	State         string         `yaml:"state" required:"true" doc:"A call (name and arguments) the harness makes after the conversation, e.g. to read what a tool changed." example:"'tickets__list_tickets {}'"`
	Matches       map[string]any `yaml:"matches" doc:"The result, read as a JSON object, must hold these keys and values. Objects match as subsets (other keys may be there), at any depth; an array matches item by item: as many items, in the same order, objects inside it as subsets too ({tickets: [{id: INC-4100}]} holds for one ticket INC-4100 whatever its other fields). Numbers compare by value, other values equal." example:"{total: 1}"`
	ResultMatches *yamlx.Regexp  `yaml:"result_matches" doc:"A regular expression on the result." example:"INC-\\\\d+"`
}

// toolsChangedExpectDoc is an expectation on how a server's tools changed
// during the case: it said so (notifications/tools/list_changed), the host
// listed them again and offered the new table (record.ToolChange).
type toolsChangedExpectDoc struct {
	ToolsChanged string    `yaml:"tools_changed" required:"true" doc:"A server of the scenario whose tools changed during the case; alone, they must have changed at least once. Tool names below are the server's own (no server__ prefix), and a tool named in added may be named in other expectations although the server lists it only later." example:"support"`
	Added        []string  `yaml:"added" doc:"Tools the server added (all of them, over all its changes)." example:"[escalate]"`
	Removed      []string  `yaml:"removed" doc:"Tools the server removed." example:"[old_search]"`
	Changed      []string  `yaml:"changed" doc:"Tools the server listed again with another definition (description, schema, annotations)." example:"[search]"`
	Count        *intRange `yaml:"count" doc:"How many times its tools changed: N or {min: N, max: N}; 0 says they never did." example:"1"`
}

// caseExpectDoc holds answer, count and bound checks, all of which must
// hold.
type caseExpectDoc struct {
	AnswerMatches    *yamlx.Regexp `yaml:"answer_matches" doc:"A regular expression the answer of the last turn (or of turn) matches." example:"(?i)opened"`
	AnswerNotMatches *yamlx.Regexp `yaml:"answer_not_matches" doc:"A regular expression the answer does not match." example:"(?i)sorry"`
	Turn             *int          `yaml:"turn" doc:"Which turn's answer the answer checks read (the first is 1; default the last)." example:"1"`
	UnknownTools     *intRange     `yaml:"unknown_tools" doc:"Calls of a tool not offered (nothing was sent): N or {min, max}." example:"0"`
	Timeouts         *intRange     `yaml:"timeouts" doc:"Calls with no answer within the tool timeout." example:"0"`
	ProtocolErrors   *intRange     `yaml:"protocol_errors" doc:"Calls answered by a JSON-RPC error (with a code)." example:"0"`
	ToolErrors       *intRange     `yaml:"tool_errors" doc:"Calls whose result was an error (isError)." example:"{max: 1}"`
	Denied           *intRange     `yaml:"denied" doc:"Calls the person did not approve." example:"1"`
	ModelErrors      *intRange     `yaml:"model_errors" doc:"Model requests answered by the model's own malformed output (a tool call the endpoint could not parse): scored, never retried." example:"0"`
	Truncated        *intRange     `yaml:"truncated" doc:"Model requests whose answer the endpoint cut short (finish_reason length or content_filter): no answer, and the answer checks fail on it." example:"0"`
	Steps            *intRange     `yaml:"steps" doc:"Tool calls the model proposed." example:"{max: 3}"`
	ModelRequests    *intRange     `yaml:"model_requests" doc:"Requests to the model." example:"{max: 4}"`
	Elicitations     *intRange     `yaml:"elicitations" doc:"Questions servers put to the person." example:"1"`
	Declined         *intRange     `yaml:"declined" doc:"Questions declined (by the person, or for want of a canned answer)." example:"0"`
	ResultBytes      *intRange     `yaml:"result_bytes" doc:"Bytes of every result given to the model, each call on its own." example:"{max: 4000}"`
	ToolDefBytes     *intRange     `yaml:"tool_def_bytes" doc:"Bytes of the tools array of one model request." example:"{max: 6000}"`
	ToolDefTokens    *intRange     `yaml:"tool_def_tokens" doc:"o200k tokens of the tools array of one model request." example:"{max: 800}"`
}

// expectKinds are the kinds with a key of their own, in the order their
// keys are looked for.
var expectKinds = []struct {
	key    string
	fields []string
}{
	{"tool", yamlx.Keys(reflect.TypeFor[toolExpectDoc]())},
	{"order", yamlx.Keys(reflect.TypeFor[orderExpectDoc]())},
	{"server", yamlx.Keys(reflect.TypeFor[serverExpectDoc]())},
	{"state", yamlx.Keys(reflect.TypeFor[stateExpectDoc]())},
	{"judge", yamlx.Keys(reflect.TypeFor[judgeExpectDoc]())},
	{"tools_changed", yamlx.Keys(reflect.TypeFor[toolsChangedExpectDoc]())},
}

var caseExpectFields = yamlx.Keys(reflect.TypeFor[caseExpectDoc]())

// Values of an outcome, an approval and a revision.
type (
	outcomeValue  string
	approvalValue string
	revisionValue string
)

func (outcomeValue) Enum() []string { return record.Outcomes() }

func (approvalValue) Enum() []string {
	return []string{record.ApprovalAuto, record.ApprovalApproved, record.ApprovalDenied}
}

func (revisionValue) Enum() []string { return []string{host.Revision20260728, host.Revision20251125} }

// expectDoc is one entry of a scenario's expect list, read into its
// checker, the names it refers to (without their file, which the loader
// sets) and, for a state expectation, the call the runner makes.
type expectDoc struct {
	line  int
	check checker
	refs  []toolRef
	state *host.CallRequest
	judge *judgeSpec
}

// UnmarshalYAML picks the kind by its key, reports fields of another kind
// as such, then reads the kind's fields and checks what they mean.
func (e *expectDoc) UnmarshalYAML(n *yamlx.Node) error {
	if n.Kind() != yamlx.Mapping {
		return fmt.Errorf("want a mapping, got %s", n.Describe())
	}
	keys := n.Keys()
	if len(keys) == 0 {
		return fmt.Errorf("empty expectation: want e.g. {tool: server__tool, outcome: ok}, {answer_matches: regex} or {judge: {rubric: ...}}")
	}
	var kinds []string
	known, kindName := caseExpectFields, "an answer/count"
	for _, k := range expectKinds {
		if slices.Contains(keys, k.key) {
			kinds = append(kinds, k.key)
			known, kindName = k.fields, "a "+k.key
		}
	}
	if len(kinds) > 1 {
		n.Report(yamlx.Problem{Line: keyLine(n, kinds[1]), Path: n.Path(),
			Msg: fmt.Sprintf("want one of tool, order, server, state, judge or tools_changed in an expectation, got %s (write two expectations)", joinAnd(kinds))})
		return nil
	}
	var foreign []string
	for _, k := range keys {
		if slices.Contains(known, k) {
			continue
		}
		foreign = append(foreign, k)
		at := yamlx.Problem{Line: keyLine(n, k), Path: n.Path()}
		switch owner := fieldOwner(k); {
		case owner != "" && len(kinds) == 0:
			at.Msg = fmt.Sprintf("field %q belongs to %s expectation: add %s", k, article(owner), ownerExample[owner])
		case owner != "":
			at.Msg = fmt.Sprintf("field %q does not go in %s expectation (it belongs to %s expectation)", k, kindName, article(owner))
		default:
			hint := yamlx.Suggest(k, known)
			if hint == "" {
				hint = yamlx.Suggest(k, allExpectFields())
			}
			at.Msg = fmt.Sprintf("unknown field %q%s", k, hint)
		}
		n.Report(at)
	}
	ok := len(foreign) == 0
	r := expectReader{n: n.Omit(foreign...), ok: ok}
	switch {
	case len(kinds) == 0:
		e.check = r.caseExpect()
	case kinds[0] == "tool":
		e.check = r.toolExpect()
	case kinds[0] == "order":
		e.check = r.orderExpect()
	case kinds[0] == "server":
		e.check = r.serverExpect()
	case kinds[0] == "judge":
		e.check, e.judge = r.judgeExpect()
	case kinds[0] == "tools_changed":
		e.check = r.toolsChangedExpect()
	default:
		e.check, e.state = r.stateExpect()
	}
	// The names it refers to are checked even when it has problems.
	e.line, e.refs = n.Line(), r.refs
	if !r.ok {
		e.check, e.state, e.judge = nil, nil, nil
	}
	return nil
}

// JSONSchema is one of the kinds.
func (*expectDoc) JSONSchema(r *yamlx.Reflector) *jsonschema.Schema {
	s := &jsonschema.Schema{Description: "One expectation: a tool, order, server, state, judge or tools_changed expectation, or answer, count and bound checks."}
	for _, t := range []reflect.Type{reflect.TypeFor[toolExpectDoc](), reflect.TypeFor[orderExpectDoc](), reflect.TypeFor[serverExpectDoc](),
		reflect.TypeFor[stateExpectDoc](), reflect.TypeFor[judgeExpectDoc](), reflect.TypeFor[toolsChangedExpectDoc](), reflect.TypeFor[caseExpectDoc]()} {
		s.AnyOf = append(s.AnyOf, r.For(t))
	}
	return s
}

var ownerExample = map[string]string{
	"tool": "tool: server__tool", "order": "order: [...]", "server": "server: <name>", "state": `state: "server__tool {...}"`,
	"judge": "judge: {rubric: ...}", "tools_changed": "tools_changed: <server>",
	"answer/count": "no tool, order, server, state, judge or tools_changed",
}

func article(kind string) string {
	if kind == "answer/count" {
		return "an " + kind
	}
	return "a " + kind
}

// fieldOwner names the kind of expectation a field belongs to ("" for
// none).
func fieldOwner(key string) string {
	for _, k := range expectKinds {
		if slices.Contains(k.fields, key) {
			return k.key
		}
	}
	if slices.Contains(caseExpectFields, key) {
		return "answer/count"
	}
	return ""
}

func allExpectFields() []string {
	all := slices.Clone(caseExpectFields)
	for _, k := range expectKinds {
		all = append(all, k.fields...)
	}
	return all
}

// expectReader reads one expectation's kind: ok turns false with the first
// problem, and refs collects the names it refers to.
type expectReader struct {
	n    *yamlx.Node
	ok   bool
	refs []toolRef
}

func (r *expectReader) decode(v any) {
	r.ok = r.n.Decode(v) && r.ok
}

// errorf reports a problem at the value of key (at its key when the value
// is empty).
func (r *expectReader) errorf(key, format string, args ...any) {
	r.ok = false
	at := r.n.At(key)
	line := at.Line()
	if at == r.n {
		line = keyLine(r.n, key)
	}
	r.n.Report(yamlx.Problem{Line: line, Path: yamlx.Join(r.n.Path(), key), Msg: fmt.Sprintf(format, args...)})
}

func (r *expectReader) ref(kind refKind, key, name string) {
	r.refs = append(r.refs, toolRef{kind: kind, line: r.n.At(key).Line(), path: yamlx.Join(r.n.Path(), key), name: name})
}

// empty reports the kind's key written empty.
func (r *expectReader) empty(key, want string) bool {
	if r.n.Get(key) != nil {
		return false
	}
	r.errorf(key, "empty: want %s", want)
	return true
}

func (r *expectReader) toolExpect() checker {
	if r.empty("tool", "a tool name") {
		return nil
	}
	var d toolExpectDoc
	r.decode(&d)
	if strings.TrimSpace(d.Tool) == "" && r.ok {
		r.errorf("tool", "empty: want a tool name")
	}
	t := &toolExpect{tool: d.Tool, called: d.Called, askedUser: d.AskedUser, rounds: d.Rounds, errorCode: d.ErrorCode, clipped: d.Clipped,
		outcome: (*string)(d.Outcome), approval: (*string)(d.Approval), count: d.Count,
		errorMatches: regexpOf(d.ErrorMatches), resultMatches: regexpOf(d.ResultMatches),
		args: normalizeObject(d.Args), argsExact: normalizeObject(d.ArgsExact)}
	if d.Nth != nil {
		if *d.Nth < 1 {
			r.errorf("nth", "want 1 or more (the first call is 1), got %d", *d.Nth)
		}
		t.nth = *d.Nth
	}
	if t.called != nil && !*t.called {
		var with []string
		for _, k := range r.n.Keys() {
			if k != "tool" && k != "called" && k != "count" {
				with = append(with, k)
			}
		}
		if len(with) > 0 {
			r.ok = false
			r.n.Report(yamlx.Problem{Line: keyLine(r.n, "called"), Path: r.n.Path(),
				Msg: fmt.Sprintf("called: false cannot go with %s, which are about a call that happened", strings.Join(with, ", "))})
		}
	}
	// A name the expectation says is unknown, or never called, is allowed
	// not to exist: that is what it checks.
	expectsUnknown := t.outcome != nil && *t.outcome == record.OutcomeUnknownTool
	neverCalled := (t.called != nil && !*t.called) || (t.count != nil && t.count.hasMax && t.count.max == 0)
	if !expectsUnknown && !neverCalled && t.tool != "" {
		r.ref(refExpect, "tool", t.tool)
	}
	return t
}

func (r *expectReader) orderExpect() checker {
	if r.empty("order", "a list of tool names") {
		return nil
	}
	var d orderExpectDoc
	r.decode(&d)
	if r.ok && len(d.Order) < 2 {
		r.errorf("order", "want two or more tools")
	}
	for i, t := range d.Order {
		r.ref(refExpect, yamlx.Index("order", i), t)
	}
	return &orderExpect{tools: d.Order}
}

func (r *expectReader) serverExpect() checker {
	if r.empty("server", "a server name") {
		return nil
	}
	var d serverExpectDoc
	r.decode(&d)
	if d.Server != "" {
		r.ref(refServer, "server", d.Server)
	}
	s := &serverExpect{server: d.Server, protocol: (*string)(d.Protocol), versionFailure: d.VersionFailure, restarted: d.Restarted,
		eraReason: regexpOf(d.EraReason), connected: d.Connected}
	if s.protocol == nil && s.versionFailure == nil && s.restarted == nil && s.eraReason == nil && s.connected == nil {
		yes := true
		s.connected = &yes
	}
	return s
}

func (r *expectReader) toolsChangedExpect() checker {
	if r.empty("tools_changed", "a server name") {
		return nil
	}
	var d toolsChangedExpectDoc
	r.decode(&d)
	if d.ToolsChanged != "" {
		r.ref(refServer, "tools_changed", d.ToolsChanged)
	}
	for _, l := range []struct {
		key   string
		names []string
	}{{"added", d.Added}, {"removed", d.Removed}, {"changed", d.Changed}} {
		for i, name := range l.names {
			if strings.Contains(name, "__") && strings.HasPrefix(name, d.ToolsChanged+"__") {
				r.errorf(yamlx.Index(l.key, i), "write the server's own name of the tool, %q, not the namespaced one", strings.TrimPrefix(name, d.ToolsChanged+"__"))
			}
		}
	}
	c := &toolsChangedExpect{server: d.ToolsChanged, added: d.Added, removed: d.Removed, changed: d.Changed, count: d.Count}
	if c.count != nil && c.count.hasMax && c.count.max == 0 && len(c.added)+len(c.removed)+len(c.changed) > 0 && r.ok {
		r.errorf("count", "count: 0 cannot go with added, removed or changed")
	}
	return c
}

func (r *expectReader) stateExpect() (checker, *host.CallRequest) {
	if r.empty("state", `a call like "tickets__list_tickets {}"`) {
		return nil, nil
	}
	var d stateExpectDoc
	r.decode(&d)
	if !r.ok {
		return nil, nil
	}
	call, err := model.ParseCall(d.State)
	if err != nil {
		r.errorf("state", "%v", err)
		return nil, nil
	}
	r.ref(refTool, "state", call.Name)
	s := &stateExpect{call: d.State, matches: normalizeObject(d.Matches), resultMatches: regexpOf(d.ResultMatches)}
	return s, &host.CallRequest{Name: call.Name, Arguments: call.Arguments}
}

func (r *expectReader) caseExpect() checker {
	var d caseExpectDoc
	r.decode(&d)
	c := &caseExpect{answerMatches: regexpOf(d.AnswerMatches), answerNotMatches: regexpOf(d.AnswerNotMatches)}
	if d.Turn != nil {
		if *d.Turn < 1 {
			r.errorf("turn", "want 1 or more (the first turn is 1), got %d", *d.Turn)
		}
		c.turn = *d.Turn
		if c.answerMatches == nil && c.answerNotMatches == nil && r.ok {
			r.errorf("turn", "turn goes with answer_matches or answer_not_matches")
		}
	}
	for _, k := range []struct {
		key string
		r   *intRange
	}{
		{"unknown_tools", d.UnknownTools}, {"timeouts", d.Timeouts}, {"protocol_errors", d.ProtocolErrors}, {"tool_errors", d.ToolErrors},
		{"denied", d.Denied}, {"model_errors", d.ModelErrors}, {"truncated", d.Truncated}, {"steps", d.Steps}, {"model_requests", d.ModelRequests}, {"elicitations", d.Elicitations}, {"declined", d.Declined},
	} {
		if k.r != nil {
			c.counts = append(c.counts, countCheck{key: k.key, r: *k.r})
		}
	}
	for _, k := range []struct {
		key string
		r   *intRange
	}{{"result_bytes", d.ResultBytes}, {"tool_def_bytes", d.ToolDefBytes}, {"tool_def_tokens", d.ToolDefTokens}} {
		if k.r != nil {
			c.bounds = append(c.bounds, countCheck{key: k.key, r: *k.r})
		}
	}
	return c
}

// normalizeObject is an object's values normalised for comparison, nil
// for nil.
func normalizeObject(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return normalize(m).(map[string]any)
}

// regexpOf is r's expression, nil for none.
func regexpOf(r *yamlx.Regexp) *regexp.Regexp {
	if r == nil {
		return nil
	}
	return r.Regexp
}

// UnmarshalYAML reads N or {min: N, max: N}.
func (r *intRange) UnmarshalYAML(n *yamlx.Node) error {
	switch n.Kind() {
	case yamlx.Scalar:
		var v int
		if !n.Decode(&v) {
			return nil
		}
		if v < 0 {
			return fmt.Errorf("want 0 or more, got %d", v)
		}
		*r = intRange{min: v, max: v, hasMin: true, hasMax: true}
		return nil
	case yamlx.Mapping:
	default:
		return fmt.Errorf("want a number or {min: N, max: N}, got %s", n.Describe())
	}
	var b rangeBounds
	n.Decode(&b)
	switch {
	case n.Get("min") == nil && n.Get("max") == nil:
		return fmt.Errorf("want min, max or both")
	case b.Min != nil && b.Max != nil && *b.Min > *b.Max:
		return fmt.Errorf("min %d is more than max %d", *b.Min, *b.Max)
	}
	if b.Min != nil {
		r.min, r.hasMin = *b.Min, true
	}
	if b.Max != nil {
		r.max, r.hasMax = *b.Max, true
	}
	return nil
}

// rangeBounds are the bounds of an intRange written as a mapping.
type rangeBounds struct {
	Min *int `yaml:"min" min:"0" doc:"At least." example:"1"`
	Max *int `yaml:"max" min:"0" doc:"At most." example:"3"`
}

func (*intRange) JSONSchema(r *yamlx.Reflector) *jsonschema.Schema {
	zero := 0.0
	return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Type: "integer", Minimum: &zero}, r.For(reflect.TypeFor[rangeBounds]())}}
}
