package report

import (
	"fmt"
	"html/template"
	"io"
	"strings"
	"sync"

	"github.com/hosteval/hosteval/internal/record"

	"github.com/hosteval/hosteval/internal/text"
)

// TranscriptHTML is t as an HTML fragment (an <article>), for a page
// that styles it with TranscriptCSS: `hosteval view` puts it in its
// frame, WriteTranscriptHTML in a page of its own. Every text is escaped
// by html/template.
func TranscriptHTML(t *Transcript, links TranscriptLinks) (template.HTML, error) {
	var b strings.Builder
	if err := transcriptTemplate().ExecuteTemplate(&b, "transcript", transcriptPage{T: t, links: links}); err != nil {
		return "", fmt.Errorf("transcript html: %w", err)
	}
	return template.HTML(b.String()), nil
}

// WriteTranscriptHTML writes t as a self-contained HTML page (inline CSS,
// no script), as the transcripts/ of a run folder hold them.
func WriteTranscriptHTML(w io.Writer, t *Transcript, links TranscriptLinks) error {
	body, err := TranscriptHTML(t, links)
	if err != nil {
		return err
	}
	page := struct {
		Title string
		CSS   template.CSS
		Body  template.HTML
	}{t.Name + " · " + t.RunID, template.CSS(standaloneCSS + TranscriptCSS), body}
	if err := transcriptTemplate().ExecuteTemplate(w, "page", page); err != nil {
		return fmt.Errorf("transcript html: %w", err)
	}
	return nil
}

type transcriptPage struct {
	T     *Transcript
	links TranscriptLinks
}

// LogHref is the link to a log file, or "" when the page links none.
func (p transcriptPage) LogHref(rel string) string {
	if p.links.Log == nil {
		return ""
	}
	return p.links.Log(rel)
}

var transcriptTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("transcript").Funcs(template.FuncMap{
		"upper":            strings.ToUpper,
		"meta":             (*Transcript).meta,
		"serverLine":       serverLine,
		"requestLine":      func(r TranscriptRequest) string { return requestLine(&r) },
		"askLine":          func(a record.Ask) string { return askLine(&a) },
		"answerLine":       func(a record.Ask) string { return answerLine(&a) },
		"logText":          logText,
		"wireHead":         wireHead,
		"expectation":      expectationText,
		"plural":           text.Count,
		"dur":              fmtDur,
		"arguments":        func(c TranscriptCall) string { return c.arguments() },
		"sent":             func(c TranscriptCall) string { return c.sent() },
		"resultLine":       func(c TranscriptCall) string { return c.resultLine() },
		"legacyAsks":       func(c TranscriptCall) string { return c.legacyAsks() },
		"roundLine":        TranscriptRound.roundLine,
		"expectationsLine": (*Transcript).expectationsLine,
		"logNames":         (*Transcript).logNames,
		"wireBody":         WireLine.brief,
		"json":             compactJSON,
		"isApproved": func(a record.Ask) bool {
			return a.Action == "accept" || a.Action == record.ApprovalApproved
		},
	}).Parse(transcriptSource))
})

