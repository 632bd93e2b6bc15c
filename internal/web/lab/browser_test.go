package lab

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/model"
	"github.com/hosteval/hosteval/internal/web/webtest"
)

// docsShot, when set, also saves the seed flow's page as the README's
// picture (docs/lab.png), as view's -docs-screenshot does for its own.
var docsShot = flag.Bool("docs-screenshot", false, "save the seed flow's page as docs/lab.png")

// do runs browser steps and stops the test on the first that fails.
func do(t testing.TB, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Steps(steps...)); err != nil {
		t.Fatal(err)
	}
}

// js evaluates an expression in the page.
func js[T any](t testing.TB, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// until waits for a JavaScript condition in the page. The deadline
// catches a page that never gets there, not a slow machine.
func until(t testing.TB, ctx context.Context, what, expr string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(2*time.Minute), chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		webtest.Screenshot(t, ctx, "failed")
		t.Fatalf("waited in vain for %s (%s): %v", what, expr, err)
	}
}

// loaded waits until the page shows the lab's state: lab.js marks
// <html data-loads> and fires lab:loaded once it has put a snapshot in the
// page (the tools of the manual panel, the conversation, the rows). A
// signal from the page, not a time: under load the snapshot may come long
// after the page's elements are visible, and a test that reads them
// before it reads an empty select.
func loaded() chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`new Promise(resolve => {
			if (document.documentElement.dataset.loads) resolve(true);
			else document.addEventListener("lab:loaded", () => resolve(true), {once: true});
		})`, chromedp.EvalAwaitPromise))
		return err
	})
}

// Expressions over the page.
const (
	rowsAsked    = `[...document.querySelectorAll("#calls tbody tr")].map(r => r.dataset.asked)`
	rowsOutcome  = `[...document.querySelectorAll("#calls tbody tr")].map(r => r.dataset.outcome)`
	itemCount    = `document.querySelectorAll("#items > [data-id]").length`
	pendingForm  = `.card.elicitation.pending`
	pendingApprv = `.card.approval.pending`
)

func answerHas(text string) string {
	return fmt.Sprintf(`[...document.querySelectorAll("[data-kind=answer] .text")].some(e => e.textContent.includes(%q))`, text)
}

// choose picks the option of a select by the text a person reads, as a
// click would, and tells the page it changed.
func choose(selector, text string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf(`(() => {
			const s = document.querySelector(%q);
			const o = s && [...s.options].find(o => o.textContent === %q);
			if (!o) return false;
			s.value = o.value;
			s.dispatchEvent(new Event("change", {bubbles: true}));
			return true;
		})()`, selector, text)))
		if err == nil && !ok {
			err = fmt.Errorf("no option %q in %s", text, selector)
		}
		return err
	})
}

