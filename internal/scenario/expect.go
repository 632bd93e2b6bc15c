package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/text"
	"github.com/hosteval/hosteval/internal/yamlx"
)

// expectation is one entry of a scenario's expect list.
type expectation struct {
	line  int
	check checker
}

// checker is one kind of expectation.
type checker interface {
	// name is the short canonical rendering of the expectation.
	name() string
	// eval says whether rec meets it and, when not, what was found.
	eval(rec *finished) (bool, string)
}

// finished is a case's record as its expectations read it: the record,
// and what several expectations would each work out again, worked out
// once per case when first asked: the calls by name, their arguments
// normalised, the record's counts. Ten tool expectations over a case of
// 100 calls copied the 100 calls ten times.
type finished struct {
	*record.Record
	byName map[string][]int // indexes into Calls
	args   []map[string]any // by call index, normalised; nil until asked
	argsOK []bool
	counts *record.Counts
}

// callsOf are the indexes of the calls of name, in order.
func (f *finished) callsOf(name string) []int {
	if f.byName == nil {
		f.byName = make(map[string][]int)
		for i := range f.Calls {
			f.byName[f.Calls[i].Name] = append(f.byName[f.Calls[i].Name], i)
		}
	}
	return f.byName[name]
}

// argsOf are the arguments of call i, normalised as expectations compare
// them.
func (f *finished) argsOf(i int) map[string]any {
	if f.args == nil {
		f.args, f.argsOK = make([]map[string]any, len(f.Calls)), make([]bool, len(f.Calls))
	}
	if !f.argsOK[i] {
		f.args[i], _ = normalize(f.Calls[i].Arguments).(map[string]any)
		f.argsOK[i] = true
	}
	return f.args[i]
}

// countsOf are the record's counts.
func (f *finished) countsOf() record.Counts {
	if f.counts == nil {
		n := f.Counts()
		f.counts = &n
	}
	return *f.counts
}

// Evaluate checks every expectation of the case's scenario against a
// finished record, in the order written. A record of a case that could not
// run (StatusError) is evaluated as far as it goes; the runner decides the
// case's status.
func Evaluate(c *Case, rec *record.Record) []record.Expectation {
	if rec == nil {
		rec = &record.Record{}
	}
	expects := c.Scenario.expects
	if c.row != nil && len(c.row.expects) > 0 {
		expects = slices.Concat(expects, c.row.expects)
	}
	out := make([]record.Expectation, 0, len(expects))
	f := &finished{Record: rec}
	for _, e := range expects {
		ok, detail := e.check.eval(f)
		x := record.Expectation{Name: e.check.name(), Line: e.line, Passed: ok}
		if !ok {
			x.Detail = detail
		}
		out = append(out, x)
	}
	return out
}

// intRange is a count or size: exact, at least, at most, or between.
type intRange struct {
	min, max       int
	hasMin, hasMax bool
}

func (r intRange) contains(n int) bool {
	return (!r.hasMin || n >= r.min) && (!r.hasMax || n <= r.max)
}

// render writes the range after key: key=2, key>=1, key<=3, key=1..3.
func (r intRange) render(key string) string {
	switch {
	case r.hasMin && r.hasMax && r.min == r.max:
		return fmt.Sprintf("%s=%d", key, r.min)
	case r.hasMin && r.hasMax:
		return fmt.Sprintf("%s=%d..%d", key, r.min, r.max)
	case r.hasMin:
		return fmt.Sprintf("%s>=%d", key, r.min)
	}
	return fmt.Sprintf("%s<=%d", key, r.max)
}

// toolExpect is an expectation on the calls of one tool.
type toolExpect struct {
	tool          string
	nth           int // 1-based; 0: any call
	called        *bool
	count         *intRange
	outcome       *string
	approval      *string
	askedUser     *bool
	rounds        *int
	errorCode     *int
	errorMatches  *regexp.Regexp
	args          map[string]any
	argsExact     map[string]any
	clipped       *bool
	resultMatches *regexp.Regexp
}

// matchFields says whether the expectation asks anything of a single call.
func (t *toolExpect) matchFields() bool {
	return t.outcome != nil || t.approval != nil || t.askedUser != nil || t.rounds != nil || t.errorCode != nil ||
		t.errorMatches != nil || t.args != nil || t.argsExact != nil || t.clipped != nil || t.resultMatches != nil
}

