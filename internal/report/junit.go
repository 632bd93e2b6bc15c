package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/hosteval/hosteval/internal/record"
)

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Errors    int         `xml:"errors,attr"`
	Time      string      `xml:"time,attr"`
	Timestamp string      `xml:"timestamp,attr,omitempty"`
	File      string      `xml:"file,attr,omitempty"`
	Cases     []junitCase `xml:"testcase"`
}

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
// and an <error> for a case that could not run. Times are seconds.
func WriteJUnit(w io.Writer, s *Summary) error {
	root := junitSuites{Name: "hosteval " + s.RunID}
	var total float64
	for i := 0; i < len(s.Cases); {
		j := i
		for j < len(s.Cases) && s.Cases[j].Scenario == s.Cases[i].Scenario {
			j++
		}
		suite := junitSuite{Name: s.Cases[i].Scenario, File: s.Cases[i].File}
		var suiteMS float64
		var first time.Time
		for k := i; k < j; k++ {
			c := &s.Cases[k]
			suite.Tests++
			suiteMS += c.MS
			if !c.Started.IsZero() && (first.IsZero() || c.Started.Before(first)) {
				first = c.Started
			}
			jc := junitCase{
				Name: c.Name, Classname: c.Scenario, Time: seconds(c.MS),
				File: c.File, Line: c.Line,
			}
			switch f := failureOf(c); c.Status {
			case record.StatusPass:
			case record.StatusError:
				suite.Errors++
				jc.Error = &junitProblem{Message: firstLine(f.Error), Type: "error", Text: f.Error}
			default:
				suite.Failures++
				if f.Error != "" {
					// A case that failed as a whole (its conversation left
					// its cassette) says why before any expectation.
					jc.Failures = append(jc.Failures, junitProblem{Message: firstLine(f.Error), Type: "case", Text: f.Error})
				}
				for _, e := range f.Expectations {
					jc.Failures = append(jc.Failures, junitProblem{
						Message: e.Name, Type: "expectation", Text: expectationText(e),
					})
				}
				if len(jc.Failures) == 0 {
					// A failed case must show as failed even if no
					// expectation says why.
					jc.Failures = append(jc.Failures, junitProblem{
						Message: "case failed", Type: f.Status, Text: f.Error,
					})
				}
			}
			jc.SystemOut = caseOut(c)
			suite.Cases = append(suite.Cases, jc)
		}
		suite.Time = seconds(suiteMS)
		if !first.IsZero() {
			suite.Timestamp = first.UTC().Format(time.RFC3339)
		}
		total += suiteMS
		root.Tests += suite.Tests
		root.Failures += suite.Failures
		root.Errors += suite.Errors
		root.Suites = append(root.Suites, suite)
		i = j
	}
	root.Time = seconds(total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(root); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	return nil
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
	if c.ModelFigures != (ModelFigures{}) {
		fmt.Fprintf(&b, " model_errors=%d replayed_requests=%d cached_requests=%d cost=%s", c.ModelErrors, c.Replayed, c.Cached, fmtCost(c.Cost))
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

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
