package model

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"text/template"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/hosteval/hosteval/internal/record"
)

// DefaultJudgeThreshold is the score a graded answer needs to pass when
// its expectation gives no threshold.
const DefaultJudgeThreshold = 0.7

// Judge grades an answer against a rubric.
type Judge interface {
	// Name identifies the judge in results (e.g. "scripted", "openai:gpt-oss-120b").
	Name() string
	Grade(ctx context.Context, g Grading) (Grade, error)
}

// Grading is what a judge is asked to grade.
type Grading struct {
	// Rubric says what a good answer does. Required.
	Rubric string
	// Question is what the user asked (the turns, one per line).
	Question string
	// Answer is the assistant's final answer.
	Answer string
	// Evidence is what the tools returned, as the caller renders it; it
	// lets a rubric ask for facts. Optional.
	Evidence string
	// Threshold is the score needed to pass, in (0, 1]; 0 means
	// DefaultJudgeThreshold.
	Threshold float64
}

func (g Grading) threshold() (float64, error) {
	switch {
	case strings.TrimSpace(g.Rubric) == "":
		return 0, errors.New("judge: rubric: required")
	case g.Threshold == 0:
		return DefaultJudgeThreshold, nil
	case g.Threshold < 0 || g.Threshold > 1 || math.IsNaN(g.Threshold):
		return 0, fmt.Errorf("judge: threshold: %g is not in (0, 1]", g.Threshold)
	}
	return g.Threshold, nil
}

// Grade is a judge's verdict on an answer, with what asking cost.
type Grade struct {
	// Score is in [0, 1].
	Score float64
	// Reason is the judge's one or two sentences.
	Reason string
	// Pass is Score >= Threshold.
	Pass      bool
	Threshold float64
	// Judge names the judge.
	Judge string
	// Usage, CachedPromptTokens, Cost, Latency and Replayed are those of
	// the judge's request, as in [Response]; zero for a scripted judge.
	Usage              *record.Usage
	CachedPromptTokens int
	Cost               float64
	Latency            time.Duration
	Replayed           Source
	// Attempts and Waited are as in [Response].
	Attempts int
	Waited   time.Duration
}

//go:embed judge.tmpl
var judgeTemplate string

// judgePrompt is parsed on first use: only a run with a judge needs it, and
// every command of the binary paid for it at start.
var judgePrompt = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("judge").Option("missingkey=error").Parse(judgeTemplate))
})

// JudgePrompt renders the judge's fixed prompt for g: the system message and
// the user message an OpenAI judge sends. The rubric, question, evidence
// and answer are put between tags, as data.
func JudgePrompt(g Grading) (system, user string, err error) {
	var s, u strings.Builder
	if err := judgePrompt().ExecuteTemplate(&s, "system", g); err != nil {
		return "", "", fmt.Errorf("judge prompt: %w", err)
	}
	if err := judgePrompt().ExecuteTemplate(&u, "user", g); err != nil {
		return "", "", fmt.Errorf("judge prompt: %w", err)
	}
	return s.String(), u.String(), nil
}

// gradeSchema is the structured output asked of an OpenAI judge. The range
// of score is in its description, not in minimum and maximum, which some
// endpoints refuse in strict mode; the answer is checked here.
var gradeSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"score":  map[string]any{"type": "number", "description": "From 0 (meets none of the rubric) to 1 (meets all of it)."},
		"reason": map[string]any{"type": "string", "description": "One or two sentences: what the answer met and what it missed."},
	},
	"required":             []string{"score", "reason"},
	"additionalProperties": false,
}

// OpenAIJudge grades with a model behind an OpenAI-compatible endpoint,
// through the same wire as a case's model: its requests are recorded and
// replayed by the case's cassette, cached and limited like any other.
type OpenAIJudge struct {
	m *OpenAI
}

// NewOpenAIJudge builds a judge on the model cfg names. An unset
// temperature is 0: a judge should grade the same answer the same way.
func NewOpenAIJudge(cfg OpenAIConfig) (*OpenAIJudge, error) {
	if cfg.Temperature == nil {
		cfg.Temperature = new(float64)
	}
	m, err := newOpenAI(cfg, "judge.openai.")
	if err != nil {
		return nil, err
	}
	return &OpenAIJudge{m: m}, nil
}

// With returns a copy of j whose requests go through w (see [OpenAI.With]).
func (j *OpenAIJudge) With(w Wire) *OpenAIJudge {
	return &OpenAIJudge{m: j.m.With(w)}
}

// Name implements [Judge]: "openai:<model>".
func (j *OpenAIJudge) Name() string { return j.m.Name() }

// Grade implements [Judge]: one request with the fixed prompt and a JSON
// schema response format. A judge's answer that is not the JSON asked for
// is a [*ModelOutputError].
func (j *OpenAIJudge) Grade(ctx context.Context, g Grading) (Grade, error) {
	threshold, err := g.threshold()
	if err != nil {
		return Grade{}, err
	}
	system, user, err := JudgePrompt(g)
	if err != nil {
		return Grade{}, err
	}
	params := openai.ChatCompletionNewParams{
		Model:    j.m.cfg.Model,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(system), openai.UserMessage(user)},
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{
			OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
				JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{
					Name:   "grade",
					Strict: openai.Bool(true),
					Schema: gradeSchema,
				},
			},
		},
	}
	j.m.sampling(&params)
	body, err := spliceTools(params, nil)
	if err != nil {
		return Grade{}, fmt.Errorf("%s: %w", j.Name(), err)
	}
	ex, src, t, err := j.m.exchange(ctx, body)
	if err != nil {
		return Grade{Attempts: t.attempts, Waited: t.waited}, err
	}
	res, err := j.m.answer(ex, t.parsed, 0)
	out := Grade{
		Threshold: threshold, Judge: j.Name(),
		Usage: res.Usage, CachedPromptTokens: res.CachedPromptTokens, Cost: res.Cost,
		Latency: ex.Latency, Replayed: src, Attempts: t.attempts, Waited: t.waited,
	}
	if err != nil {
		return out, err
	}
	score, reason, err := parseGrade(res.Text)
	if err != nil {
		return out, &ModelOutputError{Model: j.m.cfg.Model, StatusCode: http.StatusOK, Message: err.Error()}
	}
	out.Score, out.Reason, out.Pass = score, reason, score >= threshold
	return out, nil
}

