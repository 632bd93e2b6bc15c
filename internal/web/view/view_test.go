package view

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/web"
)

// fixtureRuns is the folder of the fixture runs regen.sh makes with a
// real `hosteval run`: base, and new (which regressed from base).
const fixtureRuns = "testdata/runs"

// serve starts the pages over dir on an httptest server, with the
// headers web.Serve adds.
func serve(t testing.TB, dir string, opts ...func(*Options)) (*Server, *httptest.Server) {
	t.Helper()
	o := Options{Dir: dir}
	for _, f := range opts {
		f(&o)
	}
	v, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(web.Secure(v))
	t.Cleanup(func() {
		srv.Close()
		v.Close()
	})
	return v, srv
}

func get(t testing.TB, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// copyRuns copies the fixture runs into a fresh folder the test may change.
func copyRuns(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "results")
	if err := os.CopyFS(dir, os.DirFS(fixtureRuns)); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestPages(t *testing.T) {
	_, srv := serve(t, fixtureRuns)
	tests := []struct {
		path string
		want []string // each must be in the page
		not  []string // none may be
	}{
		{"/", []string{`href="/runs/base/"`, `href="/runs/new/"`, "Trends across runs of one suite", `/compare?new=new&amp;old=base`}, nil},
		{"/runs/new/", []string{"Run new", "triage/scripted#0", "lookup/scripted#0", "Gates: <span class=\"fail\">failed</span>", "Call latency per tool", "Result bytes per call, per tool", "A/B ab-lookup/scripted",
			// The A/B table says who won and what the variant changed.
			"verdict: no significant difference between terse and server", "terse changes: description of cmdb__get_asset"}, nil},
		{"/runs/new/?status=failed", []string{"1–2 of 2 cases matching (of 8)", "triage/scripted#0", "lookup/scripted#0"}, []string{"fresh/scripted#0"}},
		// Why a case failed: every expectation that did not hold, not
		// only the first.
		{"/runs/new/?scenario=triage", []string{"1–1 of 1 case matching (of 8)",
			"<div>unknown_tools=0: unknown_tools=1 (cmdb__delete_asset)</div>",
			"<div>answer_matches=&#34;(?i)declined&#34;: answer of turn 1: &#34;I opened INC-4100 for jump-prod-02.&#34;</div>"}, nil},
		{"/runs/new/?outcome=unknown_tool", []string{"triage/scripted#0", "lookup/scripted#0"}, []string{"hostile/scripted#0"}},
		{"/runs/new/?scenario=hostile", []string{"hostile/scripted#0"}, []string{"triage/scripted#0"}},
		{"/runs/new/?variant=terse", []string{"ab-lookup/terse/scripted#0", "ab-lookup/terse/scripted#1"}, []string{"ab-lookup/server/scripted#0"}},
		{"/runs/new/?q=lookup_host", []string{"lookup/scripted#0"}, []string{"triage/scripted#0"}},
		{"/runs/new/?q=nothing-matches-this", []string{"no case matches"}, nil},
		{"/runs/new/cases/1", []string{"triage/scripted#0", "unknown tool: not in the host&#39;s table", "cut here", "Raw record", "Did not hold"}, nil},
		{"/runs/new/cases/1/record.json", []string{`"case_id": "triage#0"`}, nil},
		{"/compare?old=base&new=new", []string{"Regressed", `data-group="lookup/scripted"`, "retired#0", "fresh#0"}, nil},
		{"/compare", []string{"Choose two runs"}, nil},
		{"/catalog", []string{"Tool catalog", "cmdb__get_asset", "tickets__open_ticket"}, nil},
		{"/runs/new/files/report.md", []string{"## hosteval run new"}, nil},
	}
	for _, tt := range tests {
		code, body := get(t, srv.URL+tt.path)
		if code != http.StatusOK {
			t.Errorf("GET %s: status %d, want 200", tt.path, code)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s: no %q in the page", tt.path, w)
			}
		}
		for _, n := range tt.not {
			if strings.Contains(body, n) {
				t.Errorf("GET %s: %q in the page, want it filtered out", tt.path, n)
			}
		}
	}
}

