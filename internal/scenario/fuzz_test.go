package scenario

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/hosteval/hosteval/internal/host"
)

// FuzzLoad: whatever the bytes of a scenario file, Load returns (it does
// not panic or hang: aliases are bounded, nothing is expanded twice), and
// every problem names the file and, unless it is about the whole file, a
// line. A loaded suite expands into cases. The seeds in
// testdata/fuzz/FuzzLoad run with go test; make fuzz searches further.
func FuzzLoad(f *testing.F) {
	f.Add([]byte("name: s\nservers: [{name: x, command: x}]\nquestion: q\nmodel: {scripted: [{answer: ok}]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "s.yaml")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		suite, err := Load(path)
		if err != nil {
			var le *LoadError
			if !errors.As(err, &le) {
				t.Fatalf("Load error is %T, want *LoadError: %v", err, err)
			}
			for _, p := range le.Problems {
				if p.File == "" || (p.Line <= 0 && p.Msg != "no scenarios found" && filepath.Dir(p.File) == dir) {
					t.Errorf("problem without a file or line: %#v", p)
				}
			}
			return
		}
		// A server's oauth: block needs a handler, which no test builds here.
		noOAuth := func(OAuthServer) (host.OAuthHandler, error) { return nil, nil }
		cases, err := suite.Cases(CaseOptions{OAuth: noOAuth})
		if err != nil {
			t.Fatalf("Cases: %v", err)
		}
		for _, c := range cases {
			c.HostOptionsIn(dir)
			if _, err := c.NewModel(); err != nil {
				t.Errorf("a loaded case's model does not build: %v", err)
			}
		}
	})
}

// TestCasesBounded: a suite that would expand into more than MaxCases
// cases is an error, not a run that eats the machine's memory.
func TestCasesBounded(t *testing.T) {
	suite := loadText(t, "name: s\nservers: [{name: x, command: x}]\nquestion: q\nrepeat: 10000\nmodel: {scripted: []}\nvariants: [{name: a}, {name: b}]\n")
	if _, err := suite.Cases(CaseOptions{}); err != nil {
		t.Fatalf("20000 cases: %v", err)
	}
	_, err := suite.Cases(CaseOptions{Repeat: MaxCases})
	if err == nil || err.Error() != "the suite expands into more than 1000000 cases (scenario s: variants x models x repeat)" {
		t.Errorf("Cases with repeat %d: %v", MaxCases, err)
	}
	p := filepath.Join(t.TempDir(), "s.yaml")
	os.WriteFile(p, []byte("name: s\nservers: [{name: x, command: x}]\nquestion: q\nrepeat: 99999999\nmodel: {scripted: []}\n"), 0o644)
	if _, err := Load(p); err == nil || err.Error() != p+":4: repeat: want 10000 at most, got 99999999" {
		t.Errorf("Load: %v", err)
	}
}
