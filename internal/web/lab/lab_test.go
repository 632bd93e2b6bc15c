package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hosteval/hosteval/internal/budget"
	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/model"
	"github.com/hosteval/hosteval/internal/web"
	"github.com/hosteval/hosteval/internal/yamlx"
	"github.com/hosteval/hosteval/servers/fixturetest"
)

// The lab's tests run it as `hosteval lab` does: a real host with the
// fixture servers as processes, served by internal/web on the loopback
// interface, driven over real HTTP here and by Chromium in
// browser_test.go.

var fixtureBin string

func TestMain(m *testing.M) { os.Exit(fixturetest.MainAll(m, &fixtureBin)) }

func fixture(name string) host.ServerSpec {
	return host.ServerSpec{Name: name, Command: filepath.Join(fixtureBin, name)}
}

// seedRules is the first seed text's turn as a rules model, as the README
// runs it: a hostname in the question looks the host up, then opens a
// ticket for it; the answer is written from the ticket, or from why there
// is none.
func seedRules(t testing.TB) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "seed-rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func rulesModel(t testing.TB, text string) model.Model {
	t.Helper()
	var cfg model.RulesConfig
	if err := yamlx.Decode("rules.yaml", []byte(text), &cfg, nil); err != nil {
		t.Fatal(err)
	}
	m, err := model.New(model.Config{Rules: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// seedLab serves the seed's servers, cmdb and tickets, with its rules
// model, and returns the servers' log; grace is the page grace (0: the
// default).
func seedLab(t testing.TB, grace time.Duration) (*served, *logLines) {
	t.Helper()
	serverLog := &logLines{}
	s := startLab(t, Options{
		Host:      host.Options{Servers: []host.ServerSpec{fixture("cmdb"), fixture("tickets")}, ServerLog: serverLog},
		Model:     rulesModel(t, seedRules(t)),
		PageGrace: grace,
	})
	return s, serverLog
}

// askSeed asks the seed's question.
func (s *served) askSeed(t testing.TB) {
	t.Helper()
	if code, body := s.post(t, "/ask", map[string]string{"question": "who owns jump-prod-02? Open a ticket for it"}); code != http.StatusAccepted {
		t.Fatalf("ask: %d %v", code, body)
	}
}

// logLines collects JSON lines, safe for concurrent writers.
type logLines struct {
	fixturetest.Buffer
}

// count counts the lines that hold every one of the substrings.
func (l *logLines) count(subs ...string) int {
	n := 0
	for line := range strings.SplitSeq(l.String(), "\n") {
		all := line != ""
		for _, s := range subs {
			all = all && strings.Contains(line, s)
		}
		if all {
			n++
		}
	}
	return n
}

// served is a lab served on the loopback interface, as `hosteval lab`
// serves it.
type served struct {
	*Lab
	url string
}

func startLab(t testing.TB, opts Options) *served {
	t.Helper()
	l, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := web.Listen("", false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- web.Serve(ctx, ln, l.Handler()) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		l.Close()
	})
	return &served{Lab: l, url: strings.TrimSuffix(web.URL(ln), "/")}
}

// post sends a JSON request as the page does and returns the status and
// the decoded answer.
func (s *served) post(t testing.TB, path string, body any) (int, map[string]any) {
	t.Helper()
	data, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", s.url+path, bytes.NewReader(data))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", s.url)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func (s *served) snapshot(t testing.TB) snapshot {
	t.Helper()
	resp, err := http.Get(s.url + "/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var snap snapshot
	if err := json.NewDecoder(resp.Body).Decode(&snap); err != nil {
		t.Fatal(err)
	}
	return snap
}

// waitFor polls the state until cond holds. The deadline catches a lab
// that never gets there, not a slow machine.
func (s *served) waitFor(t testing.TB, what string, cond func(snapshot) bool) snapshot {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		snap := s.snapshot(t)
		if cond(snap) {
			return snap
		}
		if time.Now().After(deadline) {
			data, _ := json.MarshalIndent(snap.Items, "", "  ")
			t.Fatalf("waited in vain for %s; the conversation:\n%s", what, data)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// pending returns the open question of that kind, if any.
func pending(snap snapshot, kind string) *Item {
	for i := range snap.Items {
		it := &snap.Items[i]
		if it.Question != nil && it.Question.Kind == kind && it.Question.State == "pending" {
			return it
		}
	}
	return nil
}

func lastOf(snap snapshot, kind string) *Item {
	for i := len(snap.Items) - 1; i >= 0; i-- {
		if snap.Items[i].Kind == kind {
			return &snap.Items[i]
		}
	}
	return nil
}

// page follows the lab's events as an open page does, until closed.
func (s *served) page(t testing.TB) (close func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", s.url+"/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { io.Copy(io.Discard, resp.Body) })
	return func() {
		cancel()
		resp.Body.Close()
		wg.Wait()
	}
}

// TestNothingReachesTheServerUntilAButton runs the seed's turn over HTTP:
// the approval and the form wait for the person, the server hears of the
// call only after Approve and of the answer only after Accept, and an
// answer the form does not allow is refused, naming the field.
func TestNothingReachesTheServerUntilAButton(t *testing.T) {
	t.Parallel()
	s, serverLog := seedLab(t, 0)
	defer s.page(t)()
	openTicket := []string{`"method":"tools/call"`, `"tool":"open_ticket"`}

	s.askSeed(t)
	snap := s.waitFor(t, "the approval", func(s snapshot) bool { return pending(s, "approval") != nil })
	approval := pending(snap, "approval")
	if q := approval.Question; q.Name != "tickets__open_ticket" || q.Arguments["host"] != "jump-prod-02" || q.Effect != "it is not read-only" {
		t.Errorf("approval = %+v", q)
	}
	if n := serverLog.count(openTicket...); n != 0 {
		t.Fatalf("before Approve the tickets server saw %d open_ticket calls, want 0", n)
	}
	if code, body := s.post(t, "/ask", map[string]string{"question": "again"}); code != http.StatusConflict {
		t.Errorf("a second question while a turn runs: %d %v, want 409", code, body)
	}
	if code, body := s.post(t, "/answer", map[string]any{"id": approval.ID, "action": "approve"}); code != http.StatusOK {
		t.Fatalf("approve: %d %v", code, body)
	}
	snap = s.waitFor(t, "the form", func(s snapshot) bool { return pending(s, "form") != nil })
	form := pending(snap, "form")
	if q := form.Question; q.Server != "tickets" || q.Tool != "open_ticket" || !strings.Contains(q.Message, "jump-prod-02") || q.Schema["required"] == nil {
		t.Errorf("form = %+v", q)
	}
	serverLog.waitCount(t, 1, append(openTicket, `"outcome":"input_required"`)...)

	// A priority the form does not offer is refused before anything is sent.
	code, body := s.post(t, "/answer", map[string]any{"id": form.ID, "action": "accept", "content": map[string]any{"priority": "P7"}})
	problems, _ := body["problems"].([]any)
	if code != http.StatusUnprocessableEntity || len(problems) != 1 || !strings.Contains(fmt.Sprint(problems[0]), "priority") {
		t.Errorf("accept P7: %d %v, want 422 naming priority", code, body)
	}
	if code, _ := s.post(t, "/answer", map[string]any{"id": form.ID, "action": "approve"}); code != http.StatusBadRequest {
		t.Errorf("approve on a form: %d, want 400", code)
	}
	if n := serverLog.count(openTicket...); n != 1 {
		t.Errorf("after refused answers the tickets server saw %d open_ticket calls, want 1 (the question)", n)
	}
	if code, body := s.post(t, "/answer", map[string]any{"id": form.ID, "action": "accept", "content": map[string]any{"priority": "P1"}}); code != http.StatusOK {
		t.Fatalf("accept P1: %d %v", code, body)
	}
	// Another tab, late: the question is no longer open.
	if code, body := s.post(t, "/answer", map[string]any{"id": form.ID, "action": "decline"}); code != http.StatusConflict || body["state"] != "accept" {
		t.Errorf("a second answer: %d %v, want 409, state accept", code, body)
	}
	// The answer is shown before the turn ends: a turn that never ends
	// times this wait out.
	snap = s.waitFor(t, "the answer and the turn's end", func(s snapshot) bool { return lastOf(s, "answer") != nil && !s.Busy })
	if got := lastOf(snap, "answer").Text; got != "Opened INC-4100 (P1) for jump-prod-02." {
		t.Errorf("answer = %q", got)
	}
	if len(snap.Calls) != 2 || snap.Calls[0].AskedUser || !snap.Calls[1].AskedUser || snap.Calls[1].Rounds != 2 || snap.Calls[1].Approval != "approved" {
		t.Errorf("calls = %+v, want get_asset, then open_ticket asked in 2 rounds", snap.Calls)
	}
	// The row opens on the server's two lines and the wire messages.
	d, ok := s.state.detail(snap.Calls[1].ID)
	if !ok {
		t.Fatal("no detail for the second call")
	}
	var outcomes []string
	for _, l := range d.ServerLines {
		if l.Operation == "mcp.request" {
			var f struct{ Outcome string }
			json.Unmarshal([]byte(l.Text), &f)
			outcomes = append(outcomes, f.Outcome)
		}
	}
	if fmt.Sprint(outcomes) != "[input_required ok]" {
		t.Errorf("server lines of open_ticket: outcomes %v, want [input_required ok]", outcomes)
	}
	var methods []string
	for _, m := range d.Wire {
		methods = append(methods, m.Dir+m.Method)
	}
	if fmt.Sprint(methods) != "[->tools/call <-tools/call ->tools/call <-tools/call]" {
		t.Errorf("wire of open_ticket = %v, want two rounds of request and result", methods)
	}
	if d.Call.Arguments["host"] != "jump-prod-02" || !strings.Contains(d.Call.Result, "INC-4100") {
		t.Errorf("detail call = %+v", d.Call)
	}
}

func (l *logLines) waitCount(t testing.TB, want int, subs ...string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for l.count(subs...) != want {
		if time.Now().After(deadline) {
			t.Fatalf("%d log lines hold %q, want %d", l.count(subs...), subs, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestAQuestionWithNoPageOpenIsNo: closing the page must never leave a
// turn waiting. The approval goes to no once no page has been open for the
// grace, and nothing is sent.
func TestAQuestionWithNoPageOpenIsNo(t *testing.T) {
	t.Parallel()
	s, serverLog := seedLab(t, 200*time.Millisecond)
	closePage := s.page(t)
	s.askSeed(t)
	s.waitFor(t, "the approval", func(s snapshot) bool { return pending(s, "approval") != nil })
	closePage()
	snap := s.waitFor(t, "the answer", func(s snapshot) bool { return lastOf(s, "answer") != nil })
	var q *Question
	for _, it := range snap.Items {
		if it.Question != nil {
			q = it.Question
		}
	}
	if q == nil || q.State != "unanswered" || !strings.Contains(q.Why, "no page was open") {
		t.Errorf("the approval ended as %+v, want unanswered: no page", q)
	}
	if got := lastOf(snap, "answer").Text; !strings.HasPrefix(got, "No ticket was opened: the user did not approve") {
		t.Errorf("answer = %q", got)
	}
	if n := serverLog.count(`"tool":"open_ticket"`); n != 0 {
		t.Errorf("the tickets server saw %d open_ticket calls, want none", n)
	}
}

// TestTheFormIsWithdrawnWhenThePersonRunsOutOfTime: PersonTimeout is the
// host's; the page sees the question withdrawn and the server a decline.
func TestTheFormIsWithdrawnWhenThePersonRunsOutOfTime(t *testing.T) {
	t.Parallel()
	tickets := fixture("tickets")
	tickets.AutoRun = []string{"*"} // no approval: the form is the one question
	s := startLab(t, Options{
		Host: host.Options{Servers: []host.ServerSpec{tickets}, Budgets: budget.Budgets{PersonTimeout: 300 * time.Millisecond}},
	})
	defer s.page(t)()
	// No model: the manual panel, with the same checks. The form is left
	// to time out.
	if code, body := s.post(t, "/call", map[string]string{"name": "tickets__open_ticket", "arguments": `{"host": "jump-prod-02", "summary": "brute force"}`}); code != http.StatusAccepted {
		t.Fatalf("call: %d %v", code, body)
	}
	snap := s.waitFor(t, "the result", func(s snapshot) bool { return lastOf(s, "result") != nil })
	form := lastOf(snap, "question").Question
	if form.Kind != "form" || form.State != "withdrawn" || form.Why != "no answer in time: taken as no" {
		t.Errorf("form ended as %+v, want withdrawn: no answer in time", form)
	}
	res := lastOf(snap, "result")
	if res.Outcome != "tool_error" || !strings.Contains(res.Result, "declined: no ticket was opened") ||
		!strings.HasPrefix(res.Text, "open_ticket on tickets reported a failure: the user declined") {
		t.Errorf("result = %+v", res)
	}
}

// TestOtherSitesCannotDriveTheLab: the lab acts for the person, so a page
// of another origin, a form post or a rebound DNS name gets nowhere.
func TestOtherSitesCannotDriveTheLab(t *testing.T) {
	t.Parallel()
	s := startLab(t, Options{Host: host.Options{Servers: []host.ServerSpec{fixture("cmdb")}}})
	send := func(contentType, origin, hostHeader string) int {
		req, _ := http.NewRequest("POST", s.url+"/call", strings.NewReader(`{"name":"cmdb__get_asset","arguments":"{}"}`))
		req.Header.Set("Content-Type", contentType)
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if hostHeader != "" {
			req.Host = hostHeader
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	tests := []struct {
		name                      string
		contentType, origin, host string
		want                      int
	}{
		{"a form of another site", "application/x-www-form-urlencoded", "https://evil.example", "", http.StatusForbidden},
		{"text/plain from nowhere", "text/plain", "", "", http.StatusUnsupportedMediaType},
		{"JSON from another origin", "application/json", "http://127.0.0.1:1", "", http.StatusForbidden},
		{"a rebound name", "application/json", "", "evil.example:80", http.StatusMisdirectedRequest},
	}
	for _, tt := range tests {
		if got := send(tt.contentType, tt.origin, tt.host); got != tt.want {
			t.Errorf("%s: status %d, want %d", tt.name, got, tt.want)
		}
	}
	if n := len(s.snapshot(t).Calls); n != 0 {
		t.Errorf("%d calls ran, want none", n)
	}
}

// TestStopEndsTheTurn: Stop cancels what runs; the open question is
// withdrawn and nothing is sent.
func TestStopEndsTheTurn(t *testing.T) {
	t.Parallel()
	s, serverLog := seedLab(t, 0)
	defer s.page(t)()
	s.askSeed(t)
	s.waitFor(t, "the approval", func(s snapshot) bool { return pending(s, "approval") != nil })
	if code, body := s.post(t, "/stop", map[string]string{}); code != http.StatusOK {
		t.Fatalf("stop: %d %v", code, body)
	}
	snap := s.waitFor(t, "the turn to end", func(s snapshot) bool { return !s.Busy && lastOf(s, "error") != nil })
	if got := lastOf(snap, "error").Text; got != "Stopped: what was in flight was cancelled." {
		t.Errorf("the turn ended with %q", got)
	}
	if q := lastOf(snap, "question").Question; q.State != "withdrawn" {
		t.Errorf("the approval ended as %+v, want withdrawn", q)
	}
	if n := serverLog.count(`"tool":"open_ticket"`); n != 0 {
		t.Errorf("the tickets server saw %d open_ticket calls, want none", n)
	}
	// The lab takes the next question.
	if code, body := s.post(t, "/ask", map[string]string{"question": "hello"}); code != http.StatusAccepted {
		t.Errorf("ask after stop: %d %v", code, body)
	}
	snap = s.waitFor(t, "the answer", func(s snapshot) bool { return lastOf(s, "answer") != nil })
	if got := lastOf(snap, "answer").Text; !strings.HasPrefix(got, "Name a host") {
		t.Errorf("answer = %q, want the rules' fallback", got)
	}
}

// The manual panel follows the server's tools (issue 24): after the first
// call cmdb adds the tool extra and says so (FIXTURE_GROW); the next call
// lists them again first, so that extra runs and the page's setup shows
// it, with no model request.
func TestManualPanelFollowsToolChanges(t *testing.T) {
	t.Parallel()
	cmdb := fixture("cmdb")
	cmdb.Env = []string{"FIXTURE_GROW=extra"}
	s := startLab(t, Options{Host: host.Options{Servers: []host.ServerSpec{cmdb}}})
	results := func(n int) func(snapshot) bool {
		return func(snap snapshot) bool {
			c := 0
			for _, it := range snap.Items {
				if it.Kind == "result" {
					c++
				}
			}
			return c == n
		}
	}
	for i, call := range []map[string]string{
		{"name": "cmdb__get_asset", "arguments": `{"hostname": "jump-prod-02"}`},
		{"name": "cmdb__extra", "arguments": `{}`},
	} {
		if code, body := s.post(t, "/call", call); code != http.StatusAccepted {
			t.Fatalf("call %s: %d %v", call["name"], code, body)
		}
		snap := s.waitFor(t, "the result of "+call["name"], results(i+1))
		if res := lastOf(snap, "result"); res.Outcome != "ok" {
			t.Errorf("%s: outcome %s (%s), want ok", call["name"], res.Outcome, res.Text)
		}
	}
	var names []string
	for _, tool := range s.snapshot(t).Setup.Tools {
		names = append(names, tool.Name)
	}
	if !slices.Contains(names, "cmdb__extra") {
		t.Errorf("the page's tools %v, want cmdb__extra among them", names)
	}
}
