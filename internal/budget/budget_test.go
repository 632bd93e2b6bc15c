package budget

import (
	"flag"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hosteval/hosteval/internal/yamlx"
)

// TestFields: the field list is what the struct declares, keys, flags,
// record keys and defaults included; the rest of hosteval reads it.
func TestFields(t *testing.T) {
	var got []string
	for _, f := range Fields[Budgets]() {
		line := f.Key + " -" + f.Flag + " " + f.JSON
		if f.Default != "" {
			line += " default " + f.Default
		}
		got = append(got, line)
	}
	want := []string{
		"connect_timeout -connect-timeout connect_timeout_ms default 60s",
		"discover_timeout -discover-timeout discover_timeout_ms default 20s",
		"initialize_timeout -initialize-timeout initialize_timeout_ms default 20s",
		"tool_timeout -tool-timeout tool_timeout_ms default 10s",
		"progress_extends -progress-extends progress_extends",
		"max_tool_time -max-tool-time max_tool_time_ms default 2m",
		"person_timeout -person-timeout person_timeout_ms",
		"max_result_bytes -max-result-bytes max_result_bytes default 4000",
		"max_arg_bytes -max-arg-bytes max_arg_bytes default 16384",
		"max_steps -max-steps max_steps default 8",
		"max_rounds -max-rounds max_rounds default 4",
		"stderr_bytes -stderr-bytes stderr_bytes default 65536",
		"wire_bytes -wire-bytes wire_bytes default 67108864",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
	d := Defaults[Budgets]()
	wantDefaults := Budgets{Connect: Connect{ConnectTimeout: time.Minute, DiscoverTimeout: 20 * time.Second, InitializeTimeout: 20 * time.Second},
		ToolTimeout: 10 * time.Second, MaxToolTime: 2 * time.Minute, MaxResultBytes: 4000, MaxArgBytes: 16384, MaxSteps: 8, MaxRounds: 4,
		StderrBytes: 65536, WireBytes: 64 << 20}
	if d != wantDefaults {
		t.Errorf("Defaults = %+v, want %+v", d, wantDefaults)
	}
}

// TestEveryBudgetDeclaredWhole: every budget's declaration holds together:
// its doc states its default, its example is a value it may have, and a
// duration is recorded in milliseconds.
func TestEveryBudgetDeclaredWhole(t *testing.T) {
	for _, f := range Fields[Budgets]() {
		if f.Default != "" && !strings.Contains(f.Doc, "default "+f.Default) {
			t.Errorf("%s: doc %q does not state the default %s", f.Key, f.Doc, f.Default)
		}
		if f.Default != "" && !strings.Contains(f.Usage, "(default ") {
			t.Errorf("%s: flag usage %q does not state the default", f.Key, f.Usage)
		}
		if f.Type == durationType && f.JSON != f.Key+"_ms" || f.Type != durationType && f.JSON != f.Key {
			t.Errorf("%s: record key %s, want the key (with _ms for a duration)", f.Key, f.JSON)
		}
		var b Budgets
		err := yamlx.Decode("f.yaml", []byte(f.Key+": "+f.Example), &b, nil)
		if err != nil {
			t.Errorf("%s: example %q: %v", f.Key, f.Example, err)
		}
	}
}

// extended is Budgets with one budget more, as a test declares it: the
// field, and (for a new type only) the two methods yamlx asks. Every test
// below runs on it; none of the code it tests names a budget.
type extended struct {
	Budgets      `yaml:",inline"`
	DrainTimeout time.Duration `yaml:"drain_timeout" json:"drain_timeout_ms" default:"5s" flag:"how long a server may take to drain" doc:"The wait for a server to drain (default 5s)." example:"3s"`
	MaxPages     int           `yaml:"max_pages" json:"max_pages" default:"10" none:"-1" unit:"pages" flag:"pages of a list at most (-1: none)" doc:"Pages of one list at most (default 10; -1: none)." example:"20"`
}

func (e *extended) CheckField(key string, n *yamlx.Node) error { return checkField(e, key, n) }
func (*extended) FieldSchema(key string, _ *yamlx.Reflector) *jsonschema.Schema {
	return fieldSchema[extended](key)
}

// TestAddedBudget: a budget added to the declaration has a default, a
// flag, a YAML key checked as its kind asks, a schema, and survives the
// merge, with nothing but its field written.
func TestAddedBudget(t *testing.T) {
	fields := Fields[extended]()
	last := fields[len(fields)-2:]
	if last[0].Key != "drain_timeout" || last[0].Flag != "drain-timeout" || last[0].JSON != "drain_timeout_ms" || last[1].Key != "max_pages" {
		t.Fatalf("fields end with %+v", last)
	}

	d := Defaults[extended]()
	if d.DrainTimeout != 5*time.Second || d.MaxPages != 10 || d.ToolTimeout != 10*time.Second {
		t.Errorf("Defaults = %+v", d)
	}

	// Flags: one each, with the default in its usage; a flag left alone
	// gives nothing.
	var fl extended
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	Register(fs, &fl)
	if f := fs.Lookup("drain-timeout"); f == nil || f.Usage != "how long a server may take to drain (default 5s)" {
		t.Fatalf("flag -drain-timeout = %+v", f)
	}
	if err := fs.Parse([]string{"-drain-timeout", "7s", "-max-pages", "-1"}); err != nil {
		t.Fatal(err)
	}
	if err := CheckFlags(fl); err != nil {
		t.Errorf("CheckFlags = %v", err)
	}
	scenario := extended{Budgets: Budgets{ToolTimeout: time.Second}, DrainTimeout: time.Second, MaxPages: 3}
	got := Over(scenario, fl)
	want := extended{Budgets: Budgets{ToolTimeout: time.Second}, DrainTimeout: 7 * time.Second, MaxPages: -1}
	if got != want {
		t.Errorf("flags over scenario = %+v, want %+v", got, want)
	}
	if got := Over(Defaults[extended](), extended{}); got != Defaults[extended]() {
		t.Errorf("zero over defaults = %+v, want the defaults", got)
	}
	fl.MaxPages = -2
	if err := CheckFlags(fl); err == nil || err.Error() != "-max-pages -2: want a number of 0 or more, or -1 for no budget" {
		t.Errorf("CheckFlags = %v", err)
	}

	// YAML: read directly, every problem with its line.
	var y extended
	err := yamlx.Decode("f.yaml", []byte("drain_timeout: 0s\nmax_pages: 0\ntool_timeout: 2s\n"), &y, nil)
	wantErr := "f.yaml:1: drain_timeout: want a positive duration, got 0s\n" +
		"f.yaml:2: max_pages: want a positive number of pages, or -1 for no budget, got 0"
	if err == nil || err.Error() != wantErr {
		t.Errorf("decode: %v, want\n%s", err, wantErr)
	}
	if err := yamlx.Decode("f.yaml", []byte("drain_timeout: 3s\nmax_pages: -1\n"), &y, nil); err != nil || y.DrainTimeout != 3*time.Second || y.MaxPages != -1 {
		t.Errorf("decode: %+v, %v", y, err)
	}

	// Schema: its doc, its example, its kind.
	s := yamlx.Schema(reflect.TypeFor[extended](), "urn:t", "t", "")
	if p := s.Properties["drain_timeout"]; p == nil || p.Description != "The wait for a server to drain (default 5s)." || p.Pattern == "" {
		t.Errorf("schema of drain_timeout = %+v", p)
	}
	if p := s.Properties["max_pages"]; p == nil || len(p.AnyOf) != 2 || p.Examples[0] != int64(20) {
		t.Errorf("schema of max_pages = %+v", p)
	}
}

// TestOver: the one merge. A budget is given by a value the host can run
// under, or by being written (a false over a true).
func TestOver(t *testing.T) {
	base := Budgets{Connect: Connect{ConnectTimeout: time.Minute}, ToolTimeout: 10 * time.Second, ProgressExtends: true, MaxResultBytes: 4000, MaxSteps: 8}
	tests := []struct {
		name    string
		over    Budgets
		written []string
		want    Budgets
	}{
		{"nothing", Budgets{}, nil, base},
		{"a duration and a count", Budgets{ToolTimeout: 2 * time.Second, MaxSteps: 3}, nil,
			Budgets{Connect: Connect{ConnectTimeout: time.Minute}, ToolTimeout: 2 * time.Second, ProgressExtends: true, MaxResultBytes: 4000, MaxSteps: 3}},
		{"none", Budgets{MaxResultBytes: -1}, nil,
			Budgets{Connect: Connect{ConnectTimeout: time.Minute}, ToolTimeout: 10 * time.Second, ProgressExtends: true, MaxResultBytes: -1, MaxSteps: 8}},
		{"a negative duration gives nothing", Budgets{Connect: Connect{ConnectTimeout: -time.Second}, MaxSteps: -1}, nil, base},
		{"false, not written", Budgets{}, []string{"tool_timeout"},
			Budgets{Connect: Connect{ConnectTimeout: time.Minute}, ProgressExtends: true, MaxResultBytes: 4000, MaxSteps: 8}},
		{"false, written", Budgets{}, []string{"progress_extends", "allow"},
			Budgets{Connect: Connect{ConnectTimeout: time.Minute}, ToolTimeout: 10 * time.Second, MaxResultBytes: 4000, MaxSteps: 8}},
		{"a connect budget", Budgets{Connect: Connect{DiscoverTimeout: time.Second}}, nil,
			Budgets{Connect: Connect{ConnectTimeout: time.Minute, DiscoverTimeout: time.Second}, ToolTimeout: 10 * time.Second, ProgressExtends: true, MaxResultBytes: 4000, MaxSteps: 8}},
	}
	for _, tt := range tests {
		if got := Over(base, tt.over, tt.written...); got != tt.want {
			t.Errorf("%s: Over = %+v, want %+v", tt.name, got, tt.want)
		}
	}
	// A server's own connection budgets over the host's.
	if got, want := Over(Connect{ConnectTimeout: time.Minute, DiscoverTimeout: 20 * time.Second}, Connect{ConnectTimeout: 90 * time.Second}),
		(Connect{ConnectTimeout: 90 * time.Second, DiscoverTimeout: 20 * time.Second}); got != want {
		t.Errorf("server over host = %+v, want %+v", got, want)
	}
}

// TestCheckField: what a value in a file must be, as the reference says.
func TestCheckField(t *testing.T) {
	tests := []struct{ text, want string }{
		{"tool_timeout: 2s\nmax_result_bytes: -1\nmax_steps: 1\nprogress_extends: false", ""},
		{"tool_timeout: 0s", "f.yaml:1: tool_timeout: want a positive duration, got 0s"},
		{"connect_timeout: -1s", "f.yaml:1: connect_timeout: want a positive duration, got -1s"},
		{"max_result_bytes: 0", "f.yaml:1: max_result_bytes: want a positive number of bytes, or -1 for no budget, got 0"},
		{"max_result_bytes: -2", "f.yaml:1: max_result_bytes: want a positive number of bytes, or -1 for no budget, got -2"},
		{"max_steps: 0", "f.yaml:1: max_steps: want a positive number, got 0"},
		{"max_arg_bytes: -3", "f.yaml:1: max_arg_bytes: want a positive number of bytes, got -3"},
		{"max_rounds: 1.5", `f.yaml:1: max_rounds: want a whole number, got "1.5"`},
	}
	for _, tt := range tests {
		var b Budgets
		err := yamlx.Decode("f.yaml", []byte(tt.text), &b, nil)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%q: %q, want %q", tt.text, got, tt.want)
		}
	}
}

// TestFieldsAreCopies holds the cache of fields behind Fields to its
// promise: what a caller does to the list it got changes nobody else's.
func TestFieldsAreCopies(t *testing.T) {
	a := Fields[Budgets]()
	a[0].Key = "changed"
	if b := Fields[Budgets](); b[0].Key != "connect_timeout" {
		t.Errorf("Fields[Budgets]()[0].Key = %q after a caller changed its copy, want connect_timeout", b[0].Key)
	}
}

// BenchmarkOver is the merge every case does several times: a scenario's
// host: block over the defaults.
func BenchmarkOver(b *testing.B) {
	base := Defaults[Budgets]()
	over := Budgets{ToolTimeout: 2 * time.Second, MaxSteps: 3}
	for b.Loop() {
		base = Over(base, over, "progress_extends")
	}
	if base.MaxSteps != 3 {
		b.Fatalf("MaxSteps = %d, want 3", base.MaxSteps)
	}
}
