package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// npmPeer sets up an npm harness to make the n calls without a model, as
// each one's own documentation has it: mcpvals's tool health tests, and
// promptfoo's mcp provider, which calls a tool named in the prompt.
func npmPeer(name, modules, dir, node, everything string, n int) peer {
	server := []string{everything, "stdio"}
	switch name {
	case "mcpvals":
		tests := make([]map[string]any, n)
		for i := range tests {
			// mcpvals compares results as JSON text: the keys in the
			// server's order.
			tests[i] = map[string]any{"name": "echo", "args": map[string]any{"message": "hello"},
				"expectedResult": json.RawMessage(`{"content":[{"type":"text","text":"Echo: hello"}]}`)}
		}
		// After its results mcpvals waits out its timeout (30 s by
		// default) before it exits; 5 s still lets the server start on a
		// busy machine.
		config := map[string]any{
			"server":           map[string]any{"transport": "stdio", "command": node, "args": server},
			"toolHealthSuites": []any{map[string]any{"name": "echo", "tests": tests}},
			"workflows":        []any{},
			"timeout":          5000,
		}
		data, err := json.Marshal(config)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, "mcpvals.json"), data, 0o644)
		}
		if err != nil {
			return peer{name: name, why: err.Error()}
		}
		return peer{name: name, args: []string{node, filepath.Join(modules, "mcpvals/dist/cli/index.js"), "eval", "mcpvals.json", "--tool-health-only"}}
	case "promptfoo":
		var b strings.Builder
		fmt.Fprintf(&b, "providers:\n  - id: mcp\n    config:\n      enabled: true\n      server:\n        command: %q\n        args: [%q, stdio]\nprompts:\n  - \"{{call}}\"\ntests:\n", node, everything)
		for range n {
			b.WriteString("  - vars: {call: '{\"tool\":\"echo\",\"args\":{\"message\":\"hello\"}}'}\n    assert: [{type: contains, value: 'Echo: hello'}]\n")
		}
		if err := os.WriteFile(filepath.Join(dir, "promptfooconfig.yaml"), []byte(b.String()), 0o644); err != nil {
			return peer{name: name, why: err.Error()}
		}
		// One call at a time, as the others make them; nothing written,
		// nothing cached, nothing sent home.
		return peer{name: name,
			args: []string{node, filepath.Join(modules, "promptfoo/dist/src/entrypoint.js"), "eval", "-c", "promptfooconfig.yaml", "--no-cache", "--no-write", "--no-table", "-j", "1"},
			env:  []string{"PROMPTFOO_DISABLE_TELEMETRY=1", "PROMPTFOO_DISABLE_UPDATE=1", "PROMPTFOO_CONFIG_DIR=" + filepath.Join(dir, "promptfoo")},
		}
	}
	return peer{name: name, why: "unknown"}
}
