package scenario

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hosteval/hosteval/internal/record"
)

// The scenario's own costs on the 100-call job of `make bench-peers`:
// loading its file (100 scripted steps) and checking a finished case of
// 100 calls against expectations on them.

// echoScenario is the job's scenario, with tool expectations besides its
// counts, as a suite checking each call's arguments would have them.
func echoScenario(n int) string {
	var s strings.Builder
	fmt.Fprintf(&s, "name: echo\nservers: [{name: everything, command: everything}]\nhost: {max_steps: %d}\nmodel:\n  scripted:\n", n+1)
	for range n {
		s.WriteString("    - call: \"everything__echo {message: hello}\"\n")
	}
	fmt.Fprintf(&s, "    - answer: done\nquestion: echo\nexpect:\n  - {steps: %d, tool_errors: 0}\n", n)
	s.WriteString("  - {tool: everything__echo, outcome: ok}\n")
	s.WriteString("  - {tool: everything__echo, args: {message: hello}}\n")
	s.WriteString("  - {tool: everything__echo, nth: 100, args_exact: {message: hello}}\n")
	s.WriteString("  - {tool: everything__echo, count: 100}\n")
	s.WriteString("  - {tool: everything__add, called: false}\n")
	s.WriteString("  - {order: [everything__echo, everything__echo]}\n")
	return s.String()
}

func echoRecord(n int) *record.Record {
	rec := &record.Record{Turns: []record.Turn{{Question: "echo", Answer: "done", Steps: n}}}
	for i := range n {
		rec.Calls = append(rec.Calls, record.Call{
			Operation: record.OpToolCall, Step: i + 1, Name: "everything__echo", Server: "everything", Tool: "echo",
			ArgKeys: []string{"message"}, Arguments: map[string]any{"message": "hello"}, Outcome: record.OutcomeOK,
			Approval: "auto", Rounds: 1, Result: "Echo: hello", ResultBytes: 11,
		})
	}
	return rec
}

func writeEcho(b *testing.B, n int) string {
	p := filepath.Join(b.TempDir(), "echo.yaml")
	if err := os.WriteFile(p, []byte(echoScenario(n)), 0o644); err != nil {
		b.Fatal(err)
	}
	return p
}

func BenchmarkLoadEcho100(b *testing.B) {
	b.Setenv("HOSTEVAL_MODEL", "")
	p := writeEcho(b, 100)
	for b.Loop() {
		if _, err := Load(p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEvaluateEcho100(b *testing.B) {
	s, err := Load(writeEcho(b, 100))
	if err != nil {
		b.Fatal(err)
	}
	cases, err := s.Cases(CaseOptions{})
	if err != nil {
		b.Fatal(err)
	}
	rec := echoRecord(100)
	for b.Loop() {
		for _, e := range Evaluate(cases[0], rec) {
			if !e.Passed {
				b.Fatalf("%s: %s", e.Name, e.Detail)
			}
		}
	}
}

// TestEvaluateEcho100 holds the benchmark's expectations to their
// verdicts: all pass on the job's record, and the one on the 100th call
// sees that call's arguments change.
func TestEvaluateEcho100(t *testing.T) {
	testEnv(t)
	c, err := loadText(t, echoScenario(100)).Cases(CaseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	verdicts := func(rec *record.Record) string {
		var got []string
		for _, e := range Evaluate(c[0], rec) {
			got = append(got, fmt.Sprintf("%t %s", e.Passed, e.Detail))
		}
		return strings.Join(got, "|")
	}
	rec := echoRecord(100)
	if got, want := verdicts(rec), "true |true |true |true |true |true |true "; got != want {
		t.Errorf("Evaluate = %q, want %q", got, want)
	}
	rec.Calls[99].Arguments = map[string]any{"message": json.Number("7")}
	want := `true |true |true |false call of everything__echo: #100 outcome=ok approval=auto args={"message":7}|true |true |true `
	if got := verdicts(rec); got != want {
		t.Errorf("Evaluate with call 100 changed = %q, want %q", got, want)
	}
}
