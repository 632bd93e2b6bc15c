package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// sarifSchema is the official SARIF 2.1.0 JSON Schema, vendored by
// internal/lint (from github.com/oasis-tcs/sarif-spec,
// sarif-2.1/schema/sarif-schema-2.1.0.json, byte for byte).
const sarifSchema = "../../internal/lint/testdata/sarif-schema-2.1.0.json"

// TestLintSARIFOverServers: hosteval lint -format sarif over real server
// processes (cmdb beside poison's poisoned catalog, and a drifted one
// against a lock) writes a log the SARIF 2.1.0 schema accepts, where every
// rule has its help and a helpUri to its docs/lint.md anchor, and every
// result its logical locations (server, tool, field) and its servers
// file's line; a pin-changed result carries its diff.
func TestLintSARIFOverServers(t *testing.T) {
	schema, err := jsonschema.NewCompiler().Compile(sarifSchema)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	servers := filepath.Join(dir, "servers.yaml")
	yaml := "servers:\n  cmdb:\n    command: " + filepath.Join(fixtureBin, "cmdb") +
		"\n  poison:\n    command: " + filepath.Join(fixtureBin, "poison") + "\n    args: [-catalog, clean]\n"
	if err := os.WriteFile(servers, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(dir, "hosteval.lock")
	if code, _, stderr := runCLI(t, "pin", "-servers-file", servers, "-lock", lock); code != 0 {
		t.Fatalf("pin: exit %d\n%s", code, stderr)
	}
	for _, tc := range []struct {
		name, args string
		want       []string // rule IDs among the results
	}{
		{"poisoned", "-catalog, poisoned", []string{"unicode-tags", "cross-server-reference", "override-instructions"}},
		{"drifted", "-catalog, clean, -drift", []string{"pin-changed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changed := strings.Replace(yaml, "-catalog, clean", tc.args, 1)
			if err := os.WriteFile(servers, []byte(changed), 0o644); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := runCLI(t, "lint", "-servers-file", servers, "-format", "sarif", "-pins", lock)
			if code != 1 {
				t.Fatalf("lint: exit %d, want 1\n%s", code, stderr)
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(stdout)))
			if err != nil {
				t.Fatal(err)
			}
			if err := schema.Validate(doc); err != nil {
				t.Fatalf("the SARIF log does not validate: %v", err)
			}
			var log struct {
				Runs []struct {
					Tool struct {
						Driver struct {
							Rules []struct {
								ID      string
								HelpURI string
								Help    struct{ Text, Markdown string }
							}
						}
					}
					Results []struct {
						RuleID    string
						Locations []struct {
							PhysicalLocation struct {
								ArtifactLocation struct{ URI string }
								Region           struct{ StartLine int }
							}
							LogicalLocations []struct{ Name, FullyQualifiedName, Kind string }
						}
						Properties struct{ Diff []string }
					}
				}
			}
			if err := json.Unmarshal([]byte(stdout), &log); err != nil {
				t.Fatal(err)
			}
			run := log.Runs[0]
			for _, r := range run.Tool.Driver.Rules {
				if r.HelpURI != "https://github.com/hosteval/hosteval/blob/main/docs/lint.md#"+r.ID || r.Help.Text == "" || r.Help.Markdown == "" {
					t.Errorf("rule %s: helpUri %q, help %q", r.ID, r.HelpURI, r.Help.Text)
				}
			}
			var rules []string
			for _, res := range run.Results {
				rules = append(rules, res.RuleID)
				loc := res.Locations[0]
				if loc.PhysicalLocation.ArtifactLocation.URI == "" || loc.PhysicalLocation.Region.StartLine == 0 {
					t.Errorf("%s: no physical location: %+v", res.RuleID, loc.PhysicalLocation)
				}
				if len(loc.LogicalLocations) == 0 || loc.LogicalLocations[0].Kind != "module" {
					t.Errorf("%s: logical locations %+v, want the server first", res.RuleID, loc.LogicalLocations)
				}
				if res.RuleID == "pin-changed" && len(res.Properties.Diff) == 0 {
					t.Errorf("pin-changed without its diff: %+v", res)
				}
			}
			for _, want := range tc.want {
				if !slices.Contains(rules, want) {
					t.Errorf("results %v, want %s among them", rules, want)
				}
			}
			if tc.name == "drifted" {
				var fq []string
				for _, res := range run.Results {
					if res.RuleID == "pin-changed" {
						locs := res.Locations[0].LogicalLocations
						fq = append(fq, locs[len(locs)-1].FullyQualifiedName)
					}
				}
				if want := []string{"poison/add_note/inputSchema", "poison/get_forecast/description"}; !slices.Equal(fq, want) {
					t.Errorf("pin-changed places %v, want %v", fq, want)
				}
			}
		})
	}
}
