package main

import (
	"context"
	"flag"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hosteval/hosteval/internal/budget"
	"github.com/hosteval/hosteval/internal/host"
)

func TestParseModelFlag(t *testing.T) {
	tests := []struct {
		name    string
		flag    string
		baseURL string
		want    string // the spec's name and base URL, or the error
	}{
		{"from env", "openai:gpt-oss-120b", "http://localhost:8000/v1", "openai:gpt-oss-120b http://localhost:8000/v1"},
		{"default endpoint", "openai:gpt-4.1-mini", "", "openai:gpt-4.1-mini "},
		{"not openai", "scripted", "", `model "scripted": want openai:<model> (e.g. openai:gpt-oss-120b) or lexical[:<min_score>]`},
		{"no model", "openai:", "", `model "openai:": want openai:<model> (e.g. openai:gpt-oss-120b) or lexical[:<min_score>]`},
		{"lexical", "lexical", "", "lexical 0"},
		{"lexical with a threshold", "lexical:2.5", "", "lexical 2.5"},
		{"lexical with a bad threshold", "lexical:high", "", `model "lexical:high": want lexical or lexical:<min_score>, e.g. lexical:2.5`},
		{"lexical with a negative threshold", "lexical:-1", "", `model "lexical:-1": lexical.min_score: want 0 or more, got -1`},
		{"bad endpoint", "openai:m", "localhost:8000", `model "openai:m": openai.base_url: "localhost:8000" is not an http or https URL`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string {
				if k == "OPENAI_BASE_URL" {
					return tt.baseURL
				}
				return ""
			}
			spec, err := parseModelFlag(tt.flag, getenv)
			got := ""
			if err != nil {
				got = err.Error()
			} else if spec.Lexical != nil {
				got = spec.Name + " " + strconv.FormatFloat(spec.Lexical.MinScore, 'g', -1, 64)
			} else {
				got = spec.Name + " " + spec.OpenAI.BaseURL
			}
			if got != tt.want {
				t.Errorf("parseModelFlag(%q) = %q, want %q", tt.flag, got, tt.want)
			}
		})
	}
}

func TestBudgetFlags(t *testing.T) {
	// What a scenario set, which the flags apply over.
	scenario := budget.Budgets{Connect: budget.Connect{ConnectTimeout: 7 * time.Second}, ToolTimeout: 5 * time.Second}
	tests := []struct {
		args []string
		want budget.Budgets
		err  string
	}{
		{nil, scenario, ""},
		{[]string{"-connect-timeout", "30s", "-discover-timeout", "20s", "-initialize-timeout", "15s", "-tool-timeout", "1m", "-person-timeout", "2m"},
			budget.Budgets{Connect: budget.Connect{ConnectTimeout: 30 * time.Second, DiscoverTimeout: 20 * time.Second, InitializeTimeout: 15 * time.Second}, ToolTimeout: time.Minute, PersonTimeout: 2 * time.Minute}, ""},
		{[]string{"-tool-timeout", "2s"}, budget.Budgets{Connect: budget.Connect{ConnectTimeout: 7 * time.Second}, ToolTimeout: 2 * time.Second}, ""},
		{[]string{"-max-steps", "3", "-max-result-bytes", "-1", "-progress-extends"},
			budget.Budgets{Connect: budget.Connect{ConnectTimeout: 7 * time.Second}, ToolTimeout: 5 * time.Second, MaxSteps: 3, MaxResultBytes: -1, ProgressExtends: true}, ""},
		{[]string{"-person-timeout", "-1s"}, budget.Budgets{}, "-person-timeout -1s: want a duration of 0 or more"},
		{[]string{"-max-rounds", "-2"}, budget.Budgets{}, "-max-rounds -2: want a number of 0 or more"},
		{[]string{"-max-result-bytes", "-2"}, budget.Budgets{}, "-max-result-bytes -2: want a number of 0 or more, or -1 for no budget"},
	}
	for _, tt := range tests {
		var b budgetFlags
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		b.register(fs)
		if err := fs.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		if err := b.check(); tt.err != "" || err != nil {
			if err == nil || err.Error() != tt.err || exitCode(err) != exitUsage {
				t.Errorf("%q: check() = %v, want %q with exit 2", tt.args, err, tt.err)
			}
			continue
		}
		// What the flags leave alone keeps what a scenario set.
		got := host.Options{Budgets: scenario}
		b.apply(&got)
		if diff := cmp.Diff(tt.want, got.Budgets); diff != "" {
			t.Errorf("%q: budgets (-want +got):\n%s", tt.args, diff)
		}
		if b.set() != (len(tt.args) > 0) {
			t.Errorf("%q: set() = %v", tt.args, b.set())
		}
	}
}

// TestEveryCommandHasEveryBudgetFlag: each command that starts servers has
// a flag for each budget internal/budget declares, named after its key,
// with its usage and default; a budget added there gets its flag here with
// nothing else written.
func TestEveryCommandHasEveryBudgetFlag(t *testing.T) {
	for _, cmd := range []string{"run", "tools", "catalog", "chat", "lab", "conformance-client", "init"} {
		var stdout, stderr strings.Builder
		e := &env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
		if code := runEnv(context.Background(), e, []string{cmd, "-h"}); code != 0 {
			t.Fatalf("%s -h: exit %d\n%s", cmd, code, stderr.String())
		}
		for _, f := range budget.Fields[budget.Budgets]() {
			kind := map[string]string{"int64": " duration", "int": " int", "bool": ""}[f.Type.Kind().String()]
			want := "\n  -" + f.Flag + kind + "\n" + wrapText(f.Usage, flagIndent, usageWidth)
			if !strings.Contains(stderr.String(), want) {
				t.Errorf("%s -h has no %q", cmd, want)
			}
		}
	}
}

// TestBudgetFlagsGiveEveryBudget: each budget's flag gives that budget,
// over what a scenario set, and nothing else.
func TestBudgetFlagsGiveEveryBudget(t *testing.T) {
	for _, f := range budget.Fields[budget.Budgets]() {
		var b budgetFlags
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		b.register(fs)
		if err := fs.Parse([]string{"-" + f.Flag + "=" + f.Example}); err != nil {
			t.Fatal(err)
		}
		if err := b.check(); err != nil {
			t.Fatal(err)
		}
		var o host.Options
		b.apply(&o)
		var want budget.Budgets
		v := reflect.ValueOf(&want).Elem().FieldByIndex(f.Index)
		if f.Type.Kind() == reflect.Bool {
			v.SetBool(true)
		} else {
			v.Set(reflect.ValueOf(b.Budgets).FieldByIndex(f.Index))
		}
		if o.Budgets != want || v.IsZero() {
			t.Errorf("-%s=%s: budgets %+v, want %+v", f.Flag, f.Example, o.Budgets, want)
		}
	}
}
