package main

import (
	"flag"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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
	tests := []struct {
		args []string
		want host.Options
		err  string
	}{
		{nil, host.Options{ToolTimeout: 5 * time.Second, ConnectTimeout: 7 * time.Second}, ""},
		{[]string{"-connect-timeout", "30s", "-discover-timeout", "20s", "-initialize-timeout", "15s", "-tool-timeout", "1m", "-person-timeout", "2m"},
			host.Options{ConnectTimeout: 30 * time.Second, DiscoverTimeout: 20 * time.Second, InitializeTimeout: 15 * time.Second, ToolTimeout: time.Minute, PersonTimeout: 2 * time.Minute}, ""},
		{[]string{"-tool-timeout", "2s"}, host.Options{ToolTimeout: 2 * time.Second, ConnectTimeout: 7 * time.Second}, ""},
		{[]string{"-person-timeout", "-1s"}, host.Options{}, "-person-timeout -1s: want a duration of 0 or more"},
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
		got := host.Options{ToolTimeout: 5 * time.Second, ConnectTimeout: 7 * time.Second}
		b.apply(&got)
		if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b host.Options) bool {
			return a.ConnectTimeout == b.ConnectTimeout && a.DiscoverTimeout == b.DiscoverTimeout &&
				a.InitializeTimeout == b.InitializeTimeout && a.ToolTimeout == b.ToolTimeout && a.PersonTimeout == b.PersonTimeout
		})); diff != "" {
			t.Errorf("%q: options (-want +got):\n%s", tt.args, diff)
		}
		if b.set() != (len(tt.args) > 0) {
			t.Errorf("%q: set() = %v", tt.args, b.set())
		}
	}
}
