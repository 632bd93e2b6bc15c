package record

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hosteval/hosteval/internal/budget"
)

// TestSettingsReadsOldRecords: a record's settings as hosteval has always
// written them read into the budgets, and are written back with the same
// keys and values, so that old results folders still read.
func TestSettingsReadsOldRecords(t *testing.T) {
	old := `{"protocol":"legacy","connect_timeout_ms":60000,"discover_timeout_ms":20000,"initialize_timeout_ms":15000,` +
		`"tool_timeout_ms":2500,"progress_extends":true,"max_tool_time_ms":120000,"person_timeout_ms":0,"case_timeout_ms":60000,` +
		`"max_result_bytes":-1,"max_arg_bytes":16384,"max_rounds":4,"max_steps":8,"deny":["a__b"],"elicitation":true}`
	var s Settings
	if err := json.Unmarshal([]byte(old), &s); err != nil {
		t.Fatal(err)
	}
	want := Settings{Protocol: "legacy", CaseTimeoutMS: 60000, Deny: []string{"a__b"}, Elicitation: true, Budgets: budget.Budgets{
		Connect:     budget.Connect{ConnectTimeout: time.Minute, DiscoverTimeout: 20 * time.Second, InitializeTimeout: 15 * time.Second},
		ToolTimeout: 2500 * time.Millisecond, ProgressExtends: true, MaxToolTime: 2 * time.Minute,
		MaxResultBytes: -1, MaxArgBytes: 16384, MaxRounds: 4, MaxSteps: 8}}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("read (-want +got):\n%s", diff)
	}
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var gotKeys, wantKeys map[string]any
	json.Unmarshal(data, &gotKeys)
	json.Unmarshal([]byte(old), &wantKeys)
	if diff := cmp.Diff(wantKeys, gotKeys); diff != "" {
		t.Errorf("written back (-old +new):\n%s\n%s", diff, data)
	}
	// The protocol comes first, then the budgets, as they always have.
	if prefix := `{"protocol":"legacy","connect_timeout_ms":60000,`; string(data[:len(prefix)]) != prefix {
		t.Errorf("written %s, want it to start %s", data, prefix)
	}
}

// TestSettingsEveryBudget: every budget is written under its key (a
// duration in milliseconds) and read back, whatever it is: a budget
// added to internal/budget is recorded with nothing else to write.
func TestSettingsEveryBudget(t *testing.T) {
	var s Settings
	v := reflect.ValueOf(&s.Budgets).Elem()
	want := map[string]any{}
	for i, f := range budget.Fields[budget.Budgets]() {
		fv := v.FieldByIndex(f.Index)
		switch {
		case fv.Kind() == reflect.Bool:
			fv.SetBool(true)
			want[f.JSON] = true
		case fv.Type() == reflect.TypeFor[time.Duration]():
			d := time.Duration(i+1)*time.Second + 1500*time.Microsecond
			fv.SetInt(int64(d))
			want[f.JSON] = float64(i+1)*1000 + 1.5
		default:
			fv.SetInt(int64(i + 1))
			want[f.JSON] = float64(i + 1)
		}
	}
	data, err := json.Marshal(&s)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	for key, w := range want {
		if got[key] != w {
			t.Errorf("%s = %v, want %v (in %s)", key, got[key], w, data)
		}
	}
	var back Settings
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back.Budgets != s.Budgets {
		t.Errorf("read back %+v, want %+v", back.Budgets, s.Budgets)
	}
}
