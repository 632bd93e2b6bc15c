package host

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The person's side of the host. Servers' questions go to an Elicitor and
// proposed effects to an Approver; both stand for a person (a terminal, a
// scenario's canned answers, a UI) and neither ever sees the model. The
// model's output has no path to either: the host builds every request here
// from what the server sent, and every answer from what the person gave.

// ElicitRequest is one question a server asks the person.
type ElicitRequest struct {
	// Server is the name of the server that asks: the person must know who
	// is asking before answering.
	Server string
	// Tool is the tool whose call made the server ask ("" when unknown).
	Tool string
	// Key is the input request's key in a 2026-07-28 input_required result
	// ("" for a 2025-11-25 elicitation/create request).
	Key     string
	Mode    string // "form" or "url"
	Message string
	// Schema is the requested schema of a form: flat, primitive properties.
	Schema map[string]any
	URL    string
}

// Elicitation actions.
const (
	ActionAccept  = "accept"
	ActionDecline = "decline"
	ActionCancel  = "cancel"
)

// ElicitAnswer is the person's answer.
type ElicitAnswer struct {
	Action  string
	Content map[string]any
	// Rule names the prepared answer that gave it (a scenario's canned
	// answer); empty when a person answered.
	Rule string
}

// ErrNoAnswer is returned by an Elicitor or Approver that has no answer for
// a request (a scenario without a matching canned answer). The host treats it
// as no, and counts it.
var ErrNoAnswer = errors.New("no answer for this request")

// Elicitor puts a server's question to the person.
type Elicitor interface {
	Elicit(ctx context.Context, req ElicitRequest) (ElicitAnswer, error)
}

// ApprovalRequest asks the person whether a proposed call may run.
type ApprovalRequest struct {
	Server    string
	Tool      string // the server's own name for the tool
	Name      string // the namespaced name the model used
	Arguments map[string]any
	// Annotations are the server's hints about the tool (may be nil).
	Annotations *mcp.ToolAnnotations
}

// Approver decides whether a call that is not on its server's auto-run
// list may run. Anything but a clear yes is no.
type Approver interface {
	Approve(ctx context.Context, req ApprovalRequest) (bool, error)
}

// DeclineAll declines every question: the default Elicitor.
type DeclineAll struct{}

func (DeclineAll) Elicit(context.Context, ElicitRequest) (ElicitAnswer, error) {
	return ElicitAnswer{Action: ActionDecline}, nil
}

// DenyAll approves nothing: the default Approver.
type DenyAll struct{}

func (DenyAll) Approve(context.Context, ApprovalRequest) (bool, error) { return false, nil }

// CannedAnswer is one prepared answer to a server's question. Empty fields
// match anything; the first answer that matches is used.
type CannedAnswer struct {
	Server  string
	Message *regexp.Regexp
	Key     string
	Action  string
	Content map[string]any
	// Rule says where the answer was written ("file:line"), so that a
	// transcript names the answer that was given.
	Rule string
}

// Canned answers questions from prepared answers, as a scenario gives them.
// A question that no answer matches gets ErrNoAnswer, so the host declines
// it and counts it.
type Canned struct {
	Answers []CannedAnswer
}

func (c Canned) Elicit(_ context.Context, req ElicitRequest) (ElicitAnswer, error) {
	for i, a := range c.Answers {
		if a.Server != "" && a.Server != req.Server {
			continue
		}
		if a.Key != "" && a.Key != req.Key {
			continue
		}
		if a.Message != nil && !a.Message.MatchString(req.Message) {
			continue
		}
		return ElicitAnswer{Action: a.Action, Content: maps.Clone(a.Content), Rule: cmp.Or(a.Rule, "elicitation["+strconv.Itoa(i)+"]")}, nil
	}
	return ElicitAnswer{}, ErrNoAnswer
}

// CannedApprovals approves the namespaced tools it lists and denies the rest.
// Names may end in "*" to approve every tool with that prefix.
type CannedApprovals struct {
	Tools []string
	// Rules say where each of Tools was written ("file:line"), for the
	// transcript; optional.
	Rules []string
}