// TranscriptCSS styles the transcript fragment. It reads the page's
// colours from the custom properties of internal/web's stylesheet, with
// fallbacks for a page of its own.
const TranscriptCSS = `
.transcript .case-head h1 { display: flex; gap: .6rem; align-items: baseline; flex-wrap: wrap; }
.transcript .meta { color: var(--muted, #6a6f76); margin: .2rem 0; }
.transcript .servers { margin: .4rem 0 1rem; padding-left: 1.2rem; color: var(--muted, #6a6f76); }
.transcript section.turn-block { margin: 1.4rem 0; }
.transcript .msg { border-left: 3px solid var(--line, #e3e4e6); padding: .15rem 0 .15rem .9rem; margin: .6rem 0; }
.transcript .msg.user { border-color: var(--accent, #2f5fd0); }
.transcript .msg.model { border-color: var(--muted, #6a6f76); }
.transcript .msg.answer { border-color: var(--accent, #2f5fd0); }
.transcript .who { font-size: .78rem; color: var(--muted, #6a6f76); font-weight: 650; text-transform: uppercase; letter-spacing: .04em; }
.transcript .req-head { font-size: .85rem; color: var(--muted, #6a6f76); font-weight: 600; }
.transcript .verdict-box { border-left: 4px solid var(--fail, #b3261e); background: var(--fail-bg, #fbe9e7); padding: .4rem .8rem; border-radius: 6px; margin: .6rem 0; }
.transcript .verdict-box ul { margin: .2rem 0; padding-left: 1.2rem; }
.transcript .call { border: 1px solid var(--line, #e3e4e6); border-radius: 8px; padding: .5rem .8rem; margin: .6rem 0 .6rem 1rem; background: var(--panel, #fff); }
.transcript .call.bad { border-left: 4px solid var(--fail, #b3261e); }
.transcript .call-head { display: flex; gap: .5rem; align-items: baseline; flex-wrap: wrap; }
.transcript .call-head .tool { font-weight: 650; }
.transcript .step { margin: .35rem 0; }
.transcript .step .label { font-size: .78rem; color: var(--muted, #6a6f76); font-weight: 650; margin-right: .4rem; }
.transcript .host-step { border-left: 3px solid var(--warn, #9a6700); padding-left: .6rem; }
.transcript .round { border-left: 3px solid var(--pass, #1f7a3a); padding-left: .6rem; }
.transcript .ask { margin: .3rem 0 .3rem .4rem; }
.transcript .answer-line.no { color: var(--fail, #b3261e); font-weight: 600; }
.transcript .answer-line.yes { color: var(--pass, #1f7a3a); font-weight: 600; }
.transcript .result { border-left: 3px solid var(--line, #e3e4e6); padding-left: .6rem; }
.transcript pre.result-text { max-height: 11rem; }
.transcript mark.cut { display: block; background: var(--warn-bg, #fff4d6); color: var(--warn, #9a6700); font-weight: 650; padding: .2rem .4rem; margin-top: .3rem; border-top: 2px dashed var(--warn, #9a6700); }
.transcript table.lines td { font-family: var(--mono, monospace); font-size: .82em; padding: .15rem .5rem; }
.transcript .wire pre { max-height: 14rem; }
.transcript .expectations td.mark { width: 4.5rem; }
`

// standaloneCSS is the little a transcript page of its own needs besides
// TranscriptCSS: internal/web's stylesheet gives the viewer's pages the rest.
const standaloneCSS = `
:root { --bg: #fbfbfa; --fg: #1d1f21; --muted: #6a6f76; --line: #e3e4e6; --panel: #fff; --accent: #2f5fd0;
  --pass: #1f7a3a; --fail: #b3261e; --warn: #9a6700; --code: #f3f4f6; --pass-bg: #e7f4ea; --fail-bg: #fbe9e7; --warn-bg: #fff4d6;
  --mono: ui-monospace, "DejaVu Sans Mono", Menlo, monospace; }
html { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
body { margin: 0 auto; padding: 1.2rem 1.5rem 3rem; max-width: 1100px; }
a { color: var(--accent); }
h1 { font-size: 1.35rem; } h2 { font-size: 1.1rem; margin-top: 1.6rem; }
code, pre { font-family: var(--mono); font-size: .88em; }
pre { background: var(--code); padding: .5rem .7rem; border-radius: 6px; white-space: pre-wrap; word-break: break-word; margin: .3rem 0; overflow: auto; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
.badge { display: inline-block; padding: 0 .45rem; border-radius: 999px; font-size: .8rem; font-weight: 600; }
.badge.pass, .badge.ok { color: var(--pass); background: var(--pass-bg); }
.badge.fail, .badge.error, .badge.timeout, .badge.unknown_tool, .badge.denied, .badge.bad_arguments, .badge.tool_error { color: var(--fail); background: var(--fail-bg); }
.badge.clipped { color: var(--warn); background: var(--warn-bg); }
.muted { color: var(--muted); }
details > summary { cursor: pointer; color: var(--muted); }
`

