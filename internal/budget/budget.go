// Package budget declares the host's budgets once: the waits of the timing
// model (connect, discover, initialize, tool, max tool time, person) and
// the limits of a turn and a call (result bytes, argument bytes, steps,
// rounds), and of what the host keeps of its servers' output (stderr
// bytes, wire trace bytes). One struct field is one budget, and its tags say all that the
// rest of hosteval needs to know about it:
//
//	yaml:"tool_timeout"     its key in a scenario's host: block (and, for a Connect field, in servers.yaml)
//	json:"tool_timeout_ms"  its key in a record's settings (a duration in milliseconds)
//	default:"10s"           the host's default (none: the zero value, which then means no limit)
//	none:"-1"               the number that means no budget (any negative number does)
//	unit:"bytes"            what a number counts, for the problems that name it
//	doc:"..." example:"..." its meaning and an example, for docs/scenarios.md and the JSON Schemas
//	flag:"..."              the usage of its flag, named after the key: -tool-timeout
//
// From that one declaration follow: the host's options (host.Options embeds
// Budgets, host.ServerSpec embeds Connect) and their defaults; the scenario
// language (its host: block and a server's definition embed them, read
// directly by internal/yamlx, which asks [Budgets.CheckField] what a value
// means); the recorded settings (record.Settings embeds Budgets); a flag for
// each budget on every command that starts servers ([Register]); and the
// generated reference and schemas. [Over] is the one merge: the host's
// defaults under what the scenario's host: block gives, a variant's
// over its scenario's, the flags over a run's scenarios, a server's own
// values in servers.yaml over the host's. Adding a budget is a field here
// and its use in the host.
//
// It is a leaf of its own, not a part of internal/record (the results
// format, which has no business declaring YAML keys or flags) nor of
// internal/host (which record must not import): host, record, scenario and
// the command all import it, and it imports only the YAML reader.
//
// A budget exists to catch a broken server, never a slow machine: each
// default holds for an npx server starting on a busy 2-core CI runner
// (load average 25), because the handshake budgets count only from when
// the server has read its request (the timing model: go doc ./internal/host).
package budget

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Connect are the budgets of connecting one server: the host's, which a
// server's own values in servers.yaml override (host.ServerSpec embeds
// them).
type Connect struct {
	ConnectTimeout    time.Duration `yaml:"connect_timeout" json:"connect_timeout_ms" default:"60s" flag:"how long one server may take to start and connect" doc:"Everything it takes to connect one server: starting it, the handshake (a restart included), listing its tools (default 60s). A server known to start slowly (npx, a JVM) sets its own in the servers file, which overrides the host's." example:"90s"`
	DiscoverTimeout   time.Duration `yaml:"discover_timeout" json:"discover_timeout_ms" default:"20s" flag:"how long auto mode waits for server/discover before it tries 2025-11-25" doc:"The wait for an answer to server/discover in auto mode, counted from when the server has read it; then the host restarts the server as 2025-11-25 (default 20s; a server's own in the servers file overrides the host's)." example:"20s"`
	InitializeTimeout time.Duration `yaml:"initialize_timeout" json:"initialize_timeout_ms" default:"20s" flag:"how long the 2025-11-25 initialize handshake may take" doc:"The wait for an answer to the 2025-11-25 initialize, counted from when the server has read it (default 20s; a server's own in the servers file overrides the host's)." example:"20s"`
}

