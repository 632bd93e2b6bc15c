package fixturetest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// RouteDataset writes a route-only routing eval into dir and returns its
// scenario file: rows questions (one in ten for no tool) over the tools
// files in catalogs (the repository's scenarios/catalogs: the npm peers'
// saved tools), two description variants, the lexical router. A question
// is its tool's description's first words and the row's number, so the
// router finds most of them and no two rows are alike.
func RouteDataset(tb testing.TB, dir, catalogs string, rows int) string {
	tb.Helper()
	type tool struct{ server, name, desc string }
	var tools []tool
	servers := []string{"everything", "filesystem", "memory"}
	var yaml strings.Builder
	for _, server := range servers {
		data, err := os.ReadFile(filepath.Join(catalogs, server+".json"))
		if err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, server+".json"), data, 0o644); err != nil {
			tb.Fatal(err)
		}
		var file struct {
			Tools []struct {
				Name        string `json:"name"`
				Description string `json:"description"`
				Execution   struct {
					TaskSupport string `json:"taskSupport"`
				} `json:"execution"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(data, &file); err != nil {
			tb.Fatal(err)
		}
		for _, t := range file.Tools {
			if t.Execution.TaskSupport != "required" {
				tools = append(tools, tool{server, t.Name, t.Description})
			}
		}
		fmt.Fprintf(&yaml, "  - {name: %s, catalog: %s.json}\n", server, server)
	}
	var b strings.Builder
	b.WriteString("id,question,tools,tags\n")
	for i := range rows {
		if i%10 == 9 {
			fmt.Fprintf(&b, "r%05d,what is the weather in city %d tomorrow?,,no-tool\n", i, i)
			continue
		}
		t := tools[i%len(tools)]
		words := strings.FieldsFunc(t.desc, func(r rune) bool { return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') })
		words = words[min(len(words), i/len(tools)%3):min(len(words), 8)]
		fmt.Fprintf(&b, "r%05d,%s number %d,%s__%s,%s\n", i, strings.Join(words, " "), i, t.server, t.name, t.server)
	}
	WriteFiles(tb, dir, map[string]string{
		"rows.csv": b.String(),
		"route.yaml": "name: route\nservers:\n" + yaml.String() + `mode: route
model: {lexical: {min_score: 2}}
dataset: rows.csv
variants:
  - name: server
  - name: terse
    host: {descriptions: {filesystem__read_text_file: "Read a file.", memory__read_graph: "Read the graph."}}
`,
	})
	return filepath.Join(dir, "route.yaml")
}