const transcriptSource = `{{define "page"}}<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>{{.CSS}}</style>
</head>
<body>
{{.Body}}
</body>
</html>
{{end}}
{{define "transcript"}}{{$t := .T}}<article class="transcript" id="transcript">
<header class="case-head">
<h1><span class="badge {{$t.Status}}" id="case-status">{{$t.Status}}</span> <span id="case-name">{{$t.Name}}</span></h1>
<p class="meta">{{meta $t}}</p>
{{with $t.Error}}<p class="fail" id="case-error">error: {{.}}</p>{{end}}
{{with $t.Failed}}<div class="verdict-box" id="case-failed"><strong>Did not hold:</strong><ul>{{range .}}<li>{{expectation .}}</li>{{end}}</ul></div>{{end}}
<ul class="servers">{{range $t.Servers}}<li>server {{serverLine .}}</li>{{end}}
<li>{{$t.ToolDefs.Tools}} tools offered: {{$t.ToolDefs.Bytes}} B, {{$t.ToolDefs.Tokens}} tokens per request{{if $t.ToolDefs.Estimated}} (estimated){{end}}</li>
{{range $t.Notes}}<li class="warn">note: {{.}}</li>{{end}}</ul>
</header>
{{range $t.Turns}}<section class="turn-block" id="turn-{{.N}}">
<h2>Turn {{.N}}</h2>
<div class="msg user"><div class="who">user</div><pre class="question">{{.Question}}</pre></div>
{{range .Requests}}<div class="msg model"><div class="req-head">{{requestLine .}}</div>
{{with .Error}}<p class="fail">error: {{.}}</p>{{end}}
{{range .Calls}}{{template "call" .}}{{end}}</div>
{{end}}{{with .Error}}<p class="fail">error: {{.}}</p>{{end}}
{{if .Stopped}}<p class="warn">stopped: the turn reached max_steps</p>{{end}}{{with .Truncated}}<p class="warn">truncated: the endpoint cut the answer short (finish_reason {{.}}); it is not a whole answer</p>{{end}}
<div class="msg answer"><div class="who">answer</div><pre class="final-answer">{{.Answer}}</pre></div>
</section>
{{end}}
{{with $t.Checks}}<section id="checks"><h2>Checks after the conversation</h2>
{{range .}}{{template "call" .}}{{end}}</section>{{end}}
<section id="expectations"><h2>Expectations: {{expectationsLine $t}}</h2>
<table class="expectations"><tbody>
{{range $t.Expectations}}<tr class="{{if .Passed}}held{{else}}failed{{end}}"><td class="mark">{{if .Passed}}<span class="badge pass">pass</span>{{else}}<span class="badge fail">fail</span>{{end}}</td><td>{{expectation .}}</td></tr>
{{end}}</tbody></table></section>
{{with $t.ServerLines}}<section id="server-lines"><details><summary>Server log lines of no call ({{len .}})</summary>
<table class="lines"><tbody>{{range .}}<tr><td>{{logText .}}</td></tr>{{end}}</tbody></table></details></section>{{end}}
{{if $t.Logs}}<section id="logs"><h2>Logs</h2><ul>
{{range $name := logNames $t}}{{$rel := index $t.Logs $name}}{{$href := $.LogHref $rel}}<li>{{$name}}: {{if $href}}<a href="{{$href}}">{{$rel}}</a>{{else}}<code>{{$rel}}</code>{{end}}</li>
{{end}}</ul></section>{{end}}
</article>{{end}}
{{define "call"}}<div class="call {{.Outcome}}{{if ne .Outcome "ok"}} bad{{end}}" id="call-{{.TraceID}}-{{.Step}}">
<div class="call-head"><code class="tool">{{.Name}}</code> <span class="badge {{.Outcome}} outcome">{{.Outcome}}</span>{{if .Clipped}} <span class="badge clipped">cut</span>{{end}} <span class="muted">{{dur .MS}}</span></div>
{{with arguments .}}<div class="step"><span class="label">arguments</span><pre class="args">{{.}}</pre></div>{{end}}
{{with .Decision}}<div class="step host-step"><span class="label">host</span><span class="decision">{{.}}</span></div>{{end}}
{{with sent .}}<div class="step host-step"><span class="label">sent</span>{{.}}</div>{{end}}
{{range .RoundTrips}}<div class="step round"><div class="label">{{roundLine .}}</div>
{{range .Asks}}<div class="ask"><div>{{askLine .}}</div>{{with .Message}}<pre class="question">{{.}}</pre>{{end}}{{with .URL}}<pre>{{.}}</pre>{{end}}
<div class="answer-line {{if isApproved .}}yes{{else}}no{{end}}">{{answerLine .}}</div>{{with .Content}}<pre class="content">{{json .}}</pre>{{end}}</div>
{{end}}</div>
{{end}}{{with legacyAsks .}}<div class="step round">{{.}}</div>{{end}}
<div class="step result"><span class="label">result as the model received it</span> <span class="muted">{{resultLine .}}</span>
<pre class="result-text">{{.Kept}}</pre>{{if .CutNote}}<mark class="cut">✂ cut here by the result budget: the model read up to here, then {{.CutNote}}</mark>{{end}}</div>
{{with .ServerLog}}<details class="step log" open><summary>server log ({{len .}})</summary><table class="lines"><tbody>{{range .}}<tr><td>{{logText .}}</td></tr>{{end}}</tbody></table></details>{{end}}
{{with .Wire}}<details class="step wire"><summary>wire ({{plural (len .) "message"}})</summary>{{range .}}<div class="muted">{{wireHead .}}</div><pre>{{wireBody .}}</pre>{{end}}</details>{{end}}
</div>{{end}}`
