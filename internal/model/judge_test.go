package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hosteval/hosteval/internal/goldenfile"
	"github.com/hosteval/hosteval/internal/model/replay"
	"github.com/hosteval/hosteval/internal/record"
)

var grading = Grading{
	Rubric:   "Names the team that owns jump-prod-02 (platform) and no other.",
	Question: "Who owns jump-prod-02?",
	Answer:   "The platform team owns jump-prod-02.",
	Evidence: `cmdb__get_asset {"hostname":"jump-prod-02"} -> {"hostname":"jump-prod-02","owner":"platform"}`,
}

func judgeReply(content string) reply {
	c, _ := json.Marshal(content)
	return reply{body: completion(`{"role":"assistant","content":`+string(c)+`}`, `{"prompt_tokens":310,"completion_tokens":24,"total_tokens":334}`)}
}

func newTestJudge(t *testing.T, srv *chatServer, cfg OpenAIConfig) *OpenAIJudge {
	t.Helper()
	cfg.BaseURL = srv.URL + "/v1"
	if cfg.Model == "" {
		cfg.Model = "gpt-oss-120b"
	}
	j, err := NewOpenAIJudge(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// TestJudgeRequest pins the judge's request: the fixed prompt, the JSON
// schema response format and temperature 0.
func TestJudgeRequest(t *testing.T) {
	srv := newChatServer(t, judgeReply(`{"score": 0.9, "reason": "Names platform, as the CMDB says."}`))
	j := newTestJudge(t, srv, OpenAIConfig{APIKey: "sk-judge"})
	if _, err := j.Grade(context.Background(), grading); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := json.Indent(&got, srv.body(0), "", "  "); err != nil {
		t.Fatal(err)
	}
	goldenfile.Check(t, filepath.Join("testdata", "judge-request.json"), got.Bytes())
}

func TestJudgePromptWithoutEvidence(t *testing.T) {
	g := grading
	g.Evidence = ""
	_, user, err := JudgePrompt(g)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(user, "tool_results") {
		t.Errorf("a grading without evidence has a tool_results section:\n%s", user)
	}
	for _, part := range []string{"<rubric>\n" + g.Rubric + "\n</rubric>", "<question>\n" + g.Question + "\n</question>", "<answer>\n" + g.Answer + "\n</answer>"} {
		if !strings.Contains(user, part) {
			t.Errorf("the prompt lacks %q:\n%s", part, user)
		}
	}
}

func TestOpenAIJudgeGrade(t *testing.T) {
	tests := []struct {
		name      string
		content   string
		threshold float64
		want      Grade
		wantErr   string // of a *ModelOutputError
	}{
		{
			name:    "pass at the default threshold",
			content: `{"score": 0.8, "reason": "Names platform."}`,
			want:    Grade{Score: 0.8, Reason: "Names platform.", Pass: true, Threshold: DefaultJudgeThreshold},
		},
		{
			name: "fail below the threshold", content: `{"score": 0.8, "reason": "Names platform."}`, threshold: 0.9,
			want: Grade{Score: 0.8, Reason: "Names platform.", Threshold: 0.9},
		},
		{
			name:    "a score equal to the threshold passes",
			content: `{"score": 1, "reason": "All of it."}`, threshold: 1,
			want: Grade{Score: 1, Reason: "All of it.", Pass: true, Threshold: 1},
		},
		{
			name:    "in a Markdown fence",
			content: "```json\n{\"score\": 0.2, \"reason\": \"Names the wrong team.\"}\n```",
			want:    Grade{Score: 0.2, Reason: "Names the wrong team.", Threshold: DefaultJudgeThreshold},
		},
		{name: "not JSON", content: "It is a good answer.", wantErr: `the judge's answer is not a JSON object: "It is a good answer."`},
		{name: "score out of range", content: `{"score": 8, "reason": "Great."}`, wantErr: "the judge's score 8 is not in [0, 1]"},
		{name: "no reason", content: `{"score": 0.5}`, wantErr: `the judge's answer has no reason: "{\"score\": 0.5}"`},
		{name: "no score", content: `{"reason": "ok"}`, wantErr: `the judge's answer has no score`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newChatServer(t, judgeReply(tt.content))
			j := newTestJudge(t, srv, OpenAIConfig{Price: &Price{InputPerMTok: 1, OutputPerMTok: 1}})
			g := grading
			g.Threshold = tt.threshold
			got, err := j.Grade(context.Background(), g)
			if got.Usage == nil || got.Usage.TotalTokens != 334 || got.Latency <= 0 || got.Judge != "openai:gpt-oss-120b" || got.Cost != 334.0/1e6 {
				t.Errorf("Grade = %+v, want the request's usage, cost, latency and the judge's name", got)
			}
			if tt.wantErr != "" {
				var me *ModelOutputError
				if !errors.As(err, &me) || !strings.Contains(me.Message, tt.wantErr) {
					t.Fatalf("error = %v, want a *ModelOutputError with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.want.Judge, tt.want.Usage, tt.want.Cost = "openai:gpt-oss-120b", &record.Usage{PromptTokens: 310, CompletionTokens: 24, TotalTokens: 334}, 334.0/1e6
			if diff := cmp.Diff(tt.want, got, cmpIgnoreGradeLatency); diff != "" {
				t.Errorf("Grade mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

var cmpIgnoreGradeLatency = cmp.FilterPath(func(p cmp.Path) bool {
	return p.String() == "Latency" || p.String() == "Waited" || p.String() == "Attempts"
}, cmp.Ignore())

// TestJudgeCassette: a judge's request is recorded and replayed like a
// model's, into the same cassette.
func TestJudgeCassette(t *testing.T) {
	srv := newChatServer(t, okReply(okText), judgeReply(`{"score": 0.9, "reason": "Names platform."}`))
	path := filepath.Join(t.TempDir(), "case.yaml")
	grade := func(mode replay.Mode) Grade {
		c, err := replay.Open(path, mode)
		if err != nil {
			t.Fatal(err)
		}
		w := Wire{Cassette: c}
		if _, err := newTestOpenAI(t, srv, OpenAIConfig{}).With(w).Next(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: grading.Question}}}); err != nil {
			t.Fatal(err)
		}
		g, err := UsingJudge(newTestJudge(t, srv, OpenAIConfig{}), w).Grade(context.Background(), grading)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	recorded := grade(replay.Record)
	srv.Close()
	replayed := grade(replay.Replay)
	if recorded.Replayed != FromEndpoint || replayed.Replayed != FromCassette {
		t.Errorf("Replayed = %q then %q", recorded.Replayed, replayed.Replayed)
	}
	replayed.Replayed = FromEndpoint
	if diff := cmp.Diff(recorded, replayed, cmpIgnoreGradeLatency); diff != "" {
		t.Errorf("replayed grade differs (-recorded +replayed):\n%s", diff)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), "json_schema") || strings.Count(string(data), "- request:") != 2 {
		t.Errorf("the cassette does not hold the model's and the judge's requests:\n%s", data)
	}
}

func TestScriptedJudge(t *testing.T) {
	j, err := NewJudge(JudgeConfig{Scripted: []ScriptedGrade{{Score: 0.9, Reason: "good"}, {Score: 0.3, Reason: "bad"}}})
	if err != nil {
		t.Fatal(err)
	}
	var got []Grade
	for _, th := range []float64{0, 0, 0.25} {
		g := grading
		g.Threshold = th
		gr, err := j.Grade(context.Background(), g)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, gr)
	}
	want := []Grade{
		{Score: 0.9, Reason: "good", Pass: true, Threshold: 0.7, Judge: "scripted"},
		{Score: 0.3, Reason: "bad", Threshold: 0.7, Judge: "scripted"},
		{Score: 0.3, Reason: "bad", Pass: true, Threshold: 0.25, Judge: "scripted"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("grades mismatch (-want +got):\n%s", diff)
	}
	if asked := j.(*ScriptedJudge).Asked(); len(asked) != 3 || asked[0].Answer != grading.Answer {
		t.Errorf("Asked() = %+v, want the three gradings", asked)
	}
	if Using(nil, Wire{}) != nil || UsingJudge(j, Wire{Endpoints: NewEndpoints(nil)}) != j {
		t.Error("Using and UsingJudge changed a local model or judge")
	}
}

func TestJudgeErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  JudgeConfig
		g    Grading
		want string
	}{
		{"no judge", JudgeConfig{}, grading, "no judge: want one of scripted or openai"},
		{"two judges", JudgeConfig{Scripted: []ScriptedGrade{{Score: 1}}, OpenAI: &OpenAIConfig{Model: "m"}}, grading, "judge: want only one of scripted or openai"},
		{"no grades", JudgeConfig{Scripted: []ScriptedGrade{}}, grading, "judge.scripted: want at least one grade"},
		{"bad score", JudgeConfig{Scripted: []ScriptedGrade{{Score: 1.5}}}, grading, "judge.scripted[0].score: 1.5 is not in [0, 1]"},
		{"no model", JudgeConfig{OpenAI: &OpenAIConfig{}}, grading, "judge.openai.model: required"},
		{"no rubric", JudgeConfig{Scripted: []ScriptedGrade{{Score: 1}}}, Grading{Answer: "x"}, "judge: rubric: required"},
		{"bad threshold", JudgeConfig{Scripted: []ScriptedGrade{{Score: 1}}}, Grading{Rubric: "r", Threshold: 1.2}, "judge: threshold: 1.2 is not in (0, 1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, err := NewJudge(tt.cfg)
			if err == nil {
				_, err = j.Grade(context.Background(), tt.g)
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want %q", err, tt.want)
			}
		})
	}
}