// maxShownAnswer bounds how much of a judge's unusable answer an error shows.
const maxShownAnswer = 200

// parseGrade reads {"score": ..., "reason": ...} from a judge's answer. A
// model may wrap it in a Markdown fence or a sentence; the object is taken
// from the first "{" to the last "}".
func parseGrade(text string) (float64, string, error) {
	shown := text
	if len(shown) > maxShownAnswer {
		shown = shown[:maxShownAnswer] + "..."
	}
	i, k := strings.Index(text, "{"), strings.LastIndex(text, "}")
	if i < 0 || k < i {
		return 0, "", fmt.Errorf("the judge's answer is not a JSON object: %q", shown)
	}
	var v struct {
		Score  *float64 `json:"score"`
		Reason *string  `json:"reason"`
	}
	if err := json.Unmarshal([]byte(text[i:k+1]), &v); err != nil {
		return 0, "", fmt.Errorf("the judge's answer is not JSON (%v): %q", err, shown)
	}
	switch {
	case v.Score == nil:
		return 0, "", fmt.Errorf("the judge's answer has no score: %q", shown)
	case *v.Score < 0 || *v.Score > 1:
		return 0, "", fmt.Errorf("the judge's score %g is not in [0, 1]", *v.Score)
	case v.Reason == nil || strings.TrimSpace(*v.Reason) == "":
		return 0, "", fmt.Errorf("the judge's answer has no reason: %q", shown)
	}
	return *v.Score, strings.TrimSpace(*v.Reason), nil
}

// ScriptedGrade is one verdict of a [ScriptedJudge].
type ScriptedGrade struct {
	Score  float64 `yaml:"score"`
	Reason string  `yaml:"reason"`
}

// ScriptedJudge gives the grades it was given, in order, the last one
// repeating: a judge for tests, which decides nothing. It keeps what it
// was asked. It is safe for concurrent use.
type ScriptedJudge struct {
	grades []ScriptedGrade

	mu    sync.Mutex
	asked []Grading
}

// NewScriptedJudge checks grades: at least one, each score in [0, 1].
func NewScriptedJudge(grades []ScriptedGrade) (*ScriptedJudge, error) {
	if len(grades) == 0 {
		return nil, errors.New("judge.scripted: want at least one grade")
	}
	for i, g := range grades {
		if g.Score < 0 || g.Score > 1 || math.IsNaN(g.Score) {
			return nil, fmt.Errorf("judge.scripted[%d].score: %g is not in [0, 1]", i, g.Score)
		}
	}
	return &ScriptedJudge{grades: grades}, nil
}

// Name implements [Judge].
func (*ScriptedJudge) Name() string { return "scripted" }

// Grade implements [Judge].
func (j *ScriptedJudge) Grade(ctx context.Context, g Grading) (Grade, error) {
	threshold, err := g.threshold()
	if err != nil {
		return Grade{}, err
	}
	if err := ctx.Err(); err != nil {
		return Grade{}, err
	}
	j.mu.Lock()
	s := j.grades[min(len(j.asked), len(j.grades)-1)]
	j.asked = append(j.asked, g)
	j.mu.Unlock()
	return Grade{Score: s.Score, Reason: s.Reason, Pass: s.Score >= threshold, Threshold: threshold, Judge: j.Name()}, nil
}

// Asked returns what the judge was asked to grade, in order.
func (j *ScriptedJudge) Asked() []Grading {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]Grading(nil), j.asked...)
}

// JudgeConfig chooses a judge: exactly one field is set. In YAML:
//
//	judge: {openai: {base_url: http://localhost:8000/v1, model: gpt-oss-120b}}
//	judge: {scripted: [{score: 0.9, reason: "Names the owner."}]}
type JudgeConfig struct {
	Scripted []ScriptedGrade `yaml:"scripted,omitempty"`
	OpenAI   *OpenAIConfig   `yaml:"openai,omitempty"`
}

// NewJudge builds the judge cfg chooses.
func NewJudge(cfg JudgeConfig) (Judge, error) {
	switch {
	case cfg.Scripted != nil && cfg.OpenAI != nil:
		return nil, errors.New("judge: want only one of scripted or openai")
	case cfg.Scripted != nil:
		j, err := NewScriptedJudge(cfg.Scripted)
		if err != nil {
			return nil, err
		}
		return j, nil
	case cfg.OpenAI != nil:
		j, err := NewOpenAIJudge(*cfg.OpenAI)
		if err != nil {
			return nil, err
		}
		return j, nil
	}
	return nil, errors.New("no judge: want one of scripted or openai")
}

// UsingJudge returns j with w applied when j talks to an endpoint, and j
// itself otherwise (see [Using]).
func UsingJudge(j Judge, w Wire) Judge {
	if o, ok := j.(*OpenAIJudge); ok {
		return o.With(w)
	}
	return j
}

var (
	_ Judge = (*ScriptedJudge)(nil)
	_ Judge = (*OpenAIJudge)(nil)
)
