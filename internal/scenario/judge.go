package scenario

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hosteval/hosteval/internal/model"
	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/text"
	"github.com/hosteval/hosteval/internal/yamlx"
)

// The judge expectation: a model grades the case's final answer against a
// rubric after the conversation. The runner asks the judge (its request
// goes through the case's cassette, the cache and the endpoint limits like
// the model's) and puts the grade in Record.Judgements; evaluating the
// expectation only reads it, so that every report is rebuilt from records.

// judgeExpectDoc is a judge expectation.
type judgeExpectDoc struct {
	Judge *judgeDoc `yaml:"judge" required:"true" doc:"A model grades the final answer against a rubric, from 0 to 1, after the conversation; the score and the judge's reason are in the record and in a failure's detail."`
}

// judgeDoc is what a judge grades and with what.
type judgeDoc struct {
	Rubric      string         `yaml:"rubric" required:"true" doc:"What a good answer does, in plain words: the judge scores the case's final answer against it." example:"Names the team that owns jump-prod-02 and nothing it did not look up."`
	Model       *judgeModelDoc `yaml:"model" doc:"The judge: {openai: {...}} or {scripted: [...]}. Default: the case's model, when it is an openai model (a judge's temperature is 0 unless set)."`
	Threshold   *unitScore     `yaml:"threshold" doc:"The score needed to pass, in (0, 1] (default 0.7)." example:"0.8"`
	ToolResults *bool          `yaml:"tool_results" doc:"Show the judge what the tools returned (as the model got them), so that a rubric can ask whether the answer is true to them (default true; false grades the answer alone, with a shorter prompt)." example:"false"`
}

// judgeModelDoc chooses the judge.
type judgeModelDoc struct {
	Scripted []scriptedGradeDoc  `yaml:"scripted" want:"a list of grades" doc:"A scripted judge, for tests: the grades it gives, in order, the last one repeating." example:"[{score: 0.9, reason: Names the owner.}]"`
	OpenAI   *model.OpenAIConfig `yaml:"openai" doc:"A judge behind an OpenAI-compatible endpoint, configured like an openai model (its empty base_url, api_key and model come from the environment)."`
}

// scriptedGradeDoc is one grade of a scripted judge.
type scriptedGradeDoc struct {
	Score  *unitScore `yaml:"score" required:"true" doc:"The score, from 0 to 1." example:"0.9"`
	Reason string     `yaml:"reason" doc:"The judge's reason." example:"Names the owner."`
}

// unitScore is a number from 0 to 1.
type unitScore float64

func (s *unitScore) UnmarshalYAML(n *yamlx.Node) error {
	var v float64
	if !n.Decode(&v) {
		return nil
	}
	if v < 0 || v > 1 || math.IsNaN(v) {
		return fmt.Errorf("want a number from 0 to 1, got %s", n.Text())
	}
	*s = unitScore(v)
	return nil
}

func (*unitScore) JSONSchema(*yamlx.Reflector) *jsonschema.Schema {
	zero, one := 0.0, 1.0
	return &jsonschema.Schema{Type: "number", Minimum: &zero, Maximum: &one}
}

// judgeSpec is a judge expectation as loaded.
type judgeSpec struct {
	Judge
	// keyLine is where model would be written, for a problem about a
	// missing one.
	keyLine int
	path    string
	// modelNode is where the judge's model was read, nil when it was not
	// written.
	modelNode *yamlx.Node
}

// Judge is a judge expectation of a case, as the runner grades it.
type Judge struct {
	Rubric string
	// Threshold is the score needed to pass (model.DefaultJudgeThreshold
	// when the expectation gives none).
	Threshold float64
	// ToolResults shows the judge what the tools returned.
	ToolResults bool
	// Line is the expectation's line.
	Line int
	// Config is the judge; nil means the case's model.
	Config *model.JudgeConfig
}

// judgeExpect checks the grade the runner recorded for a judge expectation.
type judgeExpect struct {
	index     int // into the scenario's judges and Record.Judgements
	rubric    string
	threshold float64
}

func (j *judgeExpect) name() string {
	return fmt.Sprintf("judge %q threshold=%s", text.Shorten(j.rubric, 80), strconv.FormatFloat(j.threshold, 'g', -1, 64))
}

func (j *judgeExpect) eval(rec *finished) (bool, string) {
	if j.index >= len(rec.Judgements) {
		return false, "not graded: the case ended before its answer was graded"
	}
	g := rec.Judgements[j.index]
	if g.Error != "" {
		return false, "not graded: " + g.Error
	}
	if g.Passed {
		return true, ""
	}
	return false, fmt.Sprintf("score %s < %s (judge %s): %s", fmtScore(g.Score), fmtScore(g.Threshold), g.Judge, text.Shorten(g.Reason, 300))
}

func fmtScore(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }

