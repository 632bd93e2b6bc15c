package scenario

import (
	"os/exec"
	"strings"
	"testing"
)

// TestScenarioLanguageOnly: the scenario language depends on no room that
// runs cases or reads their results, nor on the table layouts: the gate
// grammar is internal/gate's, the text rules internal/text's, a tools file
// internal/catalog/toolsfile's. A new import that pulls one of them in,
// directly or not, fails here with the path that does.
func TestScenarioLanguageOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}: {{join .Imports " "}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const mod = "github.com/hosteval/hosteval/"
	forbidden := []string{"internal/report", "internal/runner", "internal/table", "internal/catalog", "internal/web", "cmd/hosteval"}
	importers := map[string][]string{} // a package -> the packages of the graph that import it
	for line := range strings.Lines(string(out)) {
		pkg, imports, _ := strings.Cut(strings.TrimSpace(line), ": ")
		for _, imp := range strings.Fields(imports) {
			importers[imp] = append(importers[imp], pkg)
		}
	}
	for _, f := range forbidden {
		if by, ok := importers[mod+f]; ok {
			t.Errorf("scenario depends on %s, imported by %s", f, strings.Join(by, ", "))
		}
	}
	if len(importers) < 10 {
		t.Fatalf("go list found %d imported packages: %s", len(importers), out)
	}
}