// TestSeedFlowInChromium is the first seed text's lab, end to end in a real
// browser: a question, the approval of tickets__open_ticket, the form with
// its priority dropdown, the answer naming INC-4100 and a row per call;
// then the same declined; then a reload and a second tab, which show the
// one conversation, and where one tab answers for both.
func TestSeedFlowInChromium(t *testing.T) {
	var serverLog logLines
	s := startLab(t, Options{
		Host:  host.Options{Servers: []host.ServerSpec{fixture("cmdb"), fixture("tickets")}, ServerLog: &serverLog},
		Model: rulesModel(t, seedRules(t)), Title: "The host side",
		Suggestions: []string{"who owns jump-prod-02? Open a ticket for it"},
	})
	b := webtest.Browser(t)
	question := "who owns jump-prod-02? Open a ticket for it"
	ask := func(ctx context.Context) {
		t.Helper()
		do(t, ctx, chromedp.WaitEnabled(chromedp.CSS("#send")), chromedp.SendKeys(chromedp.CSS("#question"), question), chromedp.Click(chromedp.CSS("#send")))
	}
	do(t, b, chromedp.Navigate(s.url+"/"), loaded(), chromedp.WaitVisible(chromedp.CSS("#question")))
	if got := js[string](t, b, `document.querySelector("#suggestions button").textContent`); got != question {
		t.Errorf("suggestion = %q", got)
	}

	// Accepted: P1.
	ask(b)
	do(t, b, chromedp.WaitVisible(chromedp.CSS(pendingApprv+" button.approve")))
	if got := js[string](t, b, `document.querySelector(".card.approval.pending code.tool").textContent`); got != "tickets__open_ticket" {
		t.Errorf("the approval names %q, want tickets__open_ticket", got)
	}
	if n := serverLog.count(`"tool":"open_ticket"`); n != 0 {
		t.Fatalf("before Approve the tickets server saw %d open_ticket calls", n)
	}
	webtest.Screenshot(t, b, "approval")
	do(t, b, chromedp.Click(chromedp.CSS(pendingApprv+" button.approve")), chromedp.WaitVisible(chromedp.CSS(pendingForm+" select")))
	options := js[[]string](t, b, `[...document.querySelectorAll(".card.elicitation.pending select option")].map(o => o.textContent)`)
	if !slices.Equal(options, []string{"Choose…", "P1", "P2", "P3"}) {
		t.Errorf("the priority dropdown offers %q", options)
	}
	if got := js[string](t, b, `document.querySelector(".card.elicitation.pending h3 strong").textContent`); got != "tickets" {
		t.Errorf("the form says %q asks, want tickets", got)
	}
	if got := js[string](t, b, `document.querySelector(".card.elicitation.pending .message").textContent`); !strings.HasPrefix(got, "Open an incident ticket for jump-prod-02?") {
		t.Errorf("the form's message = %q", got)
	}
	serverLog.waitCount(t, 1, `"tool":"open_ticket"`) // the question, and nothing more until Accept
	webtest.Screenshot(t, b, "form")
	do(t, b, choose(pendingForm+" select", "P1"), chromedp.Click(chromedp.CSS(pendingForm+" button.accept")))
	until(t, b, "the answer naming INC-4100", answerHas("Opened INC-4100 (P1) for jump-prod-02."))
	until(t, b, "two rows", `document.querySelectorAll("#calls tbody tr").length === 2`)
	if got := js[[]string](t, b, rowsAsked); !slices.Equal(got, []string{"false", "true"}) {
		t.Errorf("asked_user by row = %q, want false then true", got)
	}
	if got := js[[]string](t, b, rowsOutcome); !slices.Equal(got, []string{"ok", "ok"}) {
		t.Errorf("outcomes = %q", got)
	}
	// The second row opens on the server's two records and the wire.
	do(t, b, chromedp.Click(chromedp.CSS(`#calls tbody tr:nth-child(2)`)), chromedp.WaitVisible(chromedp.CSS("#detail .server-lines")))
	if got := js[int](t, b, `document.querySelectorAll("#detail .server-lines li").length`); got != 2 {
		t.Errorf("the open call shows %d server records, want 2 (input_required, ok)", got)
	}
	if got := js[int](t, b, `document.querySelectorAll("#detail .wire li").length`); got != 4 {
		t.Errorf("the open call shows %d wire messages, want 4", got)
	}
	if got := js[string](t, b, `document.querySelector("#detail .sentence").textContent`); !strings.HasPrefix(got, "open_ticket on tickets answered: ") {
		t.Errorf("the open call says %q", got)
	}
	if got := js[string](t, b, `document.querySelector("#detail pre.args").textContent`); !strings.Contains(got, `"host": "jump-prod-02"`) {
		t.Errorf("the open call's arguments = %q", got)
	}
	webtest.Screenshot(t, b, "seed-flow")
	if *docsShot {
		// The whole page from its top: the conversation with the answered
		// form, and the side panel with the call open.
		js[bool](t, b, `window.scrollTo(0, 0) === undefined`)
		png, err := chromedp.Run(b, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("..", "..", "..", "docs", "lab.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// Declined: no ticket.
	ask(b)
	do(t, b, chromedp.WaitVisible(chromedp.CSS(pendingApprv+" button.approve")), chromedp.Click(chromedp.CSS(pendingApprv+" button.approve")),
		chromedp.WaitVisible(chromedp.CSS(pendingForm+" button.decline")), chromedp.Click(chromedp.CSS(pendingForm+" button.decline")))
	until(t, b, "the answer saying no ticket was opened", answerHas("No ticket was opened: the user declined"))
	until(t, b, "four rows", `document.querySelectorAll("#calls tbody tr").length === 4`)
	if got := js[[]string](t, b, rowsOutcome); got[3] != "tool_error" {
		t.Errorf("outcomes = %q, want the fourth a tool_error", got)
	}

	// A reload restores the conversation.
	items := js[int](t, b, itemCount)
	do(t, b, chromedp.Reload(), loaded(), chromedp.WaitVisible(chromedp.CSS("#question")))
	until(t, b, "the rows again", `document.querySelectorAll("#calls tbody tr").length === 4`)
	if got := js[int](t, b, itemCount); got != items {
		t.Errorf("after a reload the conversation has %d items, want %d", got, items)
	}

	// A second tab sees the same conversation; the person answers in
	// either, and the other shows the answer.
	tab, closeTab := chromedp.NewContext(b)
	defer closeTab()
	do(t, tab, chromedp.Navigate(s.url+"/"), loaded(), chromedp.WaitVisible(chromedp.CSS("#question")))
	until(t, tab, "the rows in the second tab", `document.querySelectorAll("#calls tbody tr").length === 4`)
	if got := js[int](t, tab, itemCount); got != items {
		t.Errorf("the second tab shows %d items, want %d", got, items)
	}
	ask(b)
	do(t, tab, chromedp.WaitVisible(chromedp.CSS(pendingApprv+" button.approve")), chromedp.Click(chromedp.CSS(pendingApprv+" button.approve")))
	do(t, b, chromedp.WaitVisible(chromedp.CSS(".card.approval.approved")), chromedp.WaitVisible(chromedp.CSS(pendingForm+" button.cancel")),
		chromedp.Click(chromedp.CSS(pendingForm+" button.cancel")))
	do(t, tab, chromedp.WaitVisible(chromedp.CSS(".card.elicitation.cancel")))
	until(t, tab, "the answer in the second tab", answerHas("No ticket was opened: the user closed the form"))
	if got := js[int](t, b, `document.querySelectorAll(".card.pending").length`); got != 0 {
		t.Errorf("%d questions still open in the first tab", got)
	}

	// One ticket: the declined and the cancelled ones were never opened.
	_, list := s.h.Check(context.Background(), host.CallRequest{Name: "tickets__list_tickets", Arguments: "{}", TraceID: host.NewID(), Step: 1})
	if !strings.Contains(list.Result, `"total":1`) {
		t.Errorf("tickets at the end: %s, want only INC-4100", list.Result)
	}
}

// TestManualPanelInChromium: with no model, the person calls
// cmdb__get_asset from the form generated from its input schema, then
// sends raw JSON the host refuses; rows and results work as for a model.
func TestManualPanelInChromium(t *testing.T) {
	s := startLab(t, Options{Host: host.Options{Servers: []host.ServerSpec{fixture("cmdb"), fixture("tickets")}}})
	b := webtest.Browser(t)
	// The options come with the session's first state, after the page
	// shows the select: the page says when it has put them in.
	do(t, b, chromedp.Navigate(s.url+"/"), loaded(), chromedp.WaitVisible(chromedp.CSS("#tool")))
	tools := js[[]string](t, b, `[...document.querySelectorAll("#tool option")].map(o => o.value)`)
	if !slices.Equal(tools, []string{"cmdb__find_assets", "cmdb__get_asset", "tickets__list_tickets", "tickets__open_ticket"}) {
		t.Errorf("the panel offers %q", tools)
	}
	do(t, b, choose("#tool", "cmdb__get_asset"), chromedp.WaitVisible(chromedp.CSS(`#tool-form input[name="hostname"]`)))
	if got := js[string](t, b, `document.querySelector("#tool-description").textContent`); !strings.Contains(got, "Look up one host in the CMDB") {
		t.Errorf("description = %q", got)
	}
	do(t, b, chromedp.SendKeys(chromedp.CSS(`#tool-form input[name="hostname"]`), "jump-prod-02"), chromedp.Click(chromedp.CSS("#call")))
	until(t, b, "the result", `[...document.querySelectorAll("[data-kind=result] pre.result")].some(e => e.textContent.includes('"owner": "Camille Michel"'))`)
	if got := js[string](t, b, `document.querySelector("[data-kind=result] .sentence").textContent`); !strings.HasPrefix(got, "get_asset on cmdb answered: ") {
		t.Errorf("sentence = %q", got)
	}
	until(t, b, "the row", `document.querySelectorAll("#calls tbody tr").length === 1`)
	if got := js[[]string](t, b, rowsOutcome); !slices.Equal(got, []string{"ok"}) {
		t.Errorf("outcomes = %q", got)
	}
	webtest.Screenshot(t, b, "manual")

	// Raw JSON: the host's checks, as for a model.
	do(t, b, chromedp.Click(chromedp.CSS("#raw-toggle")), chromedp.WaitVisible(chromedp.CSS("#tool-json")))
	if got := js[string](t, b, `document.querySelector("#tool-json").value`); !strings.Contains(got, `"hostname": "jump-prod-02"`) {
		t.Errorf("raw JSON starts from the form: %q", got)
	}
	do(t, b, chromedp.SetValue(chromedp.CSS("#tool-json"), `{"hostname": `), chromedp.WaitEnabled(chromedp.CSS("#call")), chromedp.Click(chromedp.CSS("#call")))
	until(t, b, "the refusal", `document.querySelectorAll("#calls tbody tr").length === 2`)
	if got := js[[]string](t, b, rowsOutcome); got[1] != "bad_arguments" {
		t.Errorf("outcomes = %q, want bad_arguments second", got)
	}
	until(t, b, "the sentence", `[...document.querySelectorAll("[data-kind=result] .sentence")].some(e => e.textContent === "Nothing was sent: the arguments were not valid JSON.")`)
}

// formServer is an in-process server whose survey tool asks with every
// kind of field a form may have, then echoes the answer, and whose
// sign_in tool asks the person to open a web page.
func formServer(t testing.TB) host.ServerSpec {
	srv := mcp.NewServer(&mcp.Implementation{Name: "forms", Version: "1"}, nil)
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true}
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"team": map[string]any{"type": "string", "title": "Team", "oneOf": []any{
				map[string]any{"const": "sec", "title": "Security"}, map[string]any{"const": "ops", "title": "Operations"}}},
			"tags":   map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": []any{"vpn", "ssh", "web"}}, "minItems": 1, "default": []any{"ssh"}},
			"name":   map[string]any{"type": "string", "minLength": 2, "maxLength": 20, "pattern": "^[A-Z]", "default": "Ada"},
			"email":  map[string]any{"type": "string", "format": "email"},
			"day":    map[string]any{"type": "string", "format": "date"},
			"hours":  map[string]any{"type": "integer", "minimum": 1, "maximum": 24, "default": 4},
			"notify": map[string]any{"type": "boolean", "default": true},
		},
		"required": []any{"team", "tags", "name"},
	}
	srv.AddTool(&mcp.Tool{Name: "survey", Description: "Ask every kind of question.", Annotations: readOnly,
		InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if a, ok := req.Params.InputResponses["survey"].(*mcp.ElicitResult); ok {
			data, _ := json.Marshal(map[string]any{"action": a.Action, "content": a.Content})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(data)}}}, nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"survey": &mcp.ElicitParams{
			Mode: "form", Message: "A few questions, please.", RequestedSchema: schema}}, RequestState: "asked"}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "sign_in", Description: "Ask the person to sign in on a web page.", Annotations: readOnly,
		InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if _, ok := req.Params.InputResponses["login"]; ok {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "not signed in"}}, IsError: true}, nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"login": &mcp.ElicitParams{
			Mode: "url", Message: "Sign in", URL: "https://login.example/<b>x</b>", ElicitationID: "e1"}}, RequestState: "asked"}, nil
	})
	return host.ServerSpec{Name: "forms", Transport: func(ctx context.Context) (mcp.Transport, error) {
		clientEnd, serverEnd := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(ctx, serverEnd, nil)
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { ss.Close() })
		return clientEnd, nil
	}}
}

