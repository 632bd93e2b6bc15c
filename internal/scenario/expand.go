package scenario

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/model"
	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/yamlx"
)

// CaseOptions select and multiply the cases of a suite.
type CaseOptions struct {
	// Run, if set, keeps the scenarios whose name, or "name/variant", it
	// matches.
	Run *regexp.Regexp
	// Repeat, when positive, replaces every scenario's repeat.
	Repeat int
	// Models, when not nil, replaces every scenario's models (the CLI's
	// -model flag).
	Models []ModelSpec
	// OAuth builds the handler of each server with an oauth: block that the
	// cases use, once for all of them; every case's host options carry it.
	// Without it, such a server is an error.
	OAuth NewOAuth
}

// Case is one run of a scenario: one variant, one model, one repeat. Its
// exported fields are what the runner puts in the record.
type Case struct {
	// ID is unique within the suite:
	// scenario[/variant][/model][/dN][/row]#repeat. The variant is there
	// when the scenario has variants, the model when the scenario runs
	// more than one, dN (N other tools) when it has distractors, the row's
	// id for a case of a dataset row.
	ID string
	// Scenario is the scenario the case runs: its Name, File and Line go
	// in the record.
	Scenario  *Scenario
	Variant   string
	ModelName string
	Repeat    int // 0-based
	// Index is the case's 0-based position in the suite's expansion: its
	// number in the run folder (cases/0001-...), the same in every shard.
	Index int
	// Row is the id of the dataset row the case asks, "" for a case of a
	// scenario without a dataset; Distractors is how many other tools the
	// scenario's distractors: add to its table.
	Row         string
	Distractors int

	row *row
	// distractorSpecs are the catalogs of its distractors, after the
	// scenario's servers.
	distractorSpecs []host.ServerSpec
	variant         *variant
	model           ModelSpec
	settings        hostSettings
	// oauth are the handlers of its servers with an oauth: block, by name.
	oauth map[string]host.OAuthHandler
}

// MaxCases bounds the cases a suite expands into, so that a typo in a
// repeat or a runaway list of variants is an error, not a run that eats
// the machine's memory.
const MaxCases = 1_000_000

// Cases expands the suite into cases: scenario x variant x model x repeat,
// in that order of nesting, in the order the scenarios were loaded.
func (s *Suite) Cases(opts CaseOptions) ([]*Case, error) {
	if opts.Models != nil {
		opts.Models = slices.Clone(opts.Models) // names are filled in below
		if len(opts.Models) == 0 {
			return nil, errors.New("no models given")
		}
		seen := map[string]bool{}
		for i, m := range opts.Models {
			built, err := m.New()
			if err != nil {
				return nil, fmt.Errorf("model %s: %w", m.Name, err)
			}
			if m.Name == "" {
				opts.Models[i].Name = built.Name()
			}
			if m.template == nil {
				opts.Models[i].template = model.TemplateOf(m.Config, built)
			}
			if seen[opts.Models[i].Name] {
				return nil, fmt.Errorf("model %s is given twice", opts.Models[i].Name)
			}
			seen[opts.Models[i].Name] = true
		}
	}
	total := 0
	for _, sc := range s.Scenarios {
		n := max(len(sc.variants), 1) * len(sc.models)
		if opts.Models != nil {
			n = max(len(sc.variants), 1) * len(opts.Models)
		}
		repeat := sc.repeat
		if opts.Repeat > 0 {
			repeat = opts.Repeat
		}
		sizes := 1
		if sc.distractors != nil {
			sizes = max(len(sc.distractors.sizes), 1)
		}
		total += n * repeat * max(len(sc.rows), 1) * sizes
		if total > MaxCases {
			return nil, fmt.Errorf("the suite expands into more than %d cases (scenario %s: variants x models x repeat)", MaxCases, sc.Name)
		}
	}
	var cases []*Case
	handlers := &oauthHandlers{build: opts.OAuth}
	for _, sc := range s.Scenarios {
		var auth map[string]host.OAuthHandler
		variants := sc.variants
		if len(variants) == 0 {
			variants = []*variant{nil}
		}
		models := slices.Clone(sc.models)
		if opts.Models != nil {
			models = slices.Clone(opts.Models)
		}
		for i := range models {
			if models[i].template == nil {
				models[i].template = model.NewTemplate(models[i].Config)
			}
		}
		repeat := sc.repeat
		if opts.Repeat > 0 {
			repeat = opts.Repeat
		}
		for _, v := range variants {
			settings, vname := sc.settings, ""
			if v != nil {
				settings, vname = sc.settings.over(v.settings), v.name
			}
			selected := opts.Run == nil || opts.Run.MatchString(sc.Name) || (vname != "" && opts.Run.MatchString(sc.Name+"/"+vname))
			if !selected && sc.rows == nil {
				continue
			}
			rows, sizes := sc.rows, []int{0}
			if rows == nil {
				rows = []*row{nil}
			}
			if sc.distractors != nil {
				sizes = sc.distractors.sizes
			}
			for _, size := range sizes {
				for _, rw := range rows {
					for _, m := range models {
						for r := range repeat {
							id := sc.Name
							if vname != "" {
								id += "/" + vname
							}
							if len(models) > 1 {
								id += "/" + m.Name
							}
							if sc.distractors != nil {
								// The size is a group of its own: d25.
								id += "/d" + strconv.Itoa(size)
							}
							if rw != nil {
								id += "/" + rw.id
							}
							// -run selects a dataset's cases too: by
							// scenario/row, scenario/variant/row, or the
							// case ID without its repeat.
							if !selected && !opts.Run.MatchString(sc.Name+"/"+rw.id) && (vname == "" || !opts.Run.MatchString(sc.Name+"/"+vname+"/"+rw.id)) &&
								!opts.Run.MatchString(id) {
								continue
							}
							if auth == nil {
								var err error
								if auth, err = scenarioOAuth(sc, handlers); err != nil {
									return nil, err
								}
							}
							c := &Case{
								ID: id + "#" + strconv.Itoa(r), Scenario: sc, Variant: vname, ModelName: m.Name, Repeat: r, Index: len(cases),
								variant: v, model: m, settings: settings, oauth: auth, row: rw,
							}
							if rw != nil {
								c.Row = rw.id
							}
							if sc.distractors != nil {
								c.Distractors = size
								c.distractorSpecs = sc.distractors.servers(size, rw.tools)
							}
							cases = append(cases, c)
						}
					}
				}
			}
		}
	}
	if len(cases) == 0 && opts.Run != nil {
		return nil, fmt.Errorf("no scenario, scenario/variant or scenario/row matches %q", opts.Run)
	}
	return cases, nil
}

