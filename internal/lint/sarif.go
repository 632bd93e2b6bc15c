package lint

import (
	"encoding/json"
	"io"
	"strings"
)

// SARIF 2.1.0 (OASIS), the format GitHub code scanning reads: a run of the
// tool "hosteval lint" with every rule (its help, and a link to its section
// of docs/lint.md), and a result per finding with its logical location
// (server, tool, field) and, when the server's definition is in a file
// (a servers file, a scenario, a saved catalog), that file and line as its
// physical location. Suppressed findings are results with their
// suppression and its justification.

// DocsURL is where docs/lint.md is published; a rule's helpUri is its
// section there.
const DocsURL = "https://github.com/hosteval/hosteval/blob/main/docs/lint.md"

// SARIFOptions say what the SARIF log says of the tool that wrote it.
type SARIFOptions struct {
	// Version is hosteval's version.
	Version string
}

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool        sarifTool         `json:"tool"`
	Results     []sarifResult     `json:"results"`
	Automation  *sarifAutomation  `json:"automationDetails,omitempty"`
	ColumnKind  string            `json:"columnKind"`
	Invocations []sarifInvocation `json:"invocations"`
}

type sarifAutomation struct {
	ID string `json:"id"`
}

type sarifInvocation struct {
	ExecutionSuccessful bool `json:"executionSuccessful"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	InformationURI string      `json:"informationUri"`
	Version        string      `json:"version,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifText struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown,omitempty"`
}

type sarifRule struct {
	ID               string          `json:"id"`
	Name             string          `json:"name"`
	ShortDescription sarifText       `json:"shortDescription"`
	FullDescription  sarifText       `json:"fullDescription"`
	Help             sarifText       `json:"help"`
	HelpURI          string          `json:"helpUri"`
	Default          sarifRuleConfig `json:"defaultConfiguration"`
	Properties       map[string]any  `json:"properties"`
}

type sarifRuleConfig struct {
	Level   string `json:"level"`
	Enabled bool   `json:"enabled"`
}

type sarifResult struct {
	RuleID       string             `json:"ruleId"`
	RuleIndex    int                `json:"ruleIndex"`
	Level        string             `json:"level"`
	Message      sarifText          `json:"message"`
	Locations    []sarifLocation    `json:"locations"`
	Fingerprints map[string]string  `json:"partialFingerprints"`
	Suppressions []sarifSuppression `json:"suppressions,omitempty"`
	Properties   map[string]any     `json:"properties"`
}

type sarifLocation struct {
	Physical *sarifPhysical `json:"physicalLocation,omitempty"`
	Logical  []sarifLogical `json:"logicalLocations"`
}

type sarifPhysical struct {
	Artifact sarifArtifact `json:"artifactLocation"`
	Region   *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

type sarifLogical struct {
	Name               string `json:"name"`
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind"`
}

type sarifSuppression struct {
	Kind          string `json:"kind"`
	Status        string `json:"status"`
	Justification string `json:"justification"`
}

