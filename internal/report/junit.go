package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"iter"
	"strconv"
	"strings"
	"time"

	"github.com/hosteval/hosteval/internal/record"
)

type junitCase struct {
	Name      string         `xml:"name,attr"`
	Classname string         `xml:"classname,attr"`
	Time      string         `xml:"time,attr"`
	File      string         `xml:"file,attr,omitempty"`
	Line      int            `xml:"line,attr,omitempty"`
	Failures  []junitProblem `xml:"failure"`
	Error     *junitProblem  `xml:"error"`
	SystemOut string         `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes s as JUnit XML: one testsuite per scenario, one
// testcase per case named scenario[/variant][/model]#repeat, one <failure>
// per failed expectation (message: the expectation; text: what was found),
// and an <error> for a case that could not run. A case made from a dataset
// row is a testcase of that row: named by its case ID, of the class of its
// routing group, with what the row expected and what was chosen in its
// system-out, failed (type "routing") when the row's verdict did not hold
// even if its case passed its expectations. Times are seconds. Cases
// are written as they are read from s, one at a time: a run of 100,000
// cases is never a document in memory.
func WriteJUnit(w io.Writer, s *Summary) error {
	suites, root := junitSuites(s)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	start := func(name string, attrs ...string) error {
		el := xml.StartElement{Name: xml.Name{Local: name}}
		for i := 0; i < len(attrs); i += 2 {
			if attrs[i+1] != "" || !strings.HasSuffix(attrs[i], "?") {
				el.Attr = append(el.Attr, xml.Attr{Name: xml.Name{Local: strings.TrimSuffix(attrs[i], "?")}, Value: attrs[i+1]})
			}
		}
		return enc.EncodeToken(el)
	}
	end := func(name string) error { return enc.EncodeToken(xml.EndElement{Name: xml.Name{Local: name}}) }
	err := start("testsuites", "name", "hosteval "+s.RunID, "tests", strconv.Itoa(root.tests),
		"failures", strconv.Itoa(root.failures), "errors", strconv.Itoa(root.errors), "time", seconds(root.ms))
	next, stop := iter.Pull(s.allCases())
	defer stop()
	for _, suite := range suites {
		if err != nil {
			break
		}
		timestamp := ""
		if !suite.first.IsZero() {
			timestamp = suite.first.UTC().Format(time.RFC3339)
		}
		err = start("testsuite", "name", suite.name, "tests", strconv.Itoa(suite.tests),
			"failures", strconv.Itoa(suite.failures), "errors", strconv.Itoa(suite.errors), "time", seconds(suite.ms),
			"timestamp?", timestamp, "file?", suite.file)
		for range suite.tests {
			if err != nil {
				break
			}
			c, _ := next()
			jc := junitCaseOf(c)
			err = enc.EncodeElement(jc, xml.StartElement{Name: xml.Name{Local: "testcase"}})
		}
		if err == nil {
			err = end("testsuite")
		}
	}
	if err == nil {
		err = end("testsuites")
	}
	if err == nil {
		err = enc.Close()
	}
	if err == nil {
		_, err = io.WriteString(w, "\n")
	}
	if err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	return nil
}

// junitTally is a testsuite's (or the whole document's) attributes.
type junitTally struct {
	name, file              string
	tests, failures, errors int
	ms                      float64
	first                   time.Time
}

// junitSuites tallies s's cases per scenario, in case order, and in all.
func junitSuites(s *Summary) (suites []junitTally, root junitTally) {
	for c := range s.allCases() {
		if len(suites) == 0 || suites[len(suites)-1].name != c.Scenario {
			suites = append(suites, junitTally{name: c.Scenario, file: c.File})
		}
		t := &suites[len(suites)-1]
		t.tests++
		t.ms += c.MS
		if !c.Started.IsZero() && (t.first.IsZero() || c.Started.Before(t.first)) {
			t.first = c.Started
		}
		switch junitStatus(c) {
		case record.StatusPass:
		case record.StatusError:
			t.errors++
		default:
			t.failures++
		}
	}
	for _, t := range suites {
		root.tests += t.tests
		root.failures += t.failures
		root.errors += t.errors
		root.ms += t.ms
	}
	return suites, root
}

// junitStatus is a testcase's status: its case's, except that a dataset
// row whose routing verdict did not hold fails, since the row is what the
// testcase tests (a case passes on its expectations alone).
func junitStatus(c *CaseStats) string {
	if c.Status == record.StatusPass && c.Route != nil && !c.Route.Correct {
		return record.StatusFail
	}
	return c.Status
}

func junitCaseOf(c *CaseStats) junitCase {
	jc := junitCase{
		Name: c.Name, Classname: c.Scenario, Time: seconds(c.MS),
		File: c.File, Line: c.Line,
	}
	if c.Route != nil {
		// A case made from a dataset row is a test of that row: its
		// class is its routing group, so that a CI page lists a group's
		// rows together.
		g := RoutingStats{RouteKey: RouteKey{GroupKey: c.GroupKey, Distractors: c.Route.Distractors}, Lexical: c.Route.Lexical}
		jc.Classname = g.Label()
	}
	switch f := failureOf(c); junitStatus(c) {
	case record.StatusPass:
	case record.StatusError:
		jc.Error = &junitProblem{Message: firstLine(f.Error), Type: "error", Text: f.Error}
	default:
		if f.Error != "" {
			// A case that failed as a whole (its conversation left its
			// cassette) says why before any expectation.
			jc.Failures = append(jc.Failures, junitProblem{Message: firstLine(f.Error), Type: "case", Text: f.Error})
		}
		for _, e := range f.Expectations {
			jc.Failures = append(jc.Failures, junitProblem{
				Message: e.Name, Type: "expectation", Text: expectationText(e),
			})
		}
		if c.Route != nil && !c.Route.Correct {
			jc.Failures = append(jc.Failures, junitProblem{Message: routeLine(c.Route), Type: "routing", Text: routeLine(c.Route)})
		}
		if len(jc.Failures) == 0 {
			// A failed case must show as failed even if no expectation
			// says why.
			jc.Failures = append(jc.Failures, junitProblem{
				Message: "case failed", Type: f.Status, Text: f.Error,
			})
		}
	}
	jc.SystemOut = caseOut(c)
	return jc
}

func seconds(ms float64) string { return strconv.FormatFloat(ms/1000, 'f', 3, 64) }

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// caseOut is the case's figures, for a CI page that shows system-out.
func caseOut(c *CaseStats) string {
	var b strings.Builder
	fmt.Fprintf(&b, "case_id=%s steps=%d model_requests=%d unknown_tools=%d timeouts=%d protocol_errors=%d asked_user=%d result_bytes=%d tool_def_tokens=%d",
		c.CaseID, c.Steps, c.ModelRequests, c.UnknownTools, c.Timeouts, c.ProtocolErrors, c.AskedUser, c.ResultBytes, c.ToolDefTokens)
	if !c.ModelFigures.none() {
		fmt.Fprintf(&b, " model_errors=%d replayed_requests=%d cached_requests=%d cost=%s", c.ModelErrors, c.Replayed, c.Cached, fmtCost(c.Cost))
		if c.Truncated > 0 {
			fmt.Fprintf(&b, " truncated=%d", c.Truncated)
		}
	}
	if r := c.Route; r != nil {
		expected := strings.Join(r.Expected, ",")
		if expected == "" {
			expected = record.NoTool
		}
		fmt.Fprintf(&b, "\nrow=%s expected=%s chosen=%s correct=%t", r.Row, expected, orDash(r.Chosen), r.Correct)
		if r.ArgsOK != nil {
			fmt.Fprintf(&b, " args_ok=%t", *r.ArgsOK)
		}
		if r.ArgsDetail != "" {
			fmt.Fprintf(&b, " args_detail=%q", r.ArgsDetail)
		}
	}
	for _, sv := range c.Servers {
		fmt.Fprintf(&b, "\nserver %s protocol=%s", sv.Name, orDash(sv.Protocol))
		if sv.VersionFailure {
			b.WriteString(" version_failure")
		}
		if sv.Error != "" {
			fmt.Fprintf(&b, " error=%q", sv.Error)
		}
	}
	return b.String()
}

// routeLine says what a row expected and what was chosen.
func routeLine(r *record.Route) string {
	expected := strings.Join(r.Expected, " or ")
	if expected == "" {
		expected = record.NoTool
	}
	s := "routing: expected " + expected + ", chose " + orDash(r.Chosen)
	if r.ArgsDetail != "" {
		s += "; arguments: " + r.ArgsDetail
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
