package runner

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/hosteval/hosteval/internal/gate"
	"github.com/hosteval/hosteval/internal/model"
	"github.com/hosteval/hosteval/internal/model/replay"
	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/report"
	"github.com/hosteval/hosteval/internal/scenario"
	"github.com/hosteval/hosteval/servers/fakeapi/endpoint"
)

// Real models through the runner: cases recorded against the project's
// test endpoint (the suite's own rules, scenarios/cassettes/fakeapi.yaml)
// over real HTTP, then replayed with the endpoint gone.

// fakeEndpoint serves the suite's fake model; key, when set, must come as
// a bearer token.
func fakeEndpoint(t *testing.T, key string) (*httptest.Server, *endpoint.Handler) {
	t.Helper()
	data, err := os.ReadFile("../../scenarios/cassettes/fakeapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg endpoint.Config
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	cfg.APIKey = key
	h, err := endpoint.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, h
}

// ownerScenario asks the fake model who owns a host, with two variants of
// get_asset's description, a price, a gateway header and a judge on the
// same endpoint; description is the second variant's.
func ownerScenario(baseURL, description string) string {
	return `name: owner
servers: [cmdb]
cassettes: {dir: cas}
variants:
  - name: server
  - name: other
    host: {descriptions: {cmdb__get_asset: "` + description + `"}}
model:
  openai:
    base_url: ` + baseURL + `/v1
    model: gpt-oss-120b
    temperature: 0
    headers: {X-Gateway-Key: gw-secret-4711}
    price: {input_per_mtok: 0.15, output_per_mtok: 0.6}
question: "who owns jump-prod-02? Name the team too."
expect:
  - {tool: cmdb__get_asset, outcome: ok}
  - {answer_matches: Infrastructure Security, model_errors: 0}
  - judge:
      rubric: Names the owner and the team.
      model: {openai: {base_url: "` + baseURL + `/v1", model: gpt-oss-120b, price: {input_per_mtok: 0.15, output_per_mtok: 0.6}}}
---
name: malformed
servers: [cmdb]
cassettes: {dir: cas}
model:
  openai: {base_url: "` + baseURL + `/v1", model: gpt-oss-120b}
question: decommission jump-prod-02
expect:
  - {model_errors: 1}
`
}

// figures is what a record says that must not change from a recording to
// its replay: everything but wall time, timestamps and IDs, and where the
// answers came from.
func figures(rec record.Record) record.Record {
	rec.Servers, rec.Turns, rec.Calls = slices.Clone(rec.Servers), slices.Clone(rec.Turns), slices.Clone(rec.Calls)
	rec.ModelRequests, rec.Judgements = slices.Clone(rec.ModelRequests), slices.Clone(rec.Judgements)
	rec.RunID, rec.Started, rec.MS, rec.SessionID, rec.Logs, rec.Cassette = "", time.Time{}, 0, "", nil, nil
	for i := range rec.Servers {
		rec.Servers[i].Time, rec.Servers[i].ConnectMS = time.Time{}, 0
	}
	for i := range rec.Turns {
		rec.Turns[i].TraceID, rec.Turns[i].MS = "", 0
	}
	for i := range rec.Calls {
		c := &rec.Calls[i]
		c.Time, c.SessionID, c.TraceID, c.MS, c.ServerMS, c.PersonMS, c.RoundMS = time.Time{}, "", "", 0, 0, 0, nil
		// The person's time is a time too: canned answers take 0.0 or 0.1 ms.
		c.Asks = slices.Clone(c.Asks)
		for j := range c.Asks {
			c.Asks[j].PersonMS = 0
		}
	}
	// Attempts and waits are what the endpoint put the recording through,
	// not what it answered: a replay sends nothing and has none.
	for i := range rec.ModelRequests {
		mr := &rec.ModelRequests[i]
		mr.Time, mr.SessionID, mr.TraceID, mr.Replayed = time.Time{}, "", "", ""
		mr.Attempts, mr.WaitedMS = 0, 0
	}
	for i := range rec.Judgements {
		rec.Judgements[i].Replayed = ""
		rec.Judgements[i].Attempts, rec.Judgements[i].WaitedMS = 0, 0
	}
	return rec
}

func TestRecordThenReplayGivesTheSameVerdictsAndFigures(t *testing.T) {
	testEnv(t)
	t.Setenv("OPENAI_API_KEY", "sk-env-secret-0451")
	srv, endpoint := fakeEndpoint(t, "sk-env-secret-0451")
	cases := suite(t, ownerScenario(srv.URL, "Get a host's CMDB record."))
	cache, err := replay.OpenCache(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}

	recorded := filepath.Join(t.TempDir(), "recorded")
	res, err := Run(context.Background(), cases, Options{Dir: recorded, RunID: "rec", Concurrency: 2, Wire: true,
		Cassettes: &Cassettes{Mode: replay.Record}, Cache: cache})
	if err != nil {
		t.Fatal(err)
	}
	if res.Passed != 3 {
		t.Fatalf("recording: %+v, want 3 passed", res)
	}
	// server: 2 requests and the judge's; other: 3 and the judge's;
	// malformed: 1.
	if got := endpoint.Requests(); got != 8 {
		t.Errorf("the endpoint answered %d requests while recording, want 8", got)
	}
	srv.Close()

	replayed := filepath.Join(t.TempDir(), "replayed")
	res, err = Run(context.Background(), cases, Options{Dir: replayed, RunID: "rep", Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.Passed != 3 {
		t.Fatalf("replay: %+v, want 3 passed", res)
	}
	want, got := byCase(readRecords(t, recorded)), byCase(readRecords(t, replayed))
	for id, w := range want {
		g := got[id]
		if diff := cmp.Diff(figures(w), figures(g)); diff != "" {
			t.Errorf("%s: the replay differs from the recording (-recorded +replayed):\n%s", id, diff)
		}
		if g.Cassette == nil || g.Cassette.Replayed != len(g.ModelRequests)+len(g.Judgements) || g.Cassette.Recorded != 0 {
			t.Errorf("%s: cassette %+v, want every request of %d replayed", id, g.Cassette, len(g.ModelRequests)+len(g.Judgements))
		}
		for _, mr := range g.ModelRequests {
			if mr.Replayed != record.ReplayedCassette {
				t.Errorf("%s: request %d.%d replayed = %q, want cassette", id, mr.Turn, mr.Index, mr.Replayed)
			}
		}
	}
	// The figures that matter, concretely.
	other := got["owner/other#0"]
	if n := other.Counts(); n.Steps != 2 || n.ModelRequests != 3 || n.Replayed != 3 || other.Cost == 0 || len(other.Judgements) != 1 ||
		other.Judgements[0].Score != 0.92 || other.Judgements[0].Replayed != record.ReplayedCassette {
		t.Errorf("owner/other: counts %+v, cost %v, judgements %+v", n, other.Cost, other.Judgements)
	}
	malformed := got["malformed#0"]
	if n := malformed.Counts(); n.ModelErrors != 1 || malformed.Status != record.StatusPass {
		t.Errorf("malformed: %+v, status %s; want one model error, scored, and a pass", n, malformed.Status)
	}

	// The summary marks the replay and costs it the same.
	sumRec, sumRep := summarize(t, recorded), summarize(t, replayed)
	if sumRep.Totals.Replayed != 8 || sumRec.Totals.Replayed != 0 || sumRep.Totals.Cost != sumRec.Totals.Cost || sumRep.Totals.Cost == 0 {
		t.Errorf("totals: recorded %+v, replayed %+v; want 8 replayed requests and equal costs", sumRec.Totals, sumRep.Totals)
	}

	// No secret reached a cassette, a record, a case log, a wire trace,
	// run.json or the cache: the key came from the environment, the
	// gateway header from the scenario.
	for _, dir := range []string{filepath.Join(filepath.Dir(cases[0].Scenario.File), "cas"), recorded, replayed, cache.Dir()} {
		noSecrets(t, dir, "sk-env-secret-0451", "gw-secret-4711", "Bearer")
	}
}

// noSecrets fails if any file under dir holds one of the secrets.
func noSecrets(t *testing.T, dir string, secrets ...string) {
	t.Helper()
	files := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, s := range secrets {
			if bytes.Contains(data, []byte(s)) {
				t.Errorf("%s holds the secret %q", path, s)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Errorf("%s: no files to search", dir)
	}
}

func byCase(recs []record.Record) map[string]record.Record {
	m := map[string]record.Record{}
	for _, r := range recs {
		m[r.CaseID] = r
	}
	return m
}

func summarize(t *testing.T, dir string) *report.Summary {
	t.Helper()
	run, err := record.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	return report.Aggregate(run)
}

func TestReplayOfAChangedDescriptionFailsWithTheDiff(t *testing.T) {
	testEnv(t)
	srv, endpoint := fakeEndpoint(t, "")
	dir := t.TempDir()
	write := func(description string) []*scenario.Case {
		servers := "servers:\n  cmdb: {command: " + fixtureBin + "/cmdb}\n"
		if err := os.WriteFile(filepath.Join(dir, "servers.yaml"), []byte(servers), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(ownerScenario(srv.URL, description)), 0o644); err != nil {
			t.Fatal(err)
		}
		return loadCases(t, filepath.Join(dir, "s.yaml"))
	}
	cases := write("Get a host's CMDB record.")
	if _, err := Run(context.Background(), cases, Options{Dir: filepath.Join(dir, "r1"), Cassettes: &Cassettes{Mode: replay.Record}}); err != nil {
		t.Fatal(err)
	}
	before := endpoint.Requests()

	cases = write("Fetch one host's CMDB record.")
	res, err := Run(context.Background(), cases, Options{Dir: filepath.Join(dir, "r2")})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed != 1 || res.Passed != 2 {
		t.Errorf("replay: %+v, want the changed variant failed, the others passed", res)
	}
	if after := endpoint.Requests(); after != before {
		t.Errorf("a strict replay sent %d requests to the endpoint", after-before)
	}
	rec := byCase(readRecords(t, filepath.Join(dir, "r2")))["owner/other#0"]
	want := `request 1 is not recorded; against recorded request 1: tool cmdb__get_asset: description changed: "[cmdb] Get a host's CMDB record." -> "[cmdb] Fetch one host's CMDB record."`
	if rec.Status != record.StatusFail || rec.ErrorClass != record.ErrorReplayMiss || !strings.Contains(rec.Error, want) ||
		!strings.Contains(rec.Error, filepath.Join("cas", "owner", "other", "openai_gpt-oss-120b.0.yaml")) {
		t.Errorf("owner/other: status %s, class %s, error:\n%s\nwant a failure saying:\n%s", rec.Status, rec.ErrorClass, rec.Error, want)
	}
	if len(rec.Expectations) != 0 {
		t.Errorf("a conversation that left its cassette was judged: %+v", rec.Expectations)
	}
	// The JUnit failure says it too.
	var junit bytes.Buffer
	if err := report.WriteJUnit(&junit, summarize(t, filepath.Join(dir, "r2"))); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(junit.String(), "description changed: &#34;[cmdb] Get a host&#39;s CMDB record.&#34; -&gt; &#34;[cmdb] Fetch one host&#39;s CMDB record.&#34;") {
		t.Errorf("junit.xml does not say what changed:\n%s", junit.String())
	}

	// Fallback sends what is not recorded and appends it.
	res, err = Run(context.Background(), cases, Options{Dir: filepath.Join(dir, "r3"), Cassettes: &Cassettes{Mode: replay.Fallback}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Passed != 3 || endpoint.Requests() == before {
		t.Errorf("fallback: %+v, %d requests sent; want all passed and the new requests sent", res, endpoint.Requests()-before)
	}
	if res, err = Run(context.Background(), cases, Options{Dir: filepath.Join(dir, "r4")}); err != nil || res.Passed != 3 {
		t.Errorf("replay after fallback: %+v, %v; want all passed", res, err)
	}
}

func TestReplayWithoutACassetteFails(t *testing.T) {
	testEnv(t)
	cases := suite(t, ownerScenario("http://127.0.0.1:9", "x"))
	dir := filepath.Join(t.TempDir(), "r")
	res, err := Run(context.Background(), cases, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed != 3 {
		t.Fatalf("%+v, want 3 failed", res)
	}
	for _, rec := range readRecords(t, dir) {
		if rec.ErrorClass != record.ErrorReplayMiss || !strings.Contains(rec.Error, "not recorded yet (record it with -record") {
			t.Errorf("%s: %s %q", rec.CaseID, rec.ErrorClass, rec.Error)
		}
	}
}

func TestTheCacheAnswersARerun(t *testing.T) {
	testEnv(t)
	srv, endpoint := fakeEndpoint(t, "")
	// No cassettes: a case that records is never answered by the cache.
	cases := suite(t, strings.ReplaceAll(ownerScenario(srv.URL, "Get a host's CMDB record."), "cassettes: {dir: cas}\n", ""))
	cache, err := replay.OpenCache(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	run := func(id string, cassettes *Cassettes) *report.Summary {
		dir := filepath.Join(t.TempDir(), id)
		if _, err := Run(context.Background(), cases, Options{Dir: dir, RunID: id, Cassettes: cassettes, Cache: cache}); err != nil {
			t.Fatal(err)
		}
		return summarize(t, dir)
	}
	first := run("first", nil)
	sent := endpoint.Requests()
	second := run("second", nil)
	// All but the malformed answer, which is not cached (an error answer
	// never is), come from the cache.
	if endpoint.Requests() != sent+1 {
		t.Errorf("the rerun sent %d requests, want 1", endpoint.Requests()-sent)
	}
	if first.Totals.Cached != 0 || second.Totals.Cached != 7 {
		t.Errorf("cached requests: first %d, second %d; want 0 and 7", first.Totals.Cached, second.Totals.Cached)
	}
	if c := second.Run.Cache; c == nil || c.Hits != 7 || c.Misses != 9 {
		t.Errorf("run.json's cache = %+v, want the cache's hits and misses so far (7 and 9)", c)
	}
	// Recording (-record with -cache): every request goes to the endpoint.
	sent = endpoint.Requests()
	third := run("third", &Cassettes{Dir: t.TempDir(), Mode: replay.Record})
	if endpoint.Requests() != sent+8 || third.Totals.Cached != 0 {
		t.Errorf("recording with the cache on sent %d requests, %d cached; want 8, none cached", endpoint.Requests()-sent, third.Totals.Cached)
	}
}

func TestEndpointsDisagreeingOnLimitsIsAScenarioError(t *testing.T) {
	testEnv(t)
	cases := suite(t, `name: a
servers: [cmdb]
model: {openai: {base_url: "http://127.0.0.1:9/v1", model: m, limits: {concurrency: 2}}}
question: q
---
name: b
servers: [cmdb]
model: {openai: {base_url: "http://127.0.0.1:9/v1", model: m, limits: {concurrency: 4}}}
question: q
`)
	_, err := Run(context.Background(), cases, Options{Dir: filepath.Join(t.TempDir(), "r")})
	var load *scenario.LoadError
	if !errors.As(err, &load) || len(load.Problems) != 1 || load.Problems[0].Path != "model.openai.limits" || !strings.HasSuffix(load.Problems[0].File, "s.yaml") {
		t.Fatalf("err = %v, want one problem at model.openai.limits", err)
	}
}

func TestAnEndpointRefusingTheKeyIsAConfigError(t *testing.T) {
	testEnv(t)
	srv, _ := fakeEndpoint(t, "the-right-key")
	cases := suite(t, `name: a
servers: [cmdb]
model: {openai: {base_url: "`+srv.URL+`/v1", model: gpt-oss-120b, api_key: wrong}}
question: who owns jump-prod-02?
`)
	dir := filepath.Join(t.TempDir(), "r")
	res, err := Run(context.Background(), cases, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	rec := readRecords(t, dir)[0]
	if res.Errors != 1 || res.ConfigErrors != 1 || rec.ErrorClass != string(model.FailureConfig) {
		t.Errorf("result %+v, record class %q (%s); want one config error", res, rec.ErrorClass, rec.Error)
	}
}

func TestAScriptedJudgeGrades(t *testing.T) {
	testEnv(t)
	cases := suite(t, `name: judged
servers: [cmdb]
model:
  scripted:
    - call: "cmdb__get_asset {hostname: jump-prod-02}"
    - answer: "Camille Michel owns it."
question: who owns jump-prod-02?
expect:
  - judge:
      rubric: Names the owner and the team.
      model: {scripted: [{score: 0.5, reason: Names the owner but not the team.}]}
  - judge:
      rubric: Names the owner.
      tool_results: false
      threshold: 0.5
      model: {scripted: [{score: 0.5, reason: Names the owner.}]}
`)
	dir := filepath.Join(t.TempDir(), "r")
	if _, err := Run(context.Background(), cases, Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	rec := readRecords(t, dir)[0]
	want := []record.Expectation{
		{Name: `judge "Names the owner and the team." threshold=0.7`, Line: 9, Detail: "score 0.50 < 0.70 (judge scripted): Names the owner but not the team."},
		{Name: `judge "Names the owner." threshold=0.5`, Line: 12, Passed: true},
	}
	if diff := cmp.Diff(want, rec.Expectations); diff != "" {
		t.Errorf("expectations (-want +got):\n%s", diff)
	}
	if len(rec.Judgements) != 2 || rec.Judgements[0].Reason != "Names the owner but not the team." || rec.Judgements[1].Judge != "scripted" {
		t.Errorf("judgements = %+v", rec.Judgements)
	}
	if rec.Cassette != nil {
		t.Errorf("a case of scripted models keeps a cassette: %+v", rec.Cassette)
	}
}

// TestSuiteReplaysItsCassettes runs the default suite's real-model
// scenarios from the cassettes committed in scenarios/cassettes, offline
// (no endpoint exists here), as make run and make test do: their
// expectations and gates hold, and every answer is a replayed one.
func TestSuiteReplaysItsCassettes(t *testing.T) {
	testEnv(t)
	dir := t.TempDir()
	servers := "servers:\n  cmdb: {command: " + fixtureBin + "/cmdb}\n"
	if err := os.WriteFile(filepath.Join(dir, "servers.yaml"), []byte(servers), 0o644); err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, name := range []string{"real-ab.yaml", "real-gate.yaml"} {
		data, err := os.ReadFile(filepath.Join("../../scenarios", name))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, filepath.Join(dir, name))
		if err := os.WriteFile(files[len(files)-1], data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := scenario.Load(files...)
	if err != nil {
		t.Fatal(err)
	}
	cases, err := s.Cases(scenario.CaseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cassettes, err := filepath.Abs("../../scenarios/cassettes")
	if err != nil {
		t.Fatal(err)
	}
	runDir := filepath.Join(dir, "r")
	res, err := Run(context.Background(), cases, Options{Dir: runDir, Cassettes: &Cassettes{Dir: cassettes, Mode: replay.Replay}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Ran != 4 || res.Passed != 4 {
		for _, rec := range readRecords(t, runDir) {
			t.Logf("%s: %s %s%s", rec.CaseID, rec.Status, rec.Error, failures(rec))
		}
		t.Fatalf("%+v, want 4 cases passed", res)
	}
	sum := summarize(t, runDir)
	var gates []gate.Gate
	for _, sc := range s.Scenarios {
		gates = append(gates, sc.Gates...)
	}
	for _, g := range report.EvaluateGates(sum, gates, nil) {
		if !g.Passed {
			t.Errorf("gate %s on %s: %s", g.Gate, g.Group, g.Detail)
		}
	}
	if sum.Totals.Replayed != 9 || sum.Totals.ModelErrors != 1 || sum.Totals.Cost == 0 {
		t.Errorf("totals %+v, want 9 requests replayed, the malformed call counted, a cost", sum.Totals)
	}
	// The A/B: the terse description costs a step and a listing.
	server, terse := sum.Group(report.GroupKey{Scenario: "real-ab-get-asset", Variant: "server", Model: "openai:gpt-oss-120b"}),
		sum.Group(report.GroupKey{Scenario: "real-ab-get-asset", Variant: "terse", Model: "openai:gpt-oss-120b"})
	if server == nil || terse == nil || server.MeanSteps != 1 || terse.MeanSteps != 2 {
		t.Errorf("A/B groups: server %+v, terse %+v; want 1 and 2 steps", server, terse)
	}
}