// WriteSARIF writes the report as a SARIF 2.1.0 log.
func (r *Report) WriteSARIF(w io.Writer, opts SARIFOptions) error {
	run := sarifRun{
		Tool: sarifTool{Driver: sarifDriver{Name: "hosteval lint", InformationURI: "https://github.com/hosteval/hosteval",
			Version: opts.Version, Rules: []sarifRule{}}},
		Results:     []sarifResult{},
		Automation:  &sarifAutomation{ID: "hosteval-lint/"},
		ColumnKind:  "unicodeCodePoints",
		Invocations: []sarifInvocation{{ExecutionSuccessful: true}},
	}
	index := map[string]int{}
	for i, rule := range rules {
		index[rule.ID] = i
		level := r.Rules[rule.ID]
		if level == "" {
			level = rule.Severity
		}
		cfg := sarifRuleConfig{Level: string(level), Enabled: level != Off}
		if level == Off {
			cfg.Level = string(rule.Severity)
		}
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{
			ID: rule.ID, Name: ruleName(rule.ID),
			ShortDescription: sarifText{Text: rule.Title},
			FullDescription:  sarifText{Text: rule.Why},
			Help: sarifText{Text: rule.Why + "\n\nFix: " + rule.Fix,
				Markdown: "**" + rule.Title + "**\n\n" + rule.Why + "\n\n**Fix:** " + rule.Fix + "\n\n[docs/lint.md#" + rule.ID + "](" + DocsURL + "#" + rule.ID + ")"},
			HelpURI:    DocsURL + "#" + rule.ID,
			Default:    cfg,
			Properties: map[string]any{"tags": []string{"security", "mcp", strings.ToLower(rule.Group)}, "precision": "high", "problem.severity": problemSeverity(rule.Severity)},
		})
	}
	servers := map[string]ServerInfo{}
	for _, s := range r.Servers {
		servers[s.Name] = s
	}
	add := func(f Finding) {
		res := sarifResult{RuleID: f.Rule, RuleIndex: index[f.Rule], Level: string(f.Severity),
			Message:      sarifText{Text: sarifMessage(f)},
			Fingerprints: map[string]string{"hostevalFinding/v1": hashOf([]byte(f.Rule + "\x00" + f.Server + "\x00" + f.Tool + "\x00" + f.Pointer + "\x00" + f.Message))[:32]},
			Properties:   map[string]any{"server": f.Server, "field": f.Field, "pointer": f.Pointer, "fix": f.Fix},
		}
		if f.Tool != "" {
			res.Properties["tool"] = f.Tool
		}
		if f.Text != "" {
			res.Properties["text"] = f.Text
		}
		if len(f.Diff) > 0 {
			res.Properties["diff"] = f.Diff
		}
		loc := sarifLocation{Logical: []sarifLogical{{Name: f.Server, FullyQualifiedName: f.Server, Kind: "module"}}}
		fq := f.Server
		if f.Tool != "" {
			fq += "/" + f.Tool
			loc.Logical = append(loc.Logical, sarifLogical{Name: f.Tool, FullyQualifiedName: fq, Kind: "function"})
		}
		if f.Field != "" {
			loc.Logical = append(loc.Logical, sarifLogical{Name: f.Field, FullyQualifiedName: fq + "/" + f.Field, Kind: "member"})
		}
		if s := servers[f.Server]; s.Source != "" {
			loc.Physical = &sarifPhysical{Artifact: sarifArtifact{URI: sarifURI(s.Source)}}
			if s.Line > 0 {
				loc.Physical.Region = &sarifRegion{StartLine: s.Line}
			}
		}
		res.Locations = []sarifLocation{loc}
		if f.Suppression != nil {
			res.Suppressions = []sarifSuppression{{Kind: "external", Status: "accepted", Justification: f.Suppression.Reason}}
		}
		run.Results = append(run.Results, res)
	}
	for _, f := range r.Findings {
		add(f)
	}
	for _, f := range r.Suppressed {
		add(f)
	}
	log := sarifLog{Schema: "https://json.schemastore.org/sarif-2.1.0.json", Version: "2.1.0", Runs: []sarifRun{run}}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(log)
}

// sarifMessage is a result's message: what was found, the text quoted,
// the diff, and the fix.
func sarifMessage(f Finding) string {
	var b strings.Builder
	b.WriteString(f.Where() + ": " + f.Message)
	if f.Text != "" {
		b.WriteString("\nText: “" + f.Text + "”")
	}
	for _, d := range f.Diff {
		b.WriteString("\n  " + d)
	}
	b.WriteString("\nFix: " + f.Fix)
	return b.String()
}

// sarifURI is a file's path as a relative URI reference: forward slashes,
// and a leading ./ dropped.
func sarifURI(path string) string {
	path = strings.ReplaceAll(path, "\\", "/")
	return strings.TrimPrefix(path, "./")
}

// ruleName is a rule's ID in the PascalCase SARIF names use.
func ruleName(id string) string {
	var b strings.Builder
	for w := range strings.SplitSeq(id, "-") {
		if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}

// problemSeverity is GitHub's name for a severity.
func problemSeverity(s Severity) string {
	if s == Note {
		return "recommendation"
	}
	return string(s)
}