// Approve implements Approver.
func (c CannedApprovals) Approve(_ context.Context, req ApprovalRequest) (bool, error) {
	if c.match(req) < 0 {
		return false, ErrNoAnswer
	}
	return true, nil
}

// Rule names the entry that approves req: its Rules entry, else
// "approvals[i]"; "" when none does.
func (c CannedApprovals) Rule(req ApprovalRequest) string {
	i := c.match(req)
	switch {
	case i < 0:
		return ""
	case i < len(c.Rules) && c.Rules[i] != "":
		return c.Rules[i]
	}
	return "approvals[" + strconv.Itoa(i) + "]"
}

// match is the index of the first of Tools that names req's tool, or -1.
func (c CannedApprovals) match(req ApprovalRequest) int {
	for i, name := range c.Tools {
		if name == req.Name || (strings.HasSuffix(name, "*") && strings.HasPrefix(req.Name, strings.TrimSuffix(name, "*"))) {
			return i
		}
	}
	return -1
}

// Terminal asks the person at a terminal. It shows which server asks, the
// message and each field with its type, choices and default; anything but
// "y" declines. One question at a time. When a question's context ends (the
// call ended, the person's budget ran out) it stops asking at once and
// takes no more lines.
type Terminal struct {
	mu  sync.Mutex
	in  *Lines
	out io.Writer
}

// NewTerminal returns a Terminal reading answers from in and writing
// questions to out. It does not own in: whoever reads the same input (a
// chat's prompt) reads it through the same Lines.
func NewTerminal(in *Lines, out io.Writer) *Terminal {
	return &Terminal{in: in, out: out}
}

// readLine prompts and reads one line. It fails at the end of the input,
// and when ctx ends.
func (t *Terminal) readLine(ctx context.Context, prompt string) (string, error) {
	fmt.Fprint(t.out, prompt)
	line, err := t.in.Next(ctx)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(t.out, "(withdrawn)")
		} else {
			fmt.Fprintln(t.out)
		}
		return "", err
	}
	return strings.TrimSpace(line), nil
}

// Elicit implements Elicitor.
func (t *Terminal) Elicit(ctx context.Context, req ElicitRequest) (ElicitAnswer, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.out, "\n[%s asks] %s\n", req.Server, req.Message)
	if req.Mode == "url" {
		fmt.Fprintf(t.out, "  (a web page, %s: not a form; declining)\n", req.URL)
		return ElicitAnswer{Action: ActionDecline}, nil
	}
	fields := formFields(req.Schema)
	for _, f := range fields {
		fmt.Fprintf(t.out, "  %s\n", f.describe())
	}
	reply, err := t.readLine(ctx, "  Accept? [y/N] ")
	if ctx.Err() != nil {
		return ElicitAnswer{Action: ActionCancel}, ctx.Err()
	}
	if err != nil || !isYes(reply) {
		return ElicitAnswer{Action: ActionDecline}, nil
	}
	content := map[string]any{}
	for _, f := range fields {
		for {
			text, err := t.readLine(ctx, fmt.Sprintf("  %s: ", f.name))
			if ctx.Err() != nil {
				return ElicitAnswer{Action: ActionCancel}, ctx.Err()
			}
			if err != nil {
				return ElicitAnswer{Action: ActionCancel}, nil
			}
			if text == "" {
				if f.def != nil || !f.required {
					break // the host fills defaults before answering
				}
				fmt.Fprintf(t.out, "  %s is required\n", f.name)
				continue
			}
			v, err := f.parse(text)
			if err != nil {
				fmt.Fprintf(t.out, "  %v\n", err)
				continue
			}
			content[f.name] = v
			break
		}
	}
	return ElicitAnswer{Action: ActionAccept, Content: content}, nil
}

