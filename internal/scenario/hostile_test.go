package scenario

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hosteval/hosteval/internal/yamlx"
)

const overBudget = "too many alias expansions: *d would pass 10000 nodes, the limit for one document"

// TestHostileYAML: a "billion laughs" (nine levels of nine aliases, 387
// million strings once expanded) in a form's content, in a scripted call's
// args or in a servers file ends with one problem naming the file and the
// line of the alias that passes the budget, before anything is expanded.
// (BenchmarkLoadAliasBomb shows how fast; the reports' and the CLI's
// tests cover gates files and chat scripts.)
func TestHostileYAML(t *testing.T) {
	tests := []struct {
		name  string
		paths []string
		want  []string
	}{
		{"elicitation content", []string{"testdata/hostile/content.yaml"}, []string{"testdata/hostile/content.yaml:13: " + overBudget}},
		{"scripted args", []string{"testdata/hostile/args.yaml"}, []string{"testdata/hostile/args.yaml:13: " + overBudget}},
		{"servers file", []string{"testdata/hostile/servers/uses.yaml"}, []string{"testdata/hostile/servers/servers.yaml:10: " + overBudget}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testEnv(t)
			_, err := Load(tt.paths...)
			var le *LoadError
			if !errors.As(err, &le) || !errors.Is(err, yamlx.ErrAliasBudget) {
				t.Fatalf("Load error = %v, want a *LoadError with ErrAliasBudget", err)
			}
			var got []string
			for _, p := range le.Problems {
				got = append(got, p.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
	_, err := LoadServers("testdata/hostile/servers/servers.yaml")
	if err == nil || err.Error() != "testdata/hostile/servers/servers.yaml:10: "+overBudget {
		t.Errorf("LoadServers error = %v, want the alias budget on line 10", err)
	}
}

func BenchmarkLoadAliasBomb(b *testing.B) {
	for b.Loop() {
		if _, err := Load("testdata/hostile/content.yaml"); !errors.Is(err, yamlx.ErrAliasBudget) {
			b.Fatalf("Load error = %v, want ErrAliasBudget", err)
		}
	}
}
