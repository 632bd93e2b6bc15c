package scenario

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hosteval/hosteval/internal/budget"
)

// TestEveryBudgetLoads: every budget internal/budget declares is a key of
// a scenario's host: block that reaches the case's host options, a
// variant's value over the scenario's (a false written included), a row
// of the reference and a property of the schema; a connection budget is a
// key of a server's definition too. A budget added to the declaration is
// tested here with nothing else written.
func TestEveryBudgetLoads(t *testing.T) {
	testEnv(t)
	connect := map[string]bool{}
	for _, f := range budget.Fields[budget.Connect]() {
		connect[f.Key] = true
	}
	ref, err := Reference()
	if err != nil {
		t.Fatal(err)
	}
	scenarioSchema, _ := schemaOf("scenario")
	serversSchema, _ := schemaOf("servers")
	for _, f := range budget.Fields[budget.Budgets]() {
		t.Run(f.Key, func(t *testing.T) {
			// The example in the scenario, another value in a variant.
			other := map[string]string{"bool": "false", "int": "7"}[f.Type.Kind().String()]
			if other == "" {
				other = "7s"
			}
			server := ""
			if connect[f.Key] {
				server = ", " + f.Key + ": 3s"
			}
			suite := loadText(t, fmt.Sprintf(`name: b
servers: [{name: s, command: s%s}]
question: q
model: {scripted: []}
host: {%s: %s}
variants: [{name: same}, {name: other, host: {%s: %s}}]
`, server, f.Key, f.Example, f.Key, other))
			cases, err := suite.Cases(CaseOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cases {
				o := c.HostOptions()
				got := fmt.Sprint(reflect.ValueOf(o.Budgets).FieldByIndex(f.Index))
				want := map[string]string{"same": f.Example, "other": other}[c.Variant]
				if d, err := time.ParseDuration(want); err == nil && f.Type == reflect.TypeFor[time.Duration]() {
					want = d.String()
				}
				if got != want {
					t.Errorf("%s: %s = %s, want %s", c.Variant, f.Key, got, want)
				}
				if connect[f.Key] {
					if got := fmt.Sprint(reflect.ValueOf(o.Servers[0].Connect).FieldByIndex(f.Index[1:])); got != "3s" {
						t.Errorf("the server's %s = %s, want 3s", f.Key, got)
					}
				}
			}
			if !strings.Contains(string(ref), "| `"+f.Key+"` |") {
				t.Errorf("the reference has no row for %s", f.Key)
			}
			hostDef := scenarioSchema.Defs["hostDoc"]
			if p := hostDef.Properties[f.Key]; p == nil || p.Description != f.Doc {
				t.Errorf("the scenario schema's host has %s = %+v, want its doc", f.Key, p)
			}
			if p := serversSchema.Defs["serverDoc"].Properties[f.Key]; (p != nil) != connect[f.Key] {
				t.Errorf("the servers schema has %s: %v, want %v", f.Key, p != nil, connect[f.Key])
			}
		})
	}
}