// TestFormsFromSchemasInChromium renders a server's form with every kind
// of field, keeps an answer the form does not allow in the page, and sends
// one that fits; a url-mode request is shown and declined.
func TestFormsFromSchemasInChromium(t *testing.T) {
	s := startLab(t, Options{Host: host.Options{Servers: []host.ServerSpec{formServer(t)}}})
	b := webtest.Browser(t)
	do(t, b, chromedp.Navigate(s.url+"/"), loaded(), chromedp.WaitVisible(chromedp.CSS("#tool")),
		choose("#tool", "forms__survey"), chromedp.Click(chromedp.CSS("#call")), chromedp.WaitVisible(chromedp.CSS(pendingForm+" form")))
	field := func(name string) string {
		return fmt.Sprintf(`document.querySelector('%s [data-field=%q]')`, pendingForm, name)
	}
	checks := []struct{ what, expr, want string }{
		{"titled choices are a dropdown", field("team") + `.querySelector("select").textContent`, "Choose…SecurityOperations"},
		{"the title labels the field", field("team") + `.querySelector("label").textContent`, "Team *"},
		{"a multi-select is boxes, the default ticked", field("tags") + `.querySelectorAll("input:checked").length + "/" + ` + field("tags") + `.querySelectorAll("input").length`, "1/3"},
		{"a string's default is filled in", field("name") + `.querySelector("input").value`, "Ada"},
		{"email", field("email") + `.querySelector("input").type`, "email"},
		{"date", field("day") + `.querySelector("input").type`, "date"},
		{"integer bounds", field("hours") + `.querySelector("input").min + "-" + ` + field("hours") + `.querySelector("input").max + " step " + ` + field("hours") + `.querySelector("input").step`, "1-24 step 1"},
		{"an integer's default", field("hours") + `.querySelector("input").value`, "4"},
		{"a boolean is a checkbox, its default ticked", field("notify") + `.querySelector("input").type + " " + ` + field("notify") + `.querySelector("input").checked`, "checkbox true"},
	}
	for _, c := range checks {
		if got := js[string](t, b, c.expr); got != c.want {
			t.Errorf("%s: %q, want %q", c.what, got, c.want)
		}
	}
	webtest.Screenshot(t, b, "survey")
	// The team is not chosen and the name breaks its pattern: the page
	// keeps the answer.
	do(t, b, chromedp.SetValue(chromedp.CSS(pendingForm+` [data-field="name"] input`), "ada"), chromedp.Click(chromedp.CSS(pendingForm+" button.accept")))
	if got := js[bool](t, b, `document.querySelector(".card.elicitation.pending") !== null`); !got {
		t.Fatal("an answer the form does not allow left the page")
	}
	if got := js[bool](t, b, field("team")+`.querySelector("select").validity.valid`); got {
		t.Error("the unchosen required dropdown is valid")
	}
	do(t, b, choose(pendingForm+` [data-field="team"] select`, "Security"),
		chromedp.SetValue(chromedp.CSS(pendingForm+` [data-field="name"] input`), "Ada Lovelace"),
		chromedp.SetValue(chromedp.CSS(pendingForm+` [data-field="hours"] input`), "8"),
		chromedp.Click(chromedp.CSS(pendingForm+` [data-field="tags"] label:nth-of-type(1) input`)),
		chromedp.Click(chromedp.CSS(pendingForm+" button.accept")))
	until(t, b, "the echo", `document.querySelector("[data-kind=result] pre.result") !== null`)
	var echo struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	if err := json.Unmarshal([]byte(js[string](t, b, `document.querySelector("[data-kind=result] pre.result").textContent`)), &echo); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"team": "sec", "tags": []any{"vpn", "ssh"}, "name": "Ada Lovelace", "hours": 8.0, "notify": true}
	if echo.Action != "accept" || fmt.Sprint(echo.Content) != fmt.Sprint(want) {
		t.Errorf("the server got %s %v, want accept %v", echo.Action, echo.Content, want)
	}

	// A web page instead of a form: shown, declined, never a link.
	do(t, b, choose("#tool", "forms__sign_in"), chromedp.Click(chromedp.CSS("#call")), chromedp.WaitVisible(chromedp.CSS(".step.url-mode")))
	if got := js[string](t, b, `document.querySelector(".step.url-mode code").textContent`); got != "https://login.example/<b>x</b>" {
		t.Errorf("the url shown = %q", got)
	}
	if got := js[int](t, b, `document.querySelectorAll("main a[href*='login.example'], main b").length`); got != 0 {
		t.Errorf("the url became %d elements", got)
	}
}

