package lint

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hosteval/hosteval/internal/host"
)

// catalogOf makes a catalog of n tools over servers of 100 tools each, with
// descriptions of 10 to 50 words drawn from a vocabulary of 3,000 (a few
// near-duplicates among them), one to three described parameters, and
// annotations on most: about 560 bytes a tool, the size of the npm
// reference servers' (73 KB for 138 tools, internal/catalog's
// testdata/peers138.json).
func catalogOf(n int) []Server {
	r := rand.New(rand.NewPCG(1, 2))
	vocab := make([]string, 3000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%dx%s", i, strings.Repeat("e", i%5))
	}
	sentence := func(words int) string {
		ws := make([]string, words)
		for i := range ws {
			// Zipf-like: common words often, rare ones seldom.
			ws[i] = vocab[int(float64(len(vocab))*r.Float64()*r.Float64()*r.Float64())]
		}
		return strings.Join(ws, " ") + "."
	}
	var servers []Server
	for i := 0; i < n; i++ {
		if i%100 == 0 {
			servers = append(servers, Server{Name: fmt.Sprintf("srv%03d", i/100), Instructions: sentence(40)})
		}
		s := &servers[len(servers)-1]
		desc := sentence(10 + r.IntN(40))
		if i%500 == 1 {
			// A near-duplicate of the tool before it.
			var prev struct{ Description string }
			json.Unmarshal(s.Tools[len(s.Tools)-1], &prev)
			desc = prev.Description + " Also w1."
		}
		props := map[string]any{}
		var required []string
		for p := range 1 + r.IntN(3) {
			name := fmt.Sprintf("param_%d", p)
			props[name] = map[string]any{"type": "string", "description": sentence(5 + r.IntN(8))}
			if p == 0 {
				required = append(required, name)
			}
		}
		tool := map[string]any{"name": fmt.Sprintf("tool_%05d", i), "title": sentence(3), "description": desc,
			"inputSchema": map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}}
		if i%3 != 0 {
			tool["annotations"] = map[string]any{"readOnlyHint": i%2 == 0, "destructiveHint": false}
		}
		raw, _ := json.Marshal(tool)
		s.Tools = append(s.Tools, raw)
	}
	return servers
}

// BenchmarkLint10000 lints a catalog of 10,000 tools with every rule: the
// target is under 2 s on 2 cores (go test -bench Lint10000 -cpu 2).
func BenchmarkLint10000(b *testing.B) {
	servers := catalogOf(10000)
	bytes := 0
	for _, s := range servers {
		for _, t := range s.Tools {
			bytes += len(t)
		}
	}
	ctx := context.Background()
	var rep *Report
	cpu := cpuSeconds()
	for b.Loop() {
		var err error
		if rep, err = Lint(ctx, servers, Options{Namespace: host.Namespaced}); err != nil {
			b.Fatal(err)
		}
	}
	// On a shared machine the wall time says as much about the others as
	// about lint: the CPU seconds it took say what it costs.
	b.ReportMetric((cpuSeconds()-cpu)/float64(b.N), "cpu-s/lint")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/lint")
	b.ReportMetric(float64(bytes)/10000, "bytes/tool")
	b.ReportMetric(float64(len(rep.Findings)), "findings")
}

// BenchmarkLint1MBDescription lints one tool whose description is 1 MB of
// what makes the text rules work hardest: invisible characters, comment
// openers, phrases the patterns start on, identifiers.
func BenchmarkLint1MBDescription(b *testing.B) {
	desc := hostileText(1 << 20)
	servers := []Server{{Name: "big", Instructions: desc, Tools: raws(toolWith(desc))}}
	ctx := context.Background()
	cpu := cpuSeconds()
	for b.Loop() {
		if _, err := Lint(ctx, servers, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric((cpuSeconds()-cpu)/float64(b.N), "cpu-s/lint")
	b.SetBytes(int64(2 * len(desc)))
}

// hostileText repeats pieces that start matches without finishing them,
// up to n bytes.
func hostileText(n int) string {
	pieces := []string{"ignore all ", "do not tell ", "<!-- ", "\u200b", "\U000E0041", "\x1b[", "a\u0430", "send_email ",
		"when any other tool ", "~/.ss", "<IMPORT", "\u202e", "always call this ", "full conversation? ", "\ufe01", " "}
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString(pieces[i%len(pieces)])
	}
	return b.String()
}

func toolWith(text string) string {
	t := map[string]any{"name": "t\u0430ol", "description": text, "title": text,
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"notes": map[string]any{"type": "string", "description": text}}}}
	raw, _ := json.Marshal(t)
	return string(raw)
}

// TestHugeText: every rule runs over 1 MB descriptions, instructions and
// parameter descriptions of hostile text and quotes no more than a bounded
// excerpt of it (how long it takes is BenchmarkLint1MBDescription's).
func TestHugeText(t *testing.T) {
	desc := hostileText(1 << 20)
	rep := lintOf(t, []Server{{Name: "big", Instructions: desc, Tools: raws(toolWith(desc))}}, Options{})
	if len(rep.Findings) < 10 {
		t.Errorf("%d findings on hostile text, want the hidden-text and instruction rules to fire", len(rep.Findings))
	}
	for _, f := range rep.Findings {
		if n := utf8.RuneCountInString(f.Text); n > 2*quoteContext+10*quoteMark {
			t.Errorf("%s quotes %d runes", f.Rule, n)
		}
		if n := utf8.RuneCountInString(f.Message); n > 400 {
			t.Errorf("%s: a message of %d runes", f.Rule, n)
		}
	}
}

// FuzzTextRules: any text as a tool's name, description, title, parameter
// and instructions lints without a panic, and every quote is valid UTF-8
// with no invisible character left in it.
func FuzzTextRules(f *testing.F) {
	for _, s := range []string{"", "plain text", "ignore all previous instructions", "a\u200bb", "\U000E0041\U000E0042",
		"\x1b[31m", "<!-- x", "[//]: # (x)", "get_\u0430sset", "~/.ssh/id_rsa", "<IMPORTANT>", "\u202eabc", "\xff\xfe",
		"when send_email is called", strings.Repeat("ignore ", 50), "\ufe0f\ufe0f", "👨\u200d👩"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tool, _ := json.Marshal(map[string]any{"name": s, "description": s, "title": s,
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{s: map[string]any{"description": s}}, "required": []string{s}}})
		servers := []Server{{Name: "a", Instructions: s, Tools: []json.RawMessage{tool}},
			{Name: "b", Tools: raws(`{"name":"send_email","description":"Send an email to someone."}`)}}
		rep, err := Lint(context.Background(), servers, Options{Namespace: host.Namespaced})
		if err != nil {
			t.Fatal(err)
		}
		lock, err := Pin(servers)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Lint(context.Background(), servers[:1], Options{Pins: lock}); err != nil {
			t.Fatal(err)
		}
		for _, f := range rep.Findings {
			if !utf8.ValidString(f.Text) || !utf8.ValidString(f.Message) {
				t.Errorf("%s: invalid UTF-8 in %q / %q", f.Rule, f.Text, f.Message)
			}
			for _, r := range f.Text {
				if invisible(r) {
					t.Errorf("%s: the quote %q shows %U as is", f.Rule, f.Text, r)
				}
			}
		}
	})
}