// scenarioOAuth returns the handlers of a scenario's servers, by name
// (an empty map when none has an oauth: block).
func scenarioOAuth(sc *Scenario, handlers *oauthHandlers) (map[string]host.OAuthHandler, error) {
	auth := map[string]host.OAuthHandler{}
	for _, def := range sc.servers {
		h, err := handlers.handler(def)
		if err != nil {
			return nil, err
		}
		if h != nil {
			auth[def.spec.Name] = h
		}
	}
	return auth, nil
}

// HostOptions are the host options of the case: its servers (with their
// OAuth handlers and auto-run lists as the scenario sets them), limits, tool lists,
// description overrides, elicitation capability and the scenario's canned
// answers and approvals. Log, ServerLog, Wire, Steps and SessionID are the
// runner's. Every call returns a fresh copy. A server that uses ${CASE_DIR}
// has it as written: the runner uses [Case.HostOptionsIn].
func (c *Case) HostOptions() host.Options {
	return c.HostOptionsIn("${" + caseDirVar + "}")
}

// HostOptionsIn is HostOptions with ${CASE_DIR} replaced by caseDir, the
// case's own folder (absolute).
func (c *Case) HostOptionsIn(caseDir string) host.Options {
	var o host.Options
	for _, def := range c.Scenario.servers {
		spec := def.spec
		spec.Args = slices.Clone(spec.Args)
		spec.Env = slices.Clone(spec.Env)
		spec.Headers = maps.Clone(spec.Headers)
		spec.AutoRun = slices.Clone(spec.AutoRun)
		if def.caseDir {
			withCaseDir(&spec, caseDir)
		}
		spec.OAuth = c.oauth[spec.Name]
		if list, ok := c.settings.autoRun[spec.Name]; ok {
			spec.AutoRun = append([]string{}, list...) // empty, not nil: none
		}
		o.Servers = append(o.Servers, spec)
	}
	// Distractors come after the scenario's own servers; their catalogs
	// are shared by every case with the same tools.
	o.Servers = append(o.Servers, c.distractorSpecs...)
	c.settings.apply(&o)
	answers := make([]host.CannedAnswer, len(c.Scenario.elicitation))
	for i, a := range c.Scenario.elicitation {
		a.Content = maps.Clone(a.Content)
		answers[i] = a
	}
	o.Elicitor = host.Canned{Answers: answers}
	o.Approver = host.CannedApprovals{Tools: slices.Clone(c.Scenario.approvals), Rules: slices.Clone(c.Scenario.approvalRules)}
	return o
}

// NewModel builds a fresh model for the case: a model keeps
// per-conversation state, so every case needs its own.
func (c *Case) NewModel() (model.Model, error) {
	m, err := c.model.New()
	if err != nil {
		return nil, fmt.Errorf("case %s: model %s: %w", c.ID, c.ModelName, err)
	}
	return m, nil
}

// System is the system prompt: the variant's if it sets one.
func (c *Case) System() string {
	if c.variant != nil && c.variant.system != nil {
		return *c.variant.system
	}
	return c.Scenario.system
}