// Approve implements Approver.
func (t *Terminal) Approve(ctx context.Context, req ApprovalRequest) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	args, _ := json.Marshal(req.Arguments)
	what := "it is not read-only"
	if a := req.Annotations; a != nil && a.DestructiveHint != nil && *a.DestructiveHint {
		what = "it may destroy data"
	}
	fmt.Fprintf(t.out, "\n[host] %s wants to run %s %s: %s.\n", req.Server, req.Tool, args, what)
	reply, err := t.readLine(ctx, "  Run it? [y/N] ")
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	return err == nil && isYes(reply), nil
}

func isYes(s string) bool {
	s = strings.ToLower(strings.TrimSpace(s))
	return s == "y" || s == "yes"
}

type formField struct {
	name, typ, description string
	spec                   map[string]any
	choices                []Choice
	def                    any
	required               bool
}

func (f formField) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s", f.name, f.typ)
	if f.required {
		b.WriteString(", required")
	}
	if len(f.choices) > 0 {
		choices := make([]string, len(f.choices))
		for i, c := range f.choices {
			choices[i] = fmt.Sprint(c.Value)
			if c.Title != choices[i] {
				choices[i] += " (" + c.Title + ")"
			}
		}
		what := "one of"
		if f.typ == "array" {
			what = "any of, comma-separated:"
		}
		fmt.Fprintf(&b, ", %s %s", what, strings.Join(choices, ", "))
	}
	if f.def != nil {
		fmt.Fprintf(&b, ", default %v", f.def)
	}
	b.WriteString(")")
	if f.description != "" {
		b.WriteString(": " + f.description)
	}
	return b.String()
}

func (f formField) parse(text string) (any, error) {
	var v any = text
	switch f.typ {
	case "integer":
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s must be a whole number", f.name)
		}
		v = n
	case "number":
		n, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return nil, fmt.Errorf("%s must be a number", f.name)
		}
		v = n
	case "boolean":
		switch strings.ToLower(text) {
		case "y", "yes", "true":
			v = true
		case "n", "no", "false":
			v = false
		default:
			return nil, fmt.Errorf("%s must be yes or no", f.name)
		}
	case "array":
		var list []any
		for part := range strings.SplitSeq(text, ",") {
			if part = strings.TrimSpace(part); part != "" {
				list = append(list, f.choiceValue(part))
			}
		}
		v = list
	default:
		if len(f.choices) > 0 {
			if !slices.ContainsFunc(f.choices, func(c Choice) bool { return fmt.Sprint(c.Value) == text }) {
				return nil, fmt.Errorf("%s must be one of the choices", f.name)
			}
			v = f.choiceValue(text)
		}
	}
	// The same check the host makes before it answers (schema_answer.go),
	// so that the person can correct a value rather than see the form declined.
	if msg := checkValue(f.spec, v); msg != "" {
		return nil, fmt.Errorf("%s %s", f.name, msg)
	}
	return v, nil
}

// choiceValue returns the choice written as text, with its own type.
func (f formField) choiceValue(text string) any {
	for _, c := range f.choices {
		if fmt.Sprint(c.Value) == text {
			return c.Value
		}
	}
	return text
}

// formFields lists a form schema's properties in a stable order.
func formFields(schema map[string]any) []formField {
	props, _ := schema["properties"].(map[string]any)
	required := map[string]bool{}
	if req, ok := schema["required"].([]any); ok {
		for _, r := range req {
			if s, ok := r.(string); ok {
				required[s] = true
			}
		}
	}
	var fields []formField
	for name, p := range props {
		spec, _ := p.(map[string]any)
		f := formField{name: name, spec: spec, required: required[name], def: spec["default"], choices: Choices(spec)}
		f.typ, _ = spec["type"].(string)
		f.description, _ = spec["description"].(string)
		if f.description == "" {
			f.description, _ = spec["title"].(string)
		}
		fields = append(fields, f)
	}
	sort.Slice(fields, func(i, j int) bool {
		if fields[i].required != fields[j].required {
			return fields[i].required
		}
		return fields[i].name < fields[j].name
	})
	return fields
}
