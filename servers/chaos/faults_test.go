package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hosteval/hosteval/servers/fixturetest"
)

// TestFaultsFlag: -faults adds the fault tools it names to the seven; a
// name it does not know is a usage error.
func TestFaultsFlag(t *testing.T) {
	s := fixturetest.Start(t, bin, fixturetest.Options{Args: []string{"-faults", strings.Join(faultNames, ",")}})
	res, err := s.Session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	want := slices.Sorted(slices.Values(append([]string{"crash", "hang", "garbage", "huge", "weird_content", "plain_error", "ok"}, faultNames...)))
	if !slices.Equal(names, want) {
		t.Errorf("tools %q, want %q", names, want)
	}

	bad, err := fixturetest.StartErr(t, bin, fixturetest.Options{Args: []string{"-faults", "deaf,nope"}})
	if err == nil {
		t.Fatal("connected, want the server to refuse the flag")
	}
	wantErr := `chaos: -faults: unknown fault "nope"`
	if !strings.Contains(bad.Stderr.String(), wantErr) || bad.Cmd.ProcessState.ExitCode() != 2 {
		t.Errorf("stderr %q, %v; want %q and exit status 2", bad.Stderr, bad.Cmd.ProcessState, wantErr)
	}
}

// TestBadUTF8: the answer holds bytes that are not UTF-8 (the SDK's client
// reads each as U+FFFD).
func TestBadUTF8(t *testing.T) {
	s := fixturetest.Start(t, bin, fixturetest.Options{Args: []string{"-faults", "bad_utf8"}})
	res, err := callTool(t.Context(), s, "bad_utf8", 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; text != "caf\uFFFD \uFFFD" {
		t.Errorf("text %q, want the two bytes replaced", text)
	}
	carriesOn(t, s)
}

func TestFloodLines(t *testing.T) {
	var buf strings.Builder
	n, err := flood(&buf, 250)
	if err != nil || n != 3 {
		t.Fatalf("flood(250) = %d, %v; want 3 lines", n, err)
	}
	lines := strings.SplitAfter(buf.String(), "\n")
	if len(lines) != 4 || lines[3] != "" {
		t.Fatalf("wrote %q", buf.String())
	}
	for i, l := range lines[:3] {
		if want := fmt.Sprintf("flood %09d ", i); len(l) != floodLine || !strings.HasPrefix(l, want) || strings.Trim(l[len(want):], "x\n") != "" {
			t.Errorf("line %d = %q, want %d bytes starting %q", i, l, floodLine, want)
		}
	}
}
