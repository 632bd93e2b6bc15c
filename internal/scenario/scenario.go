// Package scenario owns hosteval's scenario language: the YAML documents
// of scenario files and servers files (schema.go: the Go structs they are
// read into, from which the published JSON Schemas and the reference
// docs/scenarios.md are generated), their strict loading (every problem at
// once, each with file:line and the field's path, read by internal/yamlx),
// the expansion of a scenario into cases (variants x models x repeat), and
// the evaluation of a scenario's expectations against a finished record.
//
// Every field, expectation key and gate metric is listed, with its meaning
// and an example, in docs/scenarios.md; `hosteval schema` prints the JSON
// Schema an editor completes from (docs/scenario.schema.json,
// docs/servers.schema.json, docs/gates.schema.json).
//
// Loading happens before anything runs, so a typo in a scenario is a usage
// error with a precise line, never a failed case at the end of a long run.
// The files are split by concern: load.go (files and scenario documents),
// servers.go (servers files, server definitions, ${VAR}), modelspec.go (model
// specs), expectdoc.go (reading expectations; expect.go evaluates them),
// casefiles.go (${CASE_DIR} and files:), reference.go (schemas and the
// reference).
//
// A servers file maps names to {command, args, env, inherit_env, dir} or
// {url, headers, oauth} (oauth.go), with auto_run, shareable and connect, discover and
// initialize timeouts; ${VAR} expands from the environment, ${HERE} is the
// file's folder, $$ is a literal $.
//
// ${CASE_DIR} is the case folder: a fresh, empty folder the runner makes for
// each case (results/<run>/cases/NNNN-<case>/files, an absolute path), for
// servers that keep state in files or serve a folder:
//
//	memory:
//	  command: ${HERE}/node
//	  args: ["${HERE}/server-memory/dist/index.js"]
//	  env: {MEMORY_FILE_PATH: "${CASE_DIR}/memory.jsonl"}
//	filesystem:
//	  command: ${HERE}/node
//	  args: ["${HERE}/server-filesystem/dist/index.js", "${CASE_DIR}"]
//
// (In [...] and {...}, quote a value that holds ${...}: YAML reads its
// braces as the collection's.) ${CASE_DIR} may stand in args, env and dir
// (where it must come first), not in
// command, url or headers, and not in a shareable server, which outlives the
// case. A scenario's files: {relative/path: text} are written into the case
// folder before the servers start (folders are made as needed; text only);
// they need a server of the scenario that uses ${CASE_DIR}. Outside a run
// (hosteval tools, chat, catalog) ${CASE_DIR} is read from the environment
// like any variable.
package scenario

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/hosteval/hosteval/internal/budget"
	"github.com/hosteval/hosteval/internal/gate"
	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/model"
	"github.com/hosteval/hosteval/internal/oauth"
	"github.com/hosteval/hosteval/internal/yamlx"
)

// Defaults of a scenario whose fields are not set.
const (
	DefaultTimeout = 60 * time.Second
	DefaultRepeat  = 1
)

// Suite is every scenario loaded, in the order of the files and of the
// documents within them.
type Suite struct {
	Scenarios []*Scenario
	// Sources are the files the suite was read from, scenario files and
	// the servers files they use, in the order they were read: what
	// identifies a suite across machines (the shards of one run).
	Sources []Source
	// ServersFiles are the servers files among Sources, as named to the
	// user (hosteval lint reads their lint: sections).
	ServersFiles []string
}

// Source is one file a suite was read from, with the SHA-256 of its
// content (hex).
type Source struct {
	File   string
	SHA256 string
}

// Scenario is one scenario document. Its settings are reached through the
// cases it expands into ([Suite.Cases]).
type Scenario struct {
	Name        string
	Description string
	// File is the scenario's file as given to Load (or found in a folder);
	// Line is where its document starts.
	File string
	Line int
	// Gates are the scenario's own gates, restricted to its groups, with
	// Pos set to where each was written.
	Gates []gate.Gate

	servers     []*serverDef
	settings    hostSettings
	system      string
	models      []ModelSpec
	turns       []string
	files       map[string]string // cleaned relative path -> text
	elicitation []host.CannedAnswer
	approvals   []string
	// approvalRules are "file:line" of each of approvals.
	approvalRules []string
	variants      []*variant
	repeat        int
	timeout       time.Duration
	expects       []*expectation
	states        []host.CallRequest
	judges        []*judgeSpec
	cassettes     *cassettes
	refs          []toolRef
	// rows are the dataset's rows, nil without a dataset; mode is the
	// scenario's mode for them ("" is full).
	rows []*row
	mode string
	// distractors are the scenario's distractors: block, nil without.
	distractors *distractors
	// added are the namespaced tools that tools_changed expectations say a
	// server adds during the case: other expectations may name them.
	added []string
}