// Budgets are the host's budgets. The zero value of each means its
// default; durations and numbers are positive, but for the one number that
// may mean none.
type Budgets struct {
	Connect         `yaml:",inline"`
	ToolTimeout     time.Duration `yaml:"tool_timeout" json:"tool_timeout_ms" default:"10s" flag:"how long to wait for each round of a tool call" doc:"One round of a tool call; the person's time is never part of it (default 10s)." example:"2s"`
	ProgressExtends bool          `yaml:"progress_extends" json:"progress_extends,omitempty" flag:"let a server's progress give a round of a tool call the tool timeout again, up to -max-tool-time" doc:"Whether a server's progress notification gives the round in flight tool_timeout again from then, up to max_tool_time in all (default false: progress is recorded on the call and changes nothing)." example:"true"`
	// MaxToolTime is recorded only when progress extends a round: it is
	// what applied, never less than ToolTimeout (see record.Settings).
	MaxToolTime    time.Duration `yaml:"max_tool_time" json:"max_tool_time_ms,omitempty" default:"2m" flag:"the most one round of a tool call may take when progress extends it" doc:"The most one round of a tool call may take when progress extends it: the hard maximum (default 2m; never less than tool_timeout)." example:"2m"`
	PersonTimeout  time.Duration `yaml:"person_timeout" json:"person_timeout_ms" flag:"how long to wait for the person to approve or answer; then the answer is no (default: no limit)" doc:"How long the person may take to approve a call or answer a question; then the answer is no (default: as long as the case allows)." example:"30s"`
	MaxResultBytes int           `yaml:"max_result_bytes" json:"max_result_bytes" default:"4000" none:"-1" unit:"bytes" flag:"result budget in bytes (-1: none)" doc:"The result budget: a longer result is cut and labelled (default 4000; -1: none)." example:"4000"`
	MaxArgBytes    int           `yaml:"max_arg_bytes" json:"max_arg_bytes" default:"16384" unit:"bytes" flag:"the largest arguments of one call, in bytes" doc:"The largest arguments of one call, in bytes (default 16384)." example:"16384"`
	MaxSteps       int           `yaml:"max_steps" json:"max_steps" default:"8" flag:"model requests per turn at most" doc:"Model requests per turn at most (default 8)." example:"8"`
	MaxRounds      int           `yaml:"max_rounds" json:"max_rounds" default:"4" flag:"rounds of one multi-round-trip call at most" doc:"Rounds of one multi-round-trip call at most (default 4)." example:"4"`
	StderrBytes    int           `yaml:"stderr_bytes" json:"stderr_bytes,omitempty" default:"65536" none:"-1" unit:"bytes" flag:"bytes of each server's stderr kept from its start and from its end, each; what falls between is counted and left out (-1: all)" doc:"How much of each server's stderr the host keeps, from its start and from its end, each, in the log and the wire trace; what falls between is left out, counted in the log and on the server's record (default 65536; -1: all)." example:"65536"`
	WireBytes      int           `yaml:"wire_bytes" json:"wire_bytes,omitempty" default:"67108864" none:"-1" unit:"bytes" flag:"bytes of one host's wire trace (a case's, with run -wire) at most; what is over is counted and left out (-1: no limit)" doc:"The most one host's wire trace (a case's, with run -wire) may hold; the messages over it are left out, and a last line counts them (default 67108864, 64 MiB; -1: no limit)." example:"67108864"`
}

// Field is one budget as its struct field declares it.
type Field struct {
	// Name is the Go field's name; Index its index sequence (through
	// embedded structs, for reflect.Value.FieldByIndex); Type its type:
	// time.Duration, int or bool.
	Name  string
	Index []int
	Type  reflect.Type
	// Key is its YAML key; Flag its flag's name (the key with dashes).
	Key, Flag string
	// JSON is its key in a record; OmitEmpty leaves it out when zero.
	JSON      string
	OmitEmpty bool
	// Doc and Example are its meaning and an example value, as the
	// reference shows them; Usage is its flag's usage, with the default.
	Doc, Example, Usage string
	// Default is the host's default as written ("" for none: zero).
	Default string
	// None is the number that means no budget, when there is one.
	None *int64
	// Unit is what a number counts ("" for a count of things).
	Unit string

	def int64 // Default, parsed (a duration in nanoseconds, a bool as 0 or 1)
}

// Fields lists the budgets T declares (T is Budgets, Connect, or a struct
// built the same way), in declaration order, the fields of an embedded
// struct in place. It panics when a field lacks a tag it needs or has a
// type no budget has: a budget declared by half fails every test that
// touches it.
func Fields[T any]() []Field { return slices.Clone(fieldsOf(reflect.TypeFor[T]())) }

var durationType = reflect.TypeFor[time.Duration]()

// fieldCache holds each struct type's fields once worked out: a pure
// function of the type, cached as encoding/json caches its fields, because
// every case merges its budgets several times ([Over], [Defaults]) and
// reading the tags again was half of a route-only case's CPU.
var fieldCache sync.Map // reflect.Type -> []Field

// fieldsOf returns t's fields, shared: callers must not change them.
func fieldsOf(t reflect.Type) []Field {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.([]Field)
	}
	fs, _ := fieldCache.LoadOrStore(t, readFields(t))
	return fs.([]Field)
}

