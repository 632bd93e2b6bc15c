package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/hosteval/hosteval/internal/record"
)

func TestJUnitStructure(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, fixture(t, "base")); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Errors   int `xml:"errors,attr"`
		Suites   []struct {
			Name     string `xml:"name,attr"`
			Tests    int    `xml:"tests,attr"`
			Failures int    `xml:"failures,attr"`
			Errors   int    `xml:"errors,attr"`
			Cases    []struct {
				Name     string `xml:"name,attr"`
				Failures []struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
				Error *struct {
					Message string `xml:"message,attr"`
				} `xml:"error"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("junit does not parse: %v", err)
	}
	if doc.Tests != 15 || doc.Failures != 4 || doc.Errors != 1 {
		t.Errorf("totals tests=%d failures=%d errors=%d, want 15 4 1", doc.Tests, doc.Failures, doc.Errors)
	}
	var suites []string
	cases := map[string]string{}
	for _, s := range doc.Suites {
		suites = append(suites, s.Name)
		for _, c := range s.Cases {
			var problems []string
			for _, f := range c.Failures {
				problems = append(problems, "failure: "+f.Message+" | "+f.Text)
			}
			if c.Error != nil {
				problems = append(problems, "error: "+c.Error.Message)
			}
			cases[c.Name] = strings.Join(problems, "; ")
		}
	}
	wantSuites := []string{"chaos-failures", "legacy-pinned", "search-desc", "ticket-accepted", "ticket-declined", "unknown-tool"}
	if diff := cmp.Diff(wantSuites, suites); diff != "" {
		t.Errorf("suites (-want +got):\n%s", diff)
	}
	want := map[string]string{
		"chaos-failures/scripted#0": `failure: answer_matches (?i)could not | partial | answer_matches (?i)could not | partial (line 23): answer "Here is <everything> & more" does not match; ` +
			`failure: protocol_errors <= 1 | protocol_errors <= 1 (line 24): found 3 (-32603 x2, -32602 x1)`,
		"legacy-pinned/scripted#0":                    "error: server legacy: version failure: speaks 2025-11-25, pinned to 2026-07-28",
		"ticket-declined/scripted#0":                  "failure: tool tickets__open_ticket outcome=ok | tool tickets__open_ticket outcome=ok (line 34): outcome=tool_error: error: the person declined the ticket",
		"search-desc/b-verbose/openai:gpt-oss-120b#3": "",
		"ticket-accepted/scripted#0":                  "",
	}
	for name, w := range want {
		got, ok := cases[name]
		if !ok {
			t.Errorf("no testcase %q", name)
			continue
		}
		if got != w {
			t.Errorf("testcase %q:\n got %q\nwant %q", name, got, w)
		}
	}
	if len(cases) != 15 {
		t.Errorf("testcases = %d, want 15", len(cases))
	}
}

func TestJUnitFailedWithoutExpectation(t *testing.T) {
	s := Aggregate(&record.Run{Records: []record.Record{{Scenario: "s", Model: "m", Status: record.StatusFail, Error: "turn 1 stopped at max_steps"}}})
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `<failure message="turn 1 stopped at max_steps" type="case">turn 1 stopped at max_steps</failure>`) {
		t.Errorf("a failed case without failed expectations has no <failure>:\n%s", buf.String())
	}
}

// hostile is a run whose names and messages try to break every format.
func hostile() *Summary {
	evil := `<script>alert("x")</script> | *bold* _it_ [l](http://e) & "q"` + "\nnext"
	return Aggregate(&record.Run{Dir: "r", Records: []record.Record{{
		RunID: "r<1>", Scenario: "s<script>", Variant: "v|1", Model: "m&m", CaseID: "c",
		Status: record.StatusFail, Error: evil,
		Expectations: []record.Expectation{{Name: evil, Detail: evil}},
		Calls:        []record.Call{{Outcome: record.OutcomeOK, MS: 1}},
	}}})
}

func TestHTMLEscapesAndIsSelfContained(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteHTML(&buf, hostile(), Options{}); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	if strings.Contains(html, "<script>") {
		t.Error("a name reached the page unescaped")
	}
	if !strings.Contains(html, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;") {
		t.Error("the escaped message is missing")
	}
	// Nothing is loaded from anywhere: no src, href, @import or url().
	for _, re := range []string{`\bsrc=`, `\bhref=`, `@import`, `url\(`, `<link`} {
		if regexp.MustCompile(re).MatchString(html) {
			t.Errorf("page matches %s: not self-contained", re)
		}
	}
	for _, want := range []string{"<style>", "<svg", "</html>"} {
		if !strings.Contains(html, want) {
			t.Errorf("page has no %s", want)
		}
	}
}

func TestMarkdownEscapes(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, hostile(), Options{}); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	if regexp.MustCompile(`(^|[^\\])<script>`).MatchString(md) {
		t.Error("raw HTML reached the Markdown")
	}
	// Every table row has as many unescaped pipes as its header.
	for _, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		if !strings.Contains(line, "s&lt;script&gt;") {
			continue
		}
		cells := len(regexp.MustCompile(`(^|[^\\])\|`).FindAllString(line, -1))
		if cells < 3 {
			t.Errorf("row lost its cells: %q", line)
		}
		if strings.Contains(line, "v|1") {
			t.Errorf("unescaped pipe in row: %q", line)
		}
	}
	if strings.Contains(md, "alert(\"x\")&lt;/script&gt; | ") {
		t.Error("unescaped pipe in a failure line")
	}
}