func (t *toolExpect) name() string {
	parts := []string{"tool " + t.tool}
	if t.nth > 0 {
		parts = append(parts, fmt.Sprintf("nth=%d", t.nth))
	}
	if t.called != nil {
		parts = append(parts, fmt.Sprintf("called=%t", *t.called))
	}
	if t.count != nil {
		parts = append(parts, t.count.render("count"))
	}
	parts = append(parts, t.callParts()...)
	return strings.Join(parts, " ")
}

// callParts renders the single-call fields the expectation asks for.
func (t *toolExpect) callParts() []string {
	var parts []string
	add := func(want bool, key string, value func() string) {
		if want {
			parts = append(parts, key+"="+value())
		}
	}
	add(t.outcome != nil, "outcome", func() string { return *t.outcome })
	add(t.approval != nil, "approval", func() string { return *t.approval })
	add(t.askedUser != nil, "asked_user", func() string { return strconv.FormatBool(*t.askedUser) })
	add(t.rounds != nil, "rounds", func() string { return strconv.Itoa(*t.rounds) })
	add(t.errorCode != nil, "error_code", func() string { return strconv.Itoa(*t.errorCode) })
	add(t.errorMatches != nil, "error_matches", func() string { return strconv.Quote(t.errorMatches.String()) })
	add(t.args != nil, "args", func() string { return render(t.args) })
	add(t.argsExact != nil, "args_exact", func() string { return render(t.argsExact) })
	add(t.clipped != nil, "clipped", func() string { return strconv.FormatBool(*t.clipped) })
	add(t.resultMatches != nil, "result_matches", func() string { return strconv.Quote(t.resultMatches.String()) })
	return parts
}

// describeCall shows what call #i has of what the expectation asks, with
// its outcome, approval and error to say why.
func (t *toolExpect) describeCall(i int, c *record.Call) string {
	parts := []string{fmt.Sprintf("#%d outcome=%s", i, c.Outcome)}
	if c.Approval != "" {
		parts = append(parts, "approval="+c.Approval)
	}
	for _, p := range []struct {
		want bool
		text string
	}{
		{t.askedUser != nil, fmt.Sprintf("asked_user=%t", c.AskedUser)},
		{t.rounds != nil, fmt.Sprintf("rounds=%d", c.Rounds)},
		{t.errorCode != nil, "error_code=" + codeText(c.ErrorCode)},
		{t.args != nil || t.argsExact != nil, "args=" + render(normalize(c.Arguments))},
		{t.clipped != nil, fmt.Sprintf("clipped=%t", c.Clipped)},
		{t.resultMatches != nil, "result=" + strconv.Quote(text.Shorten(c.Result, 120))},
		{c.Error != "", "error=" + strconv.Quote(text.Shorten(c.Error, 120))},
	} {
		if p.want {
			parts = append(parts, p.text)
		}
	}
	return strings.Join(parts, " ")
}

// matches says whether call i of rec is what the expectation asks.
func (t *toolExpect) matches(rec *finished, i int) bool {
	c := &rec.Calls[i]
	switch {
	case t.outcome != nil && c.Outcome != *t.outcome,
		t.approval != nil && c.Approval != *t.approval,
		t.askedUser != nil && c.AskedUser != *t.askedUser,
		t.rounds != nil && c.Rounds != *t.rounds,
		t.errorCode != nil && (c.ErrorCode == nil || *c.ErrorCode != *t.errorCode),
		t.errorMatches != nil && !t.errorMatches.MatchString(c.Error),
		t.clipped != nil && c.Clipped != *t.clipped,
		t.resultMatches != nil && !t.resultMatches.MatchString(c.Result):
		return false
	}
	if t.args == nil && t.argsExact == nil {
		return true
	}
	got := rec.argsOf(i)
	if t.argsExact != nil && !reflect.DeepEqual(t.argsExact, got) {
		return false
	}
	for k, want := range t.args {
		if v, ok := got[k]; !ok || !reflect.DeepEqual(want, v) {
			return false
		}
	}
	return true
}

