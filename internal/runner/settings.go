package runner

import (
	"slices"
	"sync"
	"time"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/scenario"
)

// configs hold what the cases of one configuration (a scenario and a
// variant) have in common in a run, made once for all of them: their
// settings, the listings of the servers route-only cases use (route.go),
// and the tool tables of hosts whose servers are all shared or catalogs.
type configs struct {
	mu       sync.Mutex
	byID     map[configKey]*record.Settings
	listings listings
	tables   host.Tables
}

type configKey struct {
	scenario *scenario.Scenario
	variant  string
}

// settings are the host settings of c's configuration, for its record:
// the same value for every case of it, read-only. o are c's host options;
// they differ between its cases only in what settings leave out (the
// case's folder, session and logs).
func (cs *configs) settings(c *scenario.Case, o host.Options) *record.Settings {
	key := configKey{c.Scenario, c.Variant}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if s, ok := cs.byID[key]; ok {
		return s
	}
	if cs.byID == nil {
		cs.byID = map[configKey]*record.Settings{}
	}
	s := settings(o, c.Timeout())
	if sys := c.System(); sys != "" {
		s.System = record.DescriptionHash(sys)
	}
	cs.byID[key] = s
	return s
}

// texts are the texts the settings of cases name by hash (their tool
// descriptions and system prompts), for run.json: once per configuration,
// nil when no case has one.
func texts(cases []*scenario.Case) map[string]string {
	var m map[string]string
	add := func(text string) {
		if m == nil {
			m = map[string]string{}
		}
		m[record.DescriptionHash(text)] = text
	}
	seen := map[configKey]bool{}
	for _, c := range cases {
		key := configKey{c.Scenario, c.Variant}
		if seen[key] {
			continue
		}
		seen[key] = true
		for _, text := range c.HostOptions().Descriptions {
			add(text)
		}
		if sys := c.System(); sys != "" {
			add(sys)
		}
	}
	return m
}

// settings are the host settings a case runs under, from its host options
// with the host's defaults filled in, for its record.
func settings(o host.Options, caseTimeout time.Duration) *record.Settings {
	o = o.Effective()
	s := &record.Settings{
		Protocol:      string(o.Protocol),
		Budgets:       o.Budgets,
		CaseTimeoutMS: record.MS(caseTimeout),
		Allow:         slices.Clone(o.Allow),
		Deny:          slices.Clone(o.Deny),
		Elicitation:   !o.NoElicitation,
	}
	// The hard maximum applied only if progress could extend a round, and
	// then never less than the tool timeout (see host.Options).
	s.MaxToolTime = 0
	if o.ProgressExtends {
		s.MaxToolTime = max(o.MaxToolTime, o.ToolTimeout)
	}
	for name, text := range o.Descriptions {
		if s.Descriptions == nil {
			s.Descriptions = map[string]string{}
		}
		s.Descriptions[name] = record.DescriptionHash(text)
	}
	return s
}