func TestNotFound(t *testing.T) {
	_, srv := serve(t, fixtureRuns)
	for _, path := range []string{"/runs/nope/", "/runs/new/cases/99", "/runs/new/cases/x", "/runs/new/files/nope.txt", "/nope", "/runs/new/files/cases"} {
		if code, body := get(t, srv.URL+path); code != http.StatusNotFound || !strings.Contains(body, "Back to the runs") {
			t.Errorf("GET %s: status %d, want 404 with the error page", path, code)
		}
	}
}

// hostileText is what the fixture's hostile scenario puts in a question,
// an argument, a server's error and an answer.
var hostileText = regexp.MustCompile(`<script>window\.pwned|<img src=x onerror`)

// TestEscaped checks that no string from a model, a server or a scenario
// reaches a page as markup (the browser test checks it runs nothing).
func TestEscaped(t *testing.T) {
	_, srv := serve(t, fixtureRuns)
	for _, path := range []string{"/runs/new/cases/2", "/runs/new/", "/runs/new/?q=pwned", "/runs/new/cases/2/record.json"} {
		code, body := get(t, srv.URL+path)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d", path, code)
		}
		if m := hostileText.FindString(body); m != "" {
			t.Errorf("GET %s: %q reached the page unescaped", path, m)
		}
	}
	_, body := get(t, srv.URL+"/runs/new/cases/2")
	if !strings.Contains(body, "&lt;script&gt;window.pwned=1&lt;/script&gt;") {
		t.Errorf("the hostile question is not shown as text")
	}
}