// hostile is what a model or a server may put in any string the lab shows.
const hostile = `<script>window.pwned = 1</script>"><img src=x onerror="window.pwned=2">`

// TestHostileStringsInChromium: a model's question, call names, arguments
// and answer, and a server's question built from them, show as text and
// run nothing.
func TestHostileStringsInChromium(t *testing.T) {
	args, _ := json.Marshal(map[string]string{"host": hostile, "summary": hostile})
	raw := string(args)
	m, err := model.NewScripted([]model.ScriptStep{
		{Call: "tickets__open_ticket", RawArgs: &raw},
		{Call: "x", RawArgs: &raw},
		{Answer: hostile},
	})
	if err != nil {
		t.Fatal(err)
	}
	// The unknown name is the hostile string itself.
	m2 := renamed{Model: m, from: "x", to: hostile}
	s := startLab(t, Options{Host: host.Options{Servers: []host.ServerSpec{fixture("tickets")}}, Model: m2, Title: hostile})
	b := webtest.Browser(t)
	do(t, b, chromedp.Navigate(s.url+"/"), loaded(), chromedp.WaitVisible(chromedp.CSS("#question")),
		chromedp.SendKeys(chromedp.CSS("#question"), hostile), chromedp.Click(chromedp.CSS("#send")),
		chromedp.WaitVisible(chromedp.CSS(pendingApprv+" button.approve")), chromedp.Click(chromedp.CSS(pendingApprv+" button.approve")),
		chromedp.WaitVisible(chromedp.CSS(pendingForm+" select")), choose(pendingForm+" select", "P2"),
		chromedp.Click(chromedp.CSS(pendingForm+" button.accept")))
	until(t, b, "the answer", `document.querySelector("[data-kind=answer]") !== null`)
	until(t, b, "two rows", `document.querySelectorAll("#calls tbody tr").length === 2`)
	do(t, b, chromedp.Click(chromedp.CSS(`#calls tbody tr:nth-child(1)`)), chromedp.WaitVisible(chromedp.CSS("#detail .server-lines")))
	webtest.Screenshot(t, b, "hostile")
	checks := []struct{ what, expr string }{
		{"the title", `document.querySelector("#title").textContent`},
		{"the question", `document.querySelector("[data-kind=user] .text").textContent`},
		{"the answer", `document.querySelector("[data-kind=answer] .text").textContent`},
		{"the unknown tool's row", `document.querySelector("#calls tbody tr:nth-child(2) td.tool code").textContent`},
	}
	for _, c := range checks {
		if got := js[string](t, b, c.expr); got != hostile {
			t.Errorf("%s shows %q, want the hostile string as text", c.what, got)
		}
	}
	if got := js[string](t, b, `document.querySelector(".card.elicitation .message").textContent`); !strings.Contains(got, hostile) {
		t.Errorf("the server's question shows %q, want the hostile host as text", got)
	}
	if n := js[int](t, b, `document.querySelectorAll("main img, main script").length`); n != 0 {
		t.Errorf("hostile markup made %d elements", n)
	}
	if got := js[string](t, b, `String(window.pwned)`); got != "undefined" {
		t.Errorf("window.pwned = %s: a hostile string ran", got)
	}
	if got := js[string](t, b, `document.title`); got != hostile+" · hosteval lab" {
		t.Errorf("document.title = %q", got)
	}
}