func (t *toolExpect) eval(rec *finished) (bool, string) {
	calls := rec.callsOf(t.tool)
	var fails []string
	if t.called != nil && !*t.called && len(calls) > 0 {
		fails = append(fails, fmt.Sprintf("%s was called %s: %s", t.tool, times(len(calls)), t.describeCalls(rec, calls)))
	}
	if t.count != nil && !t.count.contains(len(calls)) {
		fails = append(fails, fmt.Sprintf("%s was called %s", t.tool, times(len(calls))))
	}
	mustExist := t.matchFields() || t.nth > 0 || (t.called != nil && *t.called) || (t.called == nil && t.count == nil)
	switch {
	case !mustExist:
	case len(calls) == 0:
		fails = append(fails, fmt.Sprintf("no calls of %s (%s)", t.tool, callList(rec.Calls)))
	case t.nth > len(calls):
		fails = append(fails, fmt.Sprintf("no call #%d of %s: it was called %s", t.nth, t.tool, times(len(calls))))
	case t.nth > 0:
		if i := calls[t.nth-1]; !t.matches(rec, i) {
			fails = append(fails, fmt.Sprintf("call of %s: %s", t.tool, t.describeCall(t.nth, &rec.Calls[i])))
		}
	case !slices.ContainsFunc(calls, func(i int) bool { return t.matches(rec, i) }):
		fails = append(fails, fmt.Sprintf("calls of %s: %s", t.tool, t.describeCalls(rec, calls)))
	}
	return len(fails) == 0, strings.Join(fails, "; ")
}

func (t *toolExpect) describeCalls(rec *finished, calls []int) string {
	parts := make([]string, len(calls))
	for i, c := range calls {
		parts[i] = t.describeCall(i+1, &rec.Calls[c])
	}
	return strings.Join(parts, "; ")
}