// judgeExpect reads a judge expectation.
func (r *expectReader) judgeExpect() (checker, *judgeSpec) {
	if r.empty("judge", "{rubric: ..., model: ...}") {
		return nil, nil
	}
	var d judgeExpectDoc
	r.decode(&d)
	if !r.ok || d.Judge == nil {
		return nil, nil
	}
	jd := d.Judge
	n := r.n.At("judge")
	spec := &judgeSpec{Judge: Judge{Rubric: jd.Rubric, Threshold: model.DefaultJudgeThreshold, ToolResults: true, Line: r.n.Line()},
		keyLine: n.Line(), path: yamlx.Join(n.Path(), "model")}
	if strings.TrimSpace(jd.Rubric) == "" {
		errorAt(n, "rubric", "empty: want what a good answer does")
		r.ok = false
	}
	if jd.Threshold != nil {
		if *jd.Threshold == 0 {
			errorAt(n, "threshold", "want more than 0 (a threshold of 0 passes every answer)")
			r.ok = false
		}
		spec.Threshold = float64(*jd.Threshold)
	}
	if jd.ToolResults != nil {
		spec.ToolResults = *jd.ToolResults
	}
	if jd.Model != nil {
		spec.modelNode = n.At("model")
		cfg, ok := r.judgeConfig(jd.Model, spec.modelNode)
		r.ok = r.ok && ok
		spec.Config = cfg
	}
	if !r.ok {
		return nil, nil
	}
	return &judgeExpect{rubric: spec.Rubric, threshold: spec.Threshold}, spec
}

// judgeConfig checks a judge's model read at n.
func (r *expectReader) judgeConfig(d *judgeModelDoc, n *yamlx.Node) (*model.JudgeConfig, bool) {
	var cfg model.JudgeConfig
	switch {
	case d.Scripted != nil && d.OpenAI != nil:
		errorAtKey(n, "openai", "want one judge, scripted or openai, not both")
		return nil, false
	case d.Scripted != nil:
		if len(d.Scripted) == 0 {
			errorAt(n, "scripted", "empty: want at least one grade")
			return nil, false
		}
		for _, g := range d.Scripted {
			if g.Score == nil {
				return nil, false // reported
			}
			cfg.Scripted = append(cfg.Scripted, model.ScriptedGrade{Score: float64(*g.Score), Reason: g.Reason})
		}
		return &cfg, true
	case d.OpenAI != nil:
		// Checked by checkJudges, once the environment has filled it in.
		c := *d.OpenAI
		cfg.OpenAI = &c
		return &cfg, true
	}
	n.Errorf("want a judge: {openai: {...}} or {scripted: [...]}")
	return nil, false
}

// checkJudges checks, once the scenario's models are known, that a judge
// without a model of its own has an openai model to judge with.
func (f *fileCtx) checkJudges(sc *Scenario) {
	for _, j := range sc.judges {
		if c := j.Config; c != nil && c.OpenAI != nil {
			*c.OpenAI = c.OpenAI.WithEnv(func(k string) string { v, _ := f.l.lookupEnv(k); return v })
			// NewOpenAI names the field from the openai key down, where
			// NewOpenAIJudge would name it from a judge: key.
			if _, err := model.NewOpenAI(*c.OpenAI); err != nil {
				j.modelNode.At("openai").Locate(err)
			}
		}
		if j.Config != nil {
			continue
		}
		for _, m := range sc.models {
			if m.OpenAI == nil {
				f.l.problems.Add(Problem{File: f.name, Line: j.keyLine, Path: j.path,
					Msg: fmt.Sprintf("required: the scenario's model %s is not an openai model that could judge (give the judge a model)", m.Name)})
				break
			}
		}
	}
}

// Judges are the case's judge expectations, in the order written; the
// runner grades each after the conversation and appends one
// record.Judgement per judge to Record.Judgements, which Evaluate reads
// by position.
func (c *Case) Judges() []Judge {
	out := make([]Judge, len(c.Scenario.judges))
	for i, j := range c.Scenario.judges {
		out[i] = j.Judge
	}
	return out
}

// Unpriced names the case's models that send requests to an endpoint
// without a price: the case's model, and "judge <name>" for a judge with a
// model of its own (a judge without one is the case's model). Their cost
// is unknown, not 0, so a cost gate on the case cannot be checked.
func (c *Case) Unpriced() []string {
	var out []string
	if o := c.model.OpenAI; o != nil && o.Price == nil {
		out = append(out, c.ModelName)
	}
	for _, j := range c.Scenario.judges {
		if j.Config == nil || j.Config.OpenAI == nil || j.Config.OpenAI.Price != nil {
			continue
		}
		if name := "judge openai:" + j.Config.OpenAI.Model; !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// NewJudge builds the judge of j for this case: its own model, or the
// case's when it has none.
func (c *Case) NewJudge(j Judge) (model.Judge, error) {
	if j.Config != nil {
		return model.NewJudge(*j.Config)
	}
	if c.model.OpenAI == nil {
		return nil, fmt.Errorf("no judge: the case's model %s is not an openai model that could judge (give the judge a model)", c.ModelName)
	}
	return model.NewOpenAIJudge(*c.model.OpenAI)
}

// Grading is what the judge j is asked about a finished case: the
// questions, the last turn's answer and, when j wants them, what the tools
// returned, as the model got them.
func (j Judge) Grading(c *Case, rec *record.Record) model.Grading {
	g := model.Grading{Rubric: j.Rubric, Question: strings.Join(c.Turns(), "\n"), Threshold: j.Threshold}
	if n := len(rec.Turns); n > 0 {
		g.Answer = rec.Turns[n-1].Answer
	}
	if j.ToolResults {
		var b strings.Builder
		for _, call := range rec.Calls {
			args := "{}"
			if call.Arguments != nil {
				args = render(call.Arguments)
			}
			fmt.Fprintf(&b, "%s %s -> %s\n", call.Name, args, call.Result)
		}
		g.Evidence = strings.TrimSuffix(b.String(), "\n")
	}
	return g
}