// renamed is a model whose calls named from are named to: a tool name no
// script can write.
type renamed struct {
	model.Model
	from, to string
}

func (r renamed) Next(ctx context.Context, req model.Request) (model.Response, error) {
	resp, err := r.Model.Next(ctx, req)
	for i := range resp.ToolCalls {
		if resp.ToolCalls[i].Name == r.from {
			resp.ToolCalls[i].Name = r.to
		}
	}
	return resp, err
}

// Expressions over the page's layout.
const (
	// overflow is how far the page is wider than the window (0 when it
	// fits).
	overflow = `Math.max(0, document.documentElement.scrollWidth - window.innerWidth)`
	// inView says whether the element is within the window, whole or (when
	// taller than the window) from its top.
	inViewFn = `(sel => { const e = document.querySelector(sel); if (!e) return false; const r = e.getBoundingClientRect();
		return r.top >= 0 && r.left >= 0 && r.right <= window.innerWidth && (r.bottom <= window.innerHeight || r.top < window.innerHeight / 2); })`
)

// TestLabAtWindowSizesInChromium: at 1,400, 1,000 and 600 px the page is
// never wider than the window, also with a long conversation and long log
// lines; the pending approval and form are in view without scrolling and
// have the focus; and side by side (1,400) the calls and logs stay in
// view while the conversation scrolls.
func TestLabAtWindowSizesInChromium(t *testing.T) {
	question := "who owns jump-prod-02? Open a ticket for it"
	for _, width := range []int64{1400, 1000, 600} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			s := startLab(t, Options{
				Host:  host.Options{Servers: []host.ServerSpec{fixture("cmdb"), fixture("tickets")}},
				Model: rulesModel(t, seedRules(t)), Title: "The host side",
			})
			b := webtest.Browser(t)
			do(t, b, chromedp.EmulateViewport(width, 800), chromedp.Navigate(s.url+"/"), loaded(), chromedp.WaitVisible(chromedp.CSS("#question")))
			ask := func() {
				t.Helper()
				do(t, b, chromedp.WaitEnabled(chromedp.CSS("#send")), chromedp.SendKeys(chromedp.CSS("#question"), question), chromedp.Click(chromedp.CSS("#send")))
			}
			// A long conversation first: three turns, each answered no.
			for i := range 3 {
				ask()
				do(t, b, chromedp.WaitVisible(chromedp.CSS(pendingApprv+" button.deny")), chromedp.Click(chromedp.CSS(pendingApprv+" button.deny")))
				until(t, b, fmt.Sprintf("answer %d", i+1), fmt.Sprintf(`document.querySelectorAll("[data-kind=answer]").length === %d`, i+1))
			}
			until(t, b, "the logs", `document.querySelectorAll("#logs li").length > 10`)
			if got := js[float64](t, b, overflow); got > 0 {
				webtest.Screenshot(t, b, "overflow")
				t.Errorf("after three turns the page is %v px wider than the window", got)
			}

			// The approval: in view without scrolling, its button focused.
			js[bool](t, b, `window.scrollTo(0, 0) === undefined`)
			ask()
			do(t, b, chromedp.WaitVisible(chromedp.CSS(pendingApprv+" button.approve")))
			until(t, b, "the approval in view", inViewFn+`(".card.approval.pending")`)
			if got := js[string](t, b, `document.activeElement && document.activeElement.className`); !strings.Contains(got, "approve") {
				t.Errorf("the focus is on %q, want the Approve button", got)
			}
			if got := js[float64](t, b, overflow); got > 0 {
				t.Errorf("with the approval pending the page is %v px wider than the window", got)
			}
			webtest.Screenshot(t, b, "approval")

			// The form: in view, its first field focused.
			do(t, b, chromedp.Click(chromedp.CSS(pendingApprv+" button.approve")), chromedp.WaitVisible(chromedp.CSS(pendingForm+" select")))
			until(t, b, "the form in view", inViewFn+`(".card.elicitation.pending")`)
			until(t, b, "the form's field focused", `document.activeElement === document.querySelector(".card.elicitation.pending select")`)
			if got := js[float64](t, b, overflow); got > 0 {
				t.Errorf("with the form pending the page is %v px wider than the window", got)
			}
			webtest.Screenshot(t, b, "form")
			do(t, b, choose(pendingForm+" select", "P1"), chromedp.Click(chromedp.CSS(pendingForm+" button.accept")))
			until(t, b, "the answer naming INC-4100", answerHas("Opened INC-4100 (P1) for jump-prod-02."))

			// A log row opened: its record as JSON, still within the window.
			do(t, b, chromedp.Click(chromedp.CSS("#logs li:last-child")))
			until(t, b, "the record shown", `getComputedStyle(document.querySelector("#logs li:last-child pre.json")).display !== "none"`)
			if got := js[float64](t, b, overflow); got > 0 {
				t.Errorf("with a log record open the page is %v px wider than the window", got)
			}
			if got := js[string](t, b, `document.querySelector("#logs li:last-child .time").textContent`); !regexp.MustCompile(`^\d\d:\d\d:\d\d`).MatchString(got) {
				t.Errorf("a log row's time = %q, want hh:mm:ss", got)
			}

			if width == 1400 {
				// Side by side: scrolled to the end of the conversation, the
				// calls' heading is still in view.
				js[bool](t, b, `window.scrollTo(0, document.documentElement.scrollHeight) === undefined`)
				until(t, b, "the calls in view", inViewFn+`(".side h2")`)
			}
			webtest.Screenshot(t, b, "end")
		})
	}
}