// variant is a named set of overrides; each variant is a case of its own.
type variant struct {
	name        string
	description string
	system      *string
	settings    hostSettings
	refs        []toolRef
}

// serverDef is one server as a servers file or an inline definition gives
// it, with ${VAR} expanded and paths resolved.
type serverDef struct {
	spec host.ServerSpec
	file string
	line int
	refs []toolRef // its auto_run names
	// caseDir is set when its args, env or dir use ${CASE_DIR}, which
	// stays a mark in spec until the runner expands it per case.
	caseDir bool
	// oauth is its oauth: block (url servers only); the command builds its
	// handler (see NewOAuth).
	oauth *oauth.Config
	// record is set by record_server: its answers are kept in the case's
	// cassette, and served from it in replay.
	record bool
}

// hostSettings are the host settings of a scenario or a variant. Nil (for
// the budgets: zero, and not written) means not set, so that a variant's
// settings merge over its scenario's.
type hostSettings struct {
	protocol *host.Mode
	// budgets are the host's budgets the settings give; written are the
	// keys the file wrote (a false is given too: see budget.Over).
	budgets budget.Budgets
	written []string
	// allow and deny replace as a whole (an empty, non-nil list clears the
	// scenario's); descriptions and auto_run merge key by key.
	allow        []string
	deny         []string
	descriptions map[string]string
	elicitation  *bool
	autoRun      map[string][]string
}

// over returns s with every setting that o sets replaced by o's.
func (s hostSettings) over(o hostSettings) hostSettings {
	r := s
	r.protocol = cmp.Or(o.protocol, s.protocol)
	r.budgets = budget.Over(s.budgets, o.budgets, o.written...)
	r.written = slices.Concat(s.written, o.written)
	r.elicitation = cmp.Or(o.elicitation, s.elicitation)
	if o.allow != nil {
		r.allow = o.allow
	}
	if o.deny != nil {
		r.deny = o.deny
	}
	r.descriptions = mergeOver(s.descriptions, o.descriptions)
	r.autoRun = mergeOver(s.autoRun, o.autoRun)
	return r
}

// mergeOver returns base with the keys that over sets replaced: a new map
// when over is not nil, base itself otherwise.
func mergeOver[V any](base, over map[string]V) map[string]V {
	if over == nil {
		return base
	}
	r := maps.Clone(base)
	if r == nil {
		r = map[string]V{}
	}
	maps.Copy(r, over)
	return r
}

// apply sets the options the settings set; the host's defaults apply to
// the rest.
func (s hostSettings) apply(o *host.Options) {
	if s.protocol != nil {
		o.Protocol = *s.protocol
	}
	o.Budgets = budget.Over(o.Budgets, s.budgets, s.written...)
	o.Allow = slices.Clone(s.allow)
	o.Deny = slices.Clone(s.deny)
	o.Descriptions = maps.Clone(s.descriptions)
	o.NoElicitation = s.elicitation != nil && !*s.elicitation
}

func setIf[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// ModelSpec names a model and configures it: exactly one of the embedded
// Config's Scripted, Rules or OpenAI is set.
type ModelSpec struct {
	// Name identifies the model in case IDs and records; by default the
	// model's own name ("scripted", "rules", "openai:<model>").
	Name string
	model.Config
	// template, set by Suite.Cases, parses Config once for every case of
	// one scenario and model.
	template *model.Template
}

// New builds a fresh model from the spec. A model keeps per-conversation
// state (a script's position), so every case gets its own; the cases of
// one suite share what their configuration parses into.
func (m ModelSpec) New() (model.Model, error) {
	if m.template != nil {
		return m.template.New()
	}
	return model.New(m.Config)
}

// Problem is one thing wrong with a scenario or servers file: its File,
// Line, Path (the field's path, e.g. "expect[2].answer_matches", "" for
// the document itself) and Msg.
type Problem = yamlx.Problem

// LoadError holds every problem Load found, sorted by file and line.
type LoadError = yamlx.Error

// refKind says how a name written in a scenario is checked.
type refKind int

const (
	// refServer is a server of the scenario (auto_run keys, elicitation
	// answers, server expectations).
	refServer refKind = iota
	// refTool is a namespaced tool that must exist (allow, deny,
	// descriptions, state checks).
	refTool
	// refApproval is a namespaced tool or a prefix ending in "*".
	refApproval
	// refExpect is a tool named in an expectation: a model may try a name
	// that does not exist, so it is checked only when it is namespaced for
	// a server of the scenario.
	refExpect
	// refAutoRun is a server's own name for one of its tools.
	refAutoRun
)

// toolRef is a name written in a scenario or servers file, kept with where
// it was written so that CheckTools can point at it once the servers have
// listed their tools.
type toolRef struct {
	kind   refKind
	file   string
	line   int
	path   string
	name   string
	server string // refAutoRun: the server whose tool it is
}
