package scaffold

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/hosteval/hosteval/internal/gate"
	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/scenario"
)

func TestArguments(t *testing.T) {
	tests := []struct {
		name     string
		schema   string
		want     string
		optional []string
	}{
		{"no arguments", `{"type":"object"}`, "{}\n", nil},
		{"an example", `{"type":"object","properties":{"host":{"type":"string","examples":["jump-prod-02"],"description":"The host."}},"required":["host"]}`,
			"host: jump-prod-02 # required: The host.\n", nil},
		{"a default, an enum, a const", `{"type":"object","properties":{"a":{"type":"integer","default":7},"b":{"type":"string","enum":["prod","dev"]},"c":{"const":true}},"required":["c","b","a"]}`,
			"c: true # required\nb: prod # required\na: 7 # required\n", nil},
		{"made up from the type", `{"type":"object","properties":{"s":{"type":"string"},"i":{"type":"integer","minimum":5},"n":{"type":"number","exclusiveMinimum":0.5},"b":{"type":"boolean"},"x":{}},"required":["s","i","n","b","x"]}`,
			"s: TODO # TODO: string, required\ni: 5 # TODO: integer, required\nn: 1 # TODO: number, required\nb: false # TODO: boolean, required\nx: TODO # TODO: any, required\n", nil},
		{"a nullable type", `{"type":"object","properties":{"n":{"type":["null","integer"]},"s":{"anyOf":[{"type":"null"},{"type":"string","format":"date"}]}},"required":["n","s"]}`,
			"n: 1 # TODO: integer, required\ns: \"2026-01-31\" # TODO: string, date, required\n", nil},
		{"a list of objects", `{"type":"object","properties":{"items":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}},"note":{"type":"string"}},"required":["name","tags"]}}},"required":["items"]}`,
			"# TODO: array of object, required\nitems:\n  - name: TODO # TODO: string\n    tags: [TODO]\n", nil},
		{"a $ref to $defs", `{"type":"object","$defs":{"env":{"type":"string","enum":["prod","dev"]}},"properties":{"env":{"$ref":"#/$defs/env"}},"required":["env"]}`,
			"env: prod # required\n", nil},
		{"a recursive schema ends", `{"type":"object","$defs":{"node":{"type":"object","properties":{"child":{"$ref":"#/$defs/node"}},"required":["child"]}},"properties":{"root":{"$ref":"#/$defs/node"}},"required":["root"]}`,
			"# TODO: object, required\nroot:\n  child:\n    child:\n      child:\n        child:\n          child: {}\n", nil},
		{"optional ones are listed", `{"type":"object","properties":{"limit":{"type":"integer","description":"At most this many.\nSecond line."},"tags":{"type":"array","items":{"type":"string"}},"q":{"type":"string"}},"required":["q"]}`,
			"q: TODO # TODO: string, required\n", []string{"limit (integer): At most this many.", "tags (array of string)"}},
		{"not an object", `"nonsense"`, "{}\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var schema any
			if err := json.Unmarshal([]byte(tt.schema), &schema); err != nil {
				t.Fatal(err)
			}
			args, optional := arguments(schema)
			var buf bytes.Buffer
			enc := yaml.NewEncoder(&buf)
			enc.SetIndent(2)
			if err := enc.Encode(args); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, buf.String()); diff != "" {
				t.Errorf("arguments (-want +got):\n%s", diff)
			}
			if !slices.Equal(optional, tt.optional) {
				t.Errorf("optional = %q, want %q", optional, tt.optional)
			}
		})
	}
}

func TestServerName(t *testing.T) {
	for in, want := range map[string]string{
		"memory-server":                       "memory-server",
		"@modelcontextprotocol/server-memory": "modelcontextprotocol-server-memory",
		"My Server_v2":                        "My-Server-v2",
		"":                                    "server",
		"???":                                 "server",
		strings.Repeat("a", 50):               strings.Repeat("a", 40),
	} {
		if got := ServerName(in); got != want {
			t.Errorf("ServerName(%q) = %q, want %q", in, got, want)
		}
	}
}