func readFields(t reflect.Type) []Field {
	var out []Field
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		if sf.Anonymous && sf.Type.Kind() == reflect.Struct {
			for _, f := range readFields(sf.Type) {
				f.Index = append([]int{i}, f.Index...)
				out = append(out, f)
			}
			continue
		}
		out = append(out, fieldOf(t, sf))
	}
	return out
}

func fieldOf(t reflect.Type, sf reflect.StructField) Field {
	bad := func(format string, args ...any) {
		panic(fmt.Sprintf("budget: %s.%s: %s", t, sf.Name, fmt.Sprintf(format, args...)))
	}
	tag := func(key string) string {
		v, ok := sf.Tag.Lookup(key)
		if !ok && slices.Contains([]string{"yaml", "json", "flag", "doc", "example"}, key) {
			bad("no %s tag", key)
		}
		return v
	}
	jsonKey, opts, _ := strings.Cut(tag("json"), ",")
	f := Field{Name: sf.Name, Index: []int{sf.Index[0]}, Type: sf.Type,
		Key: tag("yaml"), JSON: jsonKey, OmitEmpty: slices.Contains(strings.Split(opts, ","), "omitempty"),
		Doc: tag("doc"), Example: tag("example"), Usage: tag("flag"), Default: tag("default"), Unit: tag("unit")}
	f.Flag = strings.ReplaceAll(f.Key, "_", "-")
	if sf.Type != durationType && sf.Type.Kind() != reflect.Int && sf.Type.Kind() != reflect.Bool {
		bad("type %s: want time.Duration, int or bool", sf.Type)
	}
	if f.Key == "" || f.JSON == "" || strings.Contains(f.Key, ",") {
		bad("want a yaml key and a json key")
	}
	if f.Default != "" {
		d, err := parse(sf.Type, f.Default)
		if err != nil {
			bad("default %q: %v", f.Default, err)
		}
		f.def = d
		f.Usage += " (default " + f.format(d) + ")"
	}
	if text, ok := sf.Tag.Lookup("none"); ok {
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil || n >= 0 || sf.Type.Kind() != reflect.Int {
			bad("none %q: want a negative number, on an int", text)
		}
		f.None = &n
	}
	return f
}

// parse reads a value of a budget of type t as its tags and flags write it.
func parse(t reflect.Type, text string) (int64, error) {
	switch {
	case t == durationType:
		d, err := time.ParseDuration(text)
		return int64(d), err
	case t.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(text)
		if b {
			return 1, err
		}
		return 0, err
	}
	return strconv.ParseInt(text, 10, 64)
}

// format writes a value of the budget as its flag's usage shows it.
func (f Field) format(v int64) string {
	switch {
	case f.Type == durationType:
		return time.Duration(v).String()
	case f.Type.Kind() == reflect.Bool:
		return strconv.FormatBool(v != 0)
	}
	return strconv.FormatInt(v, 10)
}

// given reports whether v, the budget's value, is one the host can run
// under: a positive duration or number, a number meaning none, true. The
// zero value (and a negative duration, false) gives nothing.
func (f Field) given(v reflect.Value) bool {
	if v.Kind() == reflect.Bool {
		return v.Bool()
	}
	n := v.Int()
	return n > 0 || (f.None != nil && n < 0)
}

// Defaults are the host's defaults of the budgets T declares.
func Defaults[T any]() T {
	var d T
	v := reflect.ValueOf(&d).Elem()
	for _, f := range fieldsOf(v.Type()) {
		fv := v.FieldByIndex(f.Index)
		if fv.Kind() == reflect.Bool {
			fv.SetBool(f.def != 0)
		} else {
			fv.SetInt(f.def)
		}
	}
	return d
}

// Over returns base with each budget that over gives in its place: the
// budgets whose value the host can run under (a positive duration or
// number, the number meaning none, true), and those whose keys are in
// written, so that a false written in a file is given too (a variant turns
// off what its scenario turned on). What over leaves at zero keeps base's.
//
// It is the one merge of budgets: the host's defaults under its options
// (host.Options.Effective), a variant's host: block over its scenario's,
// the flags over a run's scenarios, a server's own budgets over the
// host's.
func Over[T any](base, over T, written ...string) T {
	b, o := reflect.ValueOf(&base).Elem(), reflect.ValueOf(over)
	for _, f := range fieldsOf(b.Type()) {
		ov := o.FieldByIndex(f.Index)
		if f.given(ov) || slices.Contains(written, f.Key) {
			b.FieldByIndex(f.Index).Set(ov)
		}
	}
	return base
}
