package scenario

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A suite lists the files it was read from, each once, with the hash of
// its content; its cases are numbered in the order they expand.
func TestSuiteSources(t *testing.T) {
	t.Setenv("HOSTEVAL_TEST_TOKEN", "tok")
	basic := filepath.Join("testdata", "valid", "scenarios", "basic.yaml")
	inline := filepath.Join("testdata", "valid", "scenarios", "inline.yaml")
	suite, err := Load(basic, inline)
	if err != nil {
		t.Fatal(err)
	}
	sum := func(path string) string {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		s := sha256.Sum256(data)
		return hex.EncodeToString(s[:])
	}
	servers := filepath.Join("testdata", "valid", "servers.yaml")
	want := []Source{
		{File: basic, SHA256: sum(basic)},
		{File: servers, SHA256: sum(servers)},
		{File: inline, SHA256: sum(inline)},
	}
	if diff := cmp.Diff(want, suite.Sources); diff != "" {
		t.Errorf("sources (-want +got):\n%s", diff)
	}
	cases, err := suite.Cases(CaseOptions{Repeat: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		if c.Index != i {
			t.Errorf("case %s has index %d, want %d", c.ID, c.Index, i)
		}
	}
}