// hostile is a server whose names and descriptions try to break the YAML
// and the comments they land in.
func hostile() Server {
	return Server{
		Spec:       host.ServerSpec{Name: "evil", Command: "/bin/true", Args: []string{"--x: y", "#not-a-comment", "${HOME}"}, Env: []string{"K=v # x"}},
		ServerName: "evil\nname: injected", ServerVersion: "1.0\r\n---",
		Tools: []Tool{
			{Name: "do.this", Description: "Line one # not a comment\n---\nname: injected\n", ReadOnly: true,
				InputSchema: map[string]any{"type": "object", "properties": map[string]any{
					"q: x": map[string]any{"type": "string", "description": "a\nb: c", "examples": []any{"- item\n---"}},
					"#k":   map[string]any{"type": "string"}}, "required": []any{"q: x", "#k"}}},
			{Name: "do_it", Description: "\u2028\u0000 control", Destructive: true,
				InputSchema: map[string]any{"type": "object", "properties": map[string]any{"v": map[string]any{"const": "yes\n---\nno"}}, "required": []any{"v"}}},
			{Name: "tasks", NotOffered: "it needs task augmentation"},
		},
	}
}

// The files load as written, whatever the server's names and texts.
func TestWriteLoads(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "suite")
	files, err := Write(dir, hostile())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "servers.yaml"), filepath.Join(dir, "evil.yaml"), filepath.Join(dir, "gates.yaml")}
	if !slices.Equal(files, want) {
		t.Errorf("wrote %q, want %q", files, want)
	}
	suite, err := scenario.Load(dir)
	if err != nil {
		t.Fatalf("the files do not load: %v", err)
	}
	var names []string
	for _, s := range suite.Scenarios {
		names = append(names, s.Name)
	}
	if want := []string{"evil-do.this", "evil-do_it"}; !slices.Equal(names, want) {
		t.Errorf("scenarios %q, want %q (one per tool the host can call)", names, want)
	}
	cases, err := suite.Cases(scenario.CaseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	opts := cases[1].HostOptions()
	if got := opts.Servers[0]; got.Command != "/bin/true" || !slices.Equal(got.Args, []string{"--x: y", "#not-a-comment", os.Getenv("HOME")}) || !slices.Equal(got.Env, []string{"K=v # x"}) {
		t.Errorf("server %+v: want the command, args and env as given", got)
	}
	text, err := os.ReadFile(want[1])
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		"\n# do.this: Line one # not a comment\n",
		"\n        'q: x': |- # required: a\n          - item\n          ---\n",
		"Not here, since this host cannot call them: tasks (it needs task augmentation).",
		"\napprovals: [evil__do_it]\n",
		"# Its annotations warn that it may destroy data.",
	} {
		if !strings.Contains(string(text), w) {
			t.Errorf("evil.yaml has no %q:\n%s", w, text)
		}
	}
	if strings.Count(string(text), "approvals:") != 1 {
		t.Errorf("evil.yaml: want approvals for the one tool that is not read-only:\n%s", text)
	}
	if _, err := scenario.LoadServers(filepath.Join(dir, ServersFile)); err != nil {
		t.Error(err)
	}
	gates, err := gate.Load(filepath.Join(dir, GatesFile))
	if err != nil || len(gates) != 1 || gates[0].Text != "pass_rate >= 1" {
		t.Errorf("gates.yaml: %v, %v; want pass_rate >= 1", gates, err)
	}
}

// init never writes over a file, and writes nothing when one is there.
func TestWriteNeverOverwrites(t *testing.T) {
	for _, existing := range []string{"servers.yaml", "evil.yaml", "gates.yaml"} {
		t.Run(existing, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, existing)
			if err := os.WriteFile(path, []byte("mine\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Write(dir, hostile())
			if !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), path) {
				t.Errorf("Write: %v, want ErrExists naming %s", err, path)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				t.Errorf("%d files in the folder, want only the one that was there", len(entries))
			}
			if data, _ := os.ReadFile(path); string(data) != "mine\n" {
				t.Errorf("%s = %q, want it untouched", existing, data)
			}
		})
	}
}