func times(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

// callList names the calls of a record, for a detail saying what happened
// instead.
func callList(calls []record.Call) string {
	if len(calls) == 0 {
		return "no tool calls"
	}
	names := make([]string, len(calls))
	for i, c := range calls {
		names[i] = c.Name
	}
	return "calls: " + strings.Join(names, ", ")
}

// codeText shows a call's error code, "none" for none.
func codeText(code *int) string {
	if code == nil {
		return "none"
	}
	return strconv.Itoa(*code)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// orderExpect says that tools were called in a relative order.
type orderExpect struct {
	tools []string
}

func (o *orderExpect) name() string { return "order " + strings.Join(o.tools, " < ") }

func (o *orderExpect) eval(rec *finished) (bool, string) {
	next := 0
	for _, c := range rec.Calls {
		if next < len(o.tools) && c.Name == o.tools[next] {
			next++
		}
	}
	if next == len(o.tools) {
		return true, ""
	}
	return false, fmt.Sprintf("no %s after %s in the %s", o.tools[next], strings.Join(o.tools[:next], " < "), callList(rec.Calls))
}

// caseExpect holds answer, count and bound checks, all of which must hold.
type caseExpect struct {
	turn             int // 1-based; 0: the last
	answerMatches    *regexp.Regexp
	answerNotMatches *regexp.Regexp
	counts           []countCheck
	bounds           []countCheck
}

type countCheck struct {
	key string
	r   intRange
}

func (c *caseExpect) name() string {
	var parts []string
	if c.answerMatches != nil {
		parts = append(parts, "answer_matches="+strconv.Quote(c.answerMatches.String()))
	}
	if c.answerNotMatches != nil {
		parts = append(parts, "answer_not_matches="+strconv.Quote(c.answerNotMatches.String()))
	}
	if c.turn > 0 {
		parts = append(parts, fmt.Sprintf("turn=%d", c.turn))
	}
	for _, k := range slices.Concat(c.counts, c.bounds) {
		parts = append(parts, k.r.render(k.key))
	}
	return strings.Join(parts, " ")
}

func (c *caseExpect) eval(rec *finished) (bool, string) {
	var fails []string
	if c.answerMatches != nil || c.answerNotMatches != nil {
		if fail := c.evalAnswer(rec); fail != "" {
			fails = append(fails, fail)
		}
	}
	for _, k := range c.counts {
		n, names := count(k.key, rec)
		if k.r.contains(n) {
			continue
		}
		fail := fmt.Sprintf("%s=%d", k.key, n)
		if len(names) > 0 {
			fail += " (" + strings.Join(names, ", ") + ")"
		}
		fails = append(fails, fail)
	}
	for _, b := range c.bounds {
		switch b.key {
		case "result_bytes":
			var over []string
			for i, call := range rec.Calls {
				if !b.r.contains(call.ResultBytes) {
					over = append(over, fmt.Sprintf("#%d %s result_bytes=%d", i+1, call.Name, call.ResultBytes))
				}
			}
			fails = append(fails, over...)
		case "tool_def_bytes":
			if !b.r.contains(rec.ToolDefs.Bytes) {
				fails = append(fails, fmt.Sprintf("tool_def_bytes=%d", rec.ToolDefs.Bytes))
			}
		case "tool_def_tokens":
			if !b.r.contains(rec.ToolDefs.Tokens) {
				fails = append(fails, fmt.Sprintf("tool_def_tokens=%d", rec.ToolDefs.Tokens))
			}
		}
	}
	return len(fails) == 0, strings.Join(fails, "; ")
}

func (c *caseExpect) evalAnswer(rec *finished) string {
	if len(rec.Turns) == 0 {
		return "no turns in the record"
	}
	n := len(rec.Turns)
	if c.turn > 0 {
		if c.turn > n {
			return fmt.Sprintf("no turn %d: the record has %d", c.turn, n)
		}
		n = c.turn
	}
	turn := rec.Turns[n-1]
	if turn.Truncated != "" {
		// What came is not an answer, whatever it matches.
		return fmt.Sprintf("answer of turn %d was cut short by the endpoint (finish_reason %s): %q", n, turn.Truncated, text.Shorten(turn.Answer, 200))
	}
	ok := (c.answerMatches == nil || c.answerMatches.MatchString(turn.Answer)) &&
		(c.answerNotMatches == nil || !c.answerNotMatches.MatchString(turn.Answer))
	if ok {
		return ""
	}
	detail := fmt.Sprintf("answer of turn %d: %q", n, text.Shorten(turn.Answer, 200))
	if turn.Error != "" {
		detail += fmt.Sprintf(" (turn error: %s)", text.Shorten(turn.Error, 200))
	}
	return detail
}

// count returns one of the counted figures of a record ([record.Counts])
// and, for those counted over calls, the names of the calls counted.
func count(key string, rec *finished) (int, []string) {
	n := rec.countsOf()
	var total int
	var counted func(c *record.Call) bool
	outcome := func(o string) func(c *record.Call) bool {
		return func(c *record.Call) bool { return c.Outcome == o }
	}
	switch key {
	case "steps":
		return n.Calls, nil
	case "model_requests":
		return n.ModelRequests, nil
	case "model_errors":
		var turns []string
		for _, mr := range rec.ModelRequests {
			if mr.Outcome == record.OutcomeModelError {
				turns = append(turns, fmt.Sprintf("turn %d request %d", mr.Turn, mr.Index))
			}
		}
		return n.ModelErrors, turns
	case "truncated":
		var turns []string
		for _, mr := range rec.ModelRequests {
			if mr.Outcome == record.OutcomeTruncated {
				turns = append(turns, fmt.Sprintf("turn %d request %d: %s", mr.Turn, mr.Index, mr.FinishReason))
			}
		}
		return n.Truncated, turns
	case "elicitations":
		return n.Elicitations, nil
	case "declined":
		return n.Declined, nil
	case "unknown_tools":
		total, counted = n.UnknownTools, outcome(record.OutcomeUnknownTool)
	case "timeouts":
		total, counted = n.Timeouts, outcome(record.OutcomeTimeout)
	case "tool_errors":
		total, counted = n.ToolErrors, outcome(record.OutcomeToolError)
	case "denied":
		total, counted = n.Denied, outcome(record.OutcomeDenied)
	case "protocol_errors":
		total, counted = n.ProtocolErrors, (*record.Call).ProtocolError
	default:
		return 0, nil
	}
	var names []string
	for i := range rec.Calls {
		c := &rec.Calls[i]
		switch {
		case !counted(c):
		case key == "protocol_errors":
			names = append(names, c.Name+" "+codeText(c.ErrorCode))
		default:
			names = append(names, c.Name)
		}
	}
	return total, names
}

// serverExpect is an expectation on one server's connection.
type serverExpect struct {
	server         string
	protocol       *string
	versionFailure *bool
	restarted      *bool
	eraReason      *regexp.Regexp
	connected      *bool
}

func (s *serverExpect) name() string {
	parts := []string{"server " + s.server}
	if s.protocol != nil {
		parts = append(parts, "protocol="+*s.protocol)
	}
	if s.versionFailure != nil {
		parts = append(parts, fmt.Sprintf("version_failure=%t", *s.versionFailure))
	}
	if s.restarted != nil {
		parts = append(parts, fmt.Sprintf("restarted=%t", *s.restarted))
	}
	if s.eraReason != nil {
		parts = append(parts, "era_reason="+strconv.Quote(s.eraReason.String()))
	}
	if s.connected != nil {
		parts = append(parts, fmt.Sprintf("connected=%t", *s.connected))
	}
	return strings.Join(parts, " ")
}

func (s *serverExpect) eval(rec *finished) (bool, string) {
	i := slices.IndexFunc(rec.Servers, func(r record.Server) bool { return r.Name == s.server })
	if i < 0 {
		return false, fmt.Sprintf("no server %s in the record", s.server)
	}
	r := rec.Servers[i]
	connected := r.Protocol != "" && r.Error == ""
	ok := (s.protocol == nil || r.Protocol == *s.protocol) &&
		(s.versionFailure == nil || r.VersionFailure == *s.versionFailure) &&
		(s.restarted == nil || r.Restarted == *s.restarted) &&
		(s.eraReason == nil || s.eraReason.MatchString(r.EraReason)) &&
		(s.connected == nil || connected == *s.connected)
	if ok {
		return true, ""
	}
	detail := fmt.Sprintf("server %s: protocol=%s version_failure=%t restarted=%t connected=%t", s.server, orNone(r.Protocol), r.VersionFailure, r.Restarted, connected)
	if s.eraReason != nil {
		detail += " era_reason=" + strconv.Quote(r.EraReason)
	}
	if r.Offered != "" {
		detail += " offered=" + r.Offered
	}
	if r.Error != "" {
		detail += " error=" + strconv.Quote(text.Shorten(r.Error, 200))
	}
	return false, detail
}

// toolsChangedExpect is an expectation on the changes of one server's
// tools during the case.
type toolsChangedExpect struct {
	server                  string
	added, removed, changed []string
	count                   *intRange
}

func (c *toolsChangedExpect) name() string {
	parts := []string{"tools_changed " + c.server}
	for _, l := range []struct {
		key   string
		names []string
	}{{"added", c.added}, {"removed", c.removed}, {"changed", c.changed}} {
		if len(l.names) > 0 {
			parts = append(parts, l.key+"="+strings.Join(l.names, ","))
		}
	}
	if c.count != nil {
		parts = append(parts, c.count.render("count"))
	}
	return strings.Join(parts, " ")
}

func (c *toolsChangedExpect) eval(rec *finished) (bool, string) {
	var changes []record.ToolChange
	for _, ch := range rec.ToolChanges {
		if ch.Server == c.server {
			changes = append(changes, ch)
		}
	}
	var fails []string
	switch {
	case c.count != nil && !c.count.contains(len(changes)):
		fails = append(fails, fmt.Sprintf("the tools of %s changed %s", c.server, times(len(changes))))
	case c.count == nil && len(changes) == 0:
		fails = append(fails, fmt.Sprintf("the tools of %s never changed", c.server))
	}
	for _, l := range []struct {
		what  string
		want  []string
		names func(record.ToolChange) []string
	}{
		{"added", c.added, func(ch record.ToolChange) []string { return ch.Added }},
		{"removed", c.removed, func(ch record.ToolChange) []string { return ch.Removed }},
		{"changed", c.changed, func(ch record.ToolChange) []string { return ch.Changed }},
	} {
		var got []string
		for _, ch := range changes {
			got = append(got, l.names(ch)...)
		}
		for _, name := range l.want {
			if !slices.Contains(got, name) {
				fails = append(fails, fmt.Sprintf("%s was not %s (%s: %s)", name, l.what, l.what, orNone(strings.Join(got, ", "))))
			}
		}
	}
	return len(fails) == 0, strings.Join(fails, "; ")
}

// stateExpect is a call the harness makes after the conversation, and what
// its result must hold.
type stateExpect struct {
	index         int // into the case's state checks and Record.Checks
	call          string
	matches       map[string]any
	resultMatches *regexp.Regexp
}

func (s *stateExpect) name() string {
	parts := []string{"state " + strconv.Quote(s.call)}
	if s.matches != nil {
		parts = append(parts, "matches="+render(s.matches))
	}
	if s.resultMatches != nil {
		parts = append(parts, "result_matches="+strconv.Quote(s.resultMatches.String()))
	}
	return strings.Join(parts, " ")
}

func (s *stateExpect) eval(rec *finished) (bool, string) {
	if s.index >= len(rec.Checks) {
		return false, fmt.Sprintf("no result for this state check: the record has %d", len(rec.Checks))
	}
	c := rec.Checks[s.index]
	if c.Outcome != record.OutcomeOK {
		return false, fmt.Sprintf("state call outcome=%s error=%q", c.Outcome, text.Shorten(c.Error, 200))
	}
	if s.resultMatches != nil && !s.resultMatches.MatchString(c.Result) {
		return false, fmt.Sprintf("result: %q", text.Shorten(c.Result, 200))
	}
	if s.matches == nil {
		return true, ""
	}
	dec := json.NewDecoder(strings.NewReader(c.Result))
	dec.UseNumber()
	var got any
	if err := dec.Decode(&got); err != nil {
		return false, fmt.Sprintf("result is not JSON: %q", text.Shorten(c.Result, 200))
	}
	obj, ok := got.(map[string]any)
	if !ok {
		return false, fmt.Sprintf("result is not a JSON object: %s", text.Shorten(c.Result, 200))
	}
	if d := mismatch(s.matches, normalize(obj), ""); d != "" {
		return false, d
	}
	return true, ""
}

// mismatch describes the first place where got does not match want: every
// key of a wanted object must be in got and match (objects as subsets, at
// any depth); a wanted array must have as many items as got's, in the same
// order, each matching the same way (so objects inside arrays are subsets
// too, as Jest's toMatchObject has it: a list of tickets is checked by the
// fields that matter, and a missing or extra ticket still fails); all
// other values are equal. It returns "" when got matches.
func mismatch(want, got any, path string) string {
	at := path
	if at == "" {
		at = "result"
	}
	if wl, isList := want.([]any); isList {
		gl, ok := got.([]any)
		switch {
		case !ok:
			return fmt.Sprintf("%s: got %s, want an array", at, text.Shorten(render(got), 200))
		case len(gl) != len(wl):
			return fmt.Sprintf("%s: got %s, want %s: an array matches item by item, and it has %s",
				at, text.Shorten(render(got), 200), text.Count(len(wl), "item"), text.Count(len(gl), "item"))
		}
		for i := range wl {
			if d := mismatch(wl[i], gl[i], yamlx.Join(path, fmt.Sprintf("[%d]", i))); d != "" {
				return d
			}
		}
		return ""
	}
	w, isMap := want.(map[string]any)
	if !isMap {
		if reflect.DeepEqual(want, got) {
			return ""
		}
		return fmt.Sprintf("%s: got %s, want %s", at, text.Shorten(render(got), 200), text.Shorten(render(want), 200))
	}
	g, ok := got.(map[string]any)
	if !ok {
		return fmt.Sprintf("%s: got %s, want an object", at, text.Shorten(render(got), 200))
	}
	for _, k := range slices.Sorted(maps.Keys(w)) {
		gv, ok := g[k]
		if !ok {
			return fmt.Sprintf("%s: missing", yamlx.Join(path, k))
		}
		if d := mismatch(w[k], gv, yamlx.Join(path, k)); d != "" {
			return d
		}
	}
	return ""
}

// number is a JSON number in a canonical form (big.Rat's), so that 1, 1.0,
// 1e0 from YAML, from a JSON record and from the host compare equal.
type number string

func (n number) MarshalJSON() ([]byte, error) {
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		return nil, fmt.Errorf("bad number %q", string(n))
	}
	if r.IsInt() {
		return []byte(r.Num().String()), nil
	}
	x, _ := r.Float64()
	return []byte(strconv.FormatFloat(x, 'g', -1, 64)), nil
}

func numberOf(text string) any {
	r, ok := new(big.Rat).SetString(text)
	if !ok {
		return text
	}
	return number(r.RatString())
}

// normalize turns JSON-like values into a form where equal JSON values
// are reflect.DeepEqual: numbers of every Go type become [number].
func normalize(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = normalize(x)
		}
		return m
	case []any:
		l := make([]any, len(v))
		for i, x := range v {
			l[i] = normalize(x)
		}
		return l
	case json.Number:
		return numberOf(string(v))
	case float64:
		return numberOf(strconv.FormatFloat(v, 'g', -1, 64))
	case float32:
		return numberOf(strconv.FormatFloat(float64(v), 'g', -1, 32))
	case int:
		return numberOf(strconv.Itoa(v))
	case int64:
		return numberOf(strconv.FormatInt(v, 10))
	case int32:
		return numberOf(strconv.FormatInt(int64(v), 10))
	case uint64:
		return numberOf(strconv.FormatUint(v, 10))
	case nil, string, bool, number:
		return v
	}
	// Anything else (a struct from a record read in-process): through JSON.
	data, err := json.Marshal(v)
	if err != nil {
		return v
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out any
	if dec.Decode(&out) != nil {
		return v
	}
	return normalize(out)
}

// render is compact JSON for details and names, without HTML escaping.
func render(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}