// Turns are the user's questions, one per turn: the row's for a case of
// a dataset row.
func (c *Case) Turns() []string {
	if c.row != nil {
		return slices.Clone(c.row.turns)
	}
	return slices.Clone(c.Scenario.turns)
}

// Mode is record.RouteOnly for a case that ends at the model's first
// answer and sends nothing to any server, record.RouteFull otherwise.
func (c *Case) Mode() string {
	if c.row == nil {
		return record.RouteFull
	}
	return cmp.Or(c.row.mode, c.Scenario.mode, record.RouteFull)
}

// RouteOnly reports whether the case ends at the model's first answer.
func (c *Case) RouteOnly() bool { return c.Mode() == record.RouteOnly }

// Timeout is the case's deadline.
func (c *Case) Timeout() time.Duration { return c.Scenario.timeout }

// StateChecks are the calls the runner makes through host.Check after the
// last turn, in order; it appends one record.Call per check to
// Record.Checks, which Evaluate reads by position. The runner fills TraceID
// and Step.
func (c *Case) StateChecks() []host.CallRequest {
	if c.row != nil && len(c.row.states) > 0 {
		return slices.Concat(c.Scenario.states, c.row.states)
	}
	return slices.Clone(c.Scenario.states)
}

// Shareable reports whether the server's definition marks it as safe to
// keep running and reuse across cases (HostOptions carries the same flag in
// host.ServerSpec.Shareable).
func (c *Case) Shareable(server string) bool {
	for _, def := range c.Scenario.servers {
		if def.spec.Name == server {
			return def.spec.Shareable
		}
	}
	return false
}

// ExpectsServerFailure reports whether the scenario expects the server not
// to connect ({server: x, connected: false} or {server: x,
// version_failure: true}): its failure to connect is then the verdict to
// check, not an infrastructure error.
func (c *Case) ExpectsServerFailure(server string) bool {
	for _, e := range c.Scenario.expects {
		s, ok := e.check.(*serverExpect)
		if ok && s.server == server && ((s.connected != nil && !*s.connected) || (s.versionFailure != nil && *s.versionFailure)) {
			return true
		}
	}
	return false
}

// CheckTools checks the tool names a case's scenario uses against the tools
// its servers offer (every namespaced name in the host's table, offered to
// the model or not): names in allow, deny, descriptions, approvals, state
// checks and auto_run lists, and expectation tool names namespaced for a
// server of the scenario. Names of a server that has no tools in the list
// (it did not connect) are not checked: its failure is reported elsewhere.
// Scripted calls are not checked, since calling a tool that does not exist
// is a thing a scenario may want to test.
func CheckTools(c *Case, tools []string) []Problem {
	have := map[string]bool{}
	for _, t := range tools {
		have[t] = true
	}
	// A tool a server adds during the case is not listed yet.
	for _, t := range c.Scenario.added {
		have[t] = true
	}
	tools = slices.Concat(tools, c.Scenario.added)
	// Keyed by the scenario's servers only: a name of any other server is
	// skipped below.
	connected := map[string]bool{}
	for _, def := range c.Scenario.servers {
		name := def.spec.Name
		connected[name] = slices.ContainsFunc(tools, func(t string) bool { return strings.HasPrefix(t, name+"__") })
	}
	refs := slices.Clone(c.Scenario.refs)
	if c.variant != nil {
		refs = append(refs, c.variant.refs...)
	}
	for _, def := range c.Scenario.servers {
		refs = append(refs, def.refs...)
	}
	var ps []Problem
	for _, r := range refs {
		problem := func(format string, args ...any) {
			ps = append(ps, Problem{File: r.file, Line: r.line, Path: r.path, Msg: fmt.Sprintf(format, args...)})
		}
		switch r.kind {
		case refTool, refExpect, refApproval:
			name := r.name
			prefix := r.kind == refApproval && strings.HasSuffix(name, "*")
			name = strings.TrimSuffix(name, "*")
			server, _, ok := strings.Cut(name, "__")
			if !ok || !connected[server] {
				continue
			}
			switch {
			case prefix && !slices.ContainsFunc(tools, func(t string) bool { return strings.HasPrefix(t, name) }):
				problem("no tool of server %s matches %q", server, r.name)
			case !prefix && !have[name]:
				problem("server %s offers no tool %q%s", server, name, yamlx.Suggest(name, tools))
			}
		case refAutoRun:
			if r.name == "*" || !connected[r.server] {
				continue
			}
			if !have[host.Namespaced(r.server, r.name)] {
				var own []string
				for _, t := range tools {
					if rest, ok := strings.CutPrefix(t, r.server+"__"); ok {
						own = append(own, rest)
					}
				}
				problem("server %s offers no tool %q%s", r.server, r.name, yamlx.Suggest(r.name, own))
			}
		}
	}
	yamlx.Sort(ps)
	return ps
}