// TestOnlyFilesUnderDir asks for files outside the results folder every
// way a path can be written, and through symbolic links that lead out.
func TestOnlyFilesUnderDir(t *testing.T) {
	dir := copyRuns(t)
	const secret = "SECRET-outside-the-results-folder"
	outside := filepath.Join(filepath.Dir(dir), "secret.txt")
	if err := os.WriteFile(outside, []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	outDir := filepath.Join(filepath.Dir(dir), "elsewhere")
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		t.Fatal(err)
	}
	// A run folder outside, linked in: it is not under the folder.
	if err := os.WriteFile(filepath.Join(outDir, "records.jsonl"), []byte(`{"schema":1,"case_id":"x#0","status":"pass","error":"`+secret+`"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		filepath.Join(dir, "new", "cases", "link.jsonl"): outside,
		filepath.Join(dir, "new", "up"):                  filepath.Dir(dir),
		filepath.Join(dir, "linked-run"):                 outDir,
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	// A record whose logs point outside its run.
	f, err := os.OpenFile(filepath.Join(dir, "new", record.RecordsFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	rec := record.Record{Schema: 1, CaseID: "escape#0", Index: 9, Scenario: "escape", Status: record.StatusFail,
		Logs: map[string]string{"log": "../../secret.txt", "wire": "/etc/passwd"}}
	line, _ := json.Marshal(rec)
	f.Write(append(line, '\n'))
	f.Close()

	_, srv := serve(t, dir)
	paths := []string{
		"/runs/new/files/../../secret.txt",
		"/runs/new/files/%2e%2e/%2e%2e/secret.txt",
		"/runs/new/files/..%2f..%2fsecret.txt",
		"/runs/new/files/%2e%2e%2f%2e%2e%2fsecret.txt",
		"/runs/new/files/cases/link.jsonl",
		"/runs/new/files/up/secret.txt",
		"/runs/new/files//etc/passwd",
		"/runs/new/files/cases%5c..%5c..%5c..%5csecret.txt",
		"/runs/..%2f/files/secret.txt",
		"/runs/%2e%2e/files/secret.txt",
		"/runs/linked-run/",
		"/runs/linked-run/files/records.jsonl",
		"/runs/new/cases/9",
		"/",
	}
	for _, p := range paths {
		code, body := get(t, srv.URL+p)
		if strings.Contains(body, secret) || strings.Contains(body, "root:x:0:0") {
			t.Errorf("GET %s (status %d) served a file from outside the results folder", p, code)
		}
		if code == http.StatusOK && strings.Contains(p, "/files/") {
			t.Errorf("GET %s: status 200, want a refusal", p)
		}
	}
	// The case whose logs point outside still shows, with a note.
	if code, body := get(t, srv.URL+"/runs/new/cases/9"); code != http.StatusOK || !strings.Contains(body, "note:") {
		t.Errorf("the case with outside log paths: status %d, want its page with a note on its logs", code)
	}
}

// TestReadOnly sends every method that could change something to every
// route: each is refused, and the folder is as it was.
func TestReadOnly(t *testing.T) {
	dir := copyRuns(t)
	before := listing(t, dir)
	_, srv := serve(t, dir)
	routes := []string{"/", "/runs/new/", "/runs/new/cases/1", "/runs/new/cases/1/record.json", "/runs/new/files/records.jsonl",
		"/compare?old=base&new=new", "/catalog", "/events", "/static/style.css", "/assets/view.js", "/nope"}
	for _, route := range routes {
		for _, method := range []string{"POST", "PUT", "DELETE", "PATCH"} {
			req, _ := http.NewRequest(method, srv.URL+route, strings.NewReader(`{"status":"pass"}`))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusMethodNotAllowed {
				t.Errorf("%s %s: status %d, want 405", method, route, resp.StatusCode)
			}
		}
	}
	if after := listing(t, dir); after != before {
		t.Errorf("the folder changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// listing is every file under dir with its size and time.
func listing(t testing.TB, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %d %d\n", p, info.Size(), info.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// liveRun is a run folder being written, as the runner writes it.
type liveRun struct {
	t       testing.TB
	dir     string
	records []record.Record
	f       *os.File
}

// newLiveRun starts a run of the fixture's records in a new folder:
// run.json without an end, no records yet.
func newLiveRun(t testing.TB, results string) *liveRun {
	t.Helper()
	src, err := record.ReadRun(filepath.Join(fixtureRuns, "new"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(results, "live")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := record.WriteRunInfo(dir, record.RunInfo{RunID: "live", Started: time.Now(), Args: []string{"hosteval", "run"}}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, record.RecordsFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return &liveRun{t: t, dir: dir, records: src.Records, f: f}
}

// add appends the next record, whole.
func (l *liveRun) add() {
	rec := l.records[0]
	l.records = l.records[1:]
	rec.RunID = "live"
	data, _ := json.Marshal(rec)
	if _, err := l.f.Write(append(data, '\n')); err != nil {
		l.t.Fatal(err)
	}
}

// cut appends the start of the next record and no more: a crash mid-write.
func (l *liveRun) cut() {
	data, _ := json.Marshal(l.records[0])
	if _, err := l.f.Write(data[:len(data)/2]); err != nil {
		l.t.Fatal(err)
	}
}

// TestLiveRun watches a run being written: each record appended is
// announced on /events and shows on the run page; a last line cut short
// (an interrupted run) is reported, not misread.
func TestLiveRun(t *testing.T) {
	results := t.TempDir()
	run := newLiveRun(t, results)
	v, srv := serve(t, results, func(o *Options) { o.Poll = 10 * time.Millisecond })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		v.Watch(ctx)
	}()
	defer func() {
		cancel()
		<-done
	}()

	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := bufio.NewScanner(resp.Body)
	next := func() string {
		t.Helper()
		for events.Scan() {
			if line := events.Text(); strings.HasPrefix(line, "data: ") {
				return strings.TrimPrefix(line, "data: ")
			}
		}
		t.Fatalf("the event stream ended: %v", events.Err())
		return ""
	}

	if _, body := get(t, srv.URL+"/runs/live/"); !strings.Contains(body, `id="total-cases">0<`) || !strings.Contains(body, "running") {
		t.Fatalf("a run with no records yet: want 0 cases, running")
	}
	for n := 1; n <= 3; n++ {
		run.add()
		if got := next(); got != `{"run":"live"}` {
			t.Fatalf("event after record %d = %s, want the live run's", n, got)
		}
		if _, body := get(t, srv.URL+"/runs/live/"); !strings.Contains(body, fmt.Sprintf(`id="total-cases">%d<`, n)) {
			t.Errorf("after %d records the run page does not count %d cases", n, n)
		}
	}
	run.cut()
	next()
	_, body := get(t, srv.URL+"/runs/live/")
	if !strings.Contains(body, `id="total-cases">3<`) || !strings.Contains(body, "is not whole") {
		t.Errorf("a cut last line: want 3 cases and a warning that the last line is not whole")
	}
	// The runs page lists it without an end.
	if _, body := get(t, srv.URL+"/"); !strings.Contains(body, "state-running") && !strings.Contains(body, "state-incomplete") {
		t.Errorf("the runs page does not show the live run as running or incomplete")
	}
}

// TestManyCasesPaginated checks that a run of thousands of cases lists one
// page of them, and that the pages reach every case.
func TestManyCasesPaginated(t *testing.T) {
	results := t.TempDir()
	writeBigRun(t, filepath.Join(results, "big"), 2500)
	_, srv := serve(t, results)
	_, body := get(t, srv.URL+"/runs/big/")
	rows := strings.Count(body, `class="case-row`)
	if rows != PageSize || !strings.Contains(body, "1–100 of 2500 cases") || !strings.Contains(body, "page 1 of 25") {
		t.Errorf("first page: %d rows, want %d of 2500 on page 1 of 25", rows, PageSize)
	}
	_, body = get(t, srv.URL+"/runs/big/?page=25&status=failed")
	if !strings.Contains(body, "page 25 of 25") && !strings.Contains(body, "of 1250 cases matching") {
		t.Errorf("last page of failures: want page 25 of 25 of 1250")
	}
}

// writeBigRun writes a run of n cases from the fixture's records: every
// other one failed.
func writeBigRun(t testing.TB, dir string, n int) {
	t.Helper()
	src, err := record.ReadRun(filepath.Join(fixtureRuns, "new"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := os.Create(filepath.Join(dir, record.RecordsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	bw := bufio.NewWriter(w)
	for i := range n {
		rec := src.Records[i%len(src.Records)]
		rec.CaseID = fmt.Sprintf("%s#%d", rec.Scenario, i)
		rec.Repeat, rec.Index = i, i+1
		rec.Status = record.StatusPass
		if i%2 == 1 {
			rec.Status = record.StatusFail
		}
		data, _ := json.Marshal(rec)
		bw.Write(append(data, '\n'))
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := record.WriteRunInfo(dir, record.RunInfo{RunID: "big", Started: time.Now(), Finished: time.Now()}); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkRunPage5000 is the run page of a run of 5,000 cases, read and
// aggregated once, then served page after page.
func BenchmarkRunPage5000(b *testing.B) {
	results := b.TempDir()
	writeBigRun(b, filepath.Join(results, "big"), 5000)
	_, srv := serve(b, results)
	get(b, srv.URL+"/runs/big/")
	for b.Loop() {
		if code, _ := get(b, srv.URL+"/runs/big/?status=failed&page=3"); code != http.StatusOK {
			b.Fatal(code)
		}
	}
}

// BenchmarkLoad5000 reads and aggregates a run of 5,000 cases from disk.
func BenchmarkLoad5000(b *testing.B) {
	results := b.TempDir()
	writeBigRun(b, filepath.Join(results, "big"), 5000)
	st, err := newStore(results, 1)
	if err != nil {
		b.Fatal(err)
	}
	defer st.close()
	st.scan()
	for b.Loop() {
		e := st.entry("big")
		e.unload()
		if _, err := st.load(e); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCompareRoutingRuns: two runs of routing rows compare side by side
// on the six metrics, a row per group, and the routing tables, whose rows
// are the rows both runs answered, come after it, not as columns of it.
func TestCompareRoutingRuns(t *testing.T) {
	dir := routingRun(t)
	if err := os.CopyFS(filepath.Join(dir, "routing-new"), os.DirFS(filepath.Join("..", "..", "report", "testdata", "runs", "routing-new"))); err != nil {
		t.Fatal(err)
	}
	_, srv := serve(t, dir)
	code, body := get(t, srv.URL+"/compare?old=routing&new=routing-new")
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	head := regexp.MustCompile(`(?s)<table class="compare" id="compare-table">\s*<thead>(.*?)</thead>`).FindStringSubmatch(body)
	if head == nil {
		t.Fatalf("no side-by-side table:\n%s", body)
	}
	if n := strings.Count(head[1], "<th"); n != 7 {
		t.Errorf("side-by-side table has %d columns, want scenario and the 6 metrics:\n%s", n, head[1])
	}
	routing := body[strings.Index(body, `<section id="compare-routing">`)+1:]
	for _, want := range []string{"Routing, row by row", "<h3>Routing, old -&gt; new, same rows</h3>", "Flipped rows: routing/b-verbose/lexical"} {
		if !strings.Contains(routing, want) {
			t.Errorf("no %q after the side-by-side table", want)
		}
	}
}