func TestSummaryJSONSchema(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSummaryJSON(&buf, fixture(t, "base")); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["schema"] != float64(SummarySchema) {
		t.Errorf("schema = %v, want %d", doc["schema"], SummarySchema)
	}
	// The documented top-level fields, no more and no fewer.
	var keys []string
	for k := range doc {
		keys = append(keys, k)
	}
	want := []string{"failures", "groups", "incomplete", "run", "run_id", "schema", "tools", "totals", "warnings"}
	if diff := cmp.Diff(want, keys, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("top-level fields (-want +got):\n%s", diff)
	}
	read, err := ReadSummaryJSON(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if g := read.Group(GroupKey{Scenario: "search-desc", Variant: "a-terse", Model: "openai:gpt-oss-120b"}); g == nil || g.PassRate != 0.5 || g.Latency.N != 6 {
		t.Errorf("group read back = %+v", g)
	}
}

// TestReadSummaryJSONSchema1: a summary.json of schema 1, which listed
// every case, reads back into a summary whose reports show those cases and
// failures as they were.
func TestReadSummaryJSONSchema1(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "summary-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	old, err := ReadSummaryJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	cur := fixture(t, "base")
	if diff := cmp.Diff(cur.Failures, old.Failures); diff != "" {
		t.Errorf("failures (-from records +from schema 1):\n%s", diff)
	}
	var want, got bytes.Buffer
	if err := CaseTable(cur).WriteCSV(&want); err != nil {
		t.Fatal(err)
	}
	if err := CaseTable(old).WriteCSV(&got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.String(), got.String()); diff != "" {
		t.Errorf("cases table (-from records +from schema 1):\n%s", diff)
	}
	if g := old.Group(GroupKey{Scenario: "ticket-accepted", Model: "scripted"}); g == nil || g.Latency.N != 6 {
		t.Errorf("group read back = %+v", g)
	}
}

func TestWriteReports(t *testing.T) {
	s := fixture(t, "base")
	dir := t.TempDir()
	paths, err := WriteReports(dir, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, SummaryFile), filepath.Join(dir, JUnitFile), filepath.Join(dir, MarkdownFile), filepath.Join(dir, HTMLFile)}
	if diff := cmp.Diff(want, paths); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
	for _, g := range []struct{ file, golden string }{
		{SummaryFile, "base.summary.json"}, {JUnitFile, "base.junit.xml"}, {MarkdownFile, "base.md"}, {HTMLFile, "base.html"},
	} {
		got, err := os.ReadFile(filepath.Join(dir, g.file))
		if err != nil {
			t.Fatal(err)
		}
		golden(t, g.golden, got)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 4 {
		t.Errorf("folder has %d entries, want 4 (a temporary file left behind?)", len(entries))
	}
}

var errDiskFull = errors.New("disk full")

// failingWriter takes n bytes, then fails every write.
type failingWriter struct{ n int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		n := w.n
		w.n = 0
		return n, errDiskFull
	}
	w.n -= len(p)
	return len(p), nil
}

func TestWriteErrors(t *testing.T) {
	_, next, opts := fixtureVerdicts(t)
	tests := []struct {
		name  string
		write func(io.Writer) error
	}{
		{"text", func(w io.Writer) error { return WriteText(w, next, opts) }},
		{"markdown", func(w io.Writer) error { return WriteMarkdown(w, next, opts) }},
		{"html", func(w io.Writer) error { return WriteHTML(w, next, opts) }},
		{"junit", func(w io.Writer) error { return WriteJUnit(w, next) }},
		{"summary", func(w io.Writer) error { return WriteSummaryJSON(w, next) }},
		{"compare", func(w io.Writer) error { return WriteCompare(w, opts.Comparison) }},
		{"gates", func(w io.Writer) error { return WriteGates(w, opts.Gates) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var whole bytes.Buffer
			if err := tt.write(&whole); err != nil {
				t.Fatal(err)
			}
			// The disk fills at the start, in the middle, and one byte
			// before the end: the error must come back every time.
			for _, at := range []int{0, whole.Len() / 2, whole.Len() - 1} {
				if err := tt.write(&failingWriter{n: at}); !errors.Is(err, errDiskFull) {
					t.Errorf("disk full after %d of %d bytes: err = %v, want %v", at, whole.Len(), err, errDiskFull)
				}
			}
		})
	}
}
