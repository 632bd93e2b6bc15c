package runner

import (
	"slices"
	"time"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/record"
)

// settings are the host settings a case runs under, from its host options
// with the host's defaults filled in, for its record.
func settings(o host.Options, caseTimeout time.Duration) *record.Settings {
	o = o.Effective()
	s := &record.Settings{
		Protocol:            string(o.Protocol),
		ConnectTimeoutMS:    record.MS(o.ConnectTimeout),
		DiscoverTimeoutMS:   record.MS(o.DiscoverTimeout),
		InitializeTimeoutMS: record.MS(o.InitializeTimeout),
		ToolTimeoutMS:       record.MS(o.ToolTimeout),
		ProgressExtends:     o.ProgressExtends,
		PersonTimeoutMS:     record.MS(o.PersonTimeout),
		CaseTimeoutMS:       record.MS(caseTimeout),
		MaxResultBytes:      o.MaxResultBytes,
		MaxArgBytes:         o.MaxArgBytes,
		MaxRounds:           o.MaxRounds,
		MaxSteps:            o.MaxSteps,
		Allow:               slices.Clone(o.Allow),
		Deny:                slices.Clone(o.Deny),
		Elicitation:         !o.NoElicitation,
	}
	if o.ProgressExtends {
		s.MaxToolTimeMS = record.MS(max(o.MaxToolTime, o.ToolTimeout))
	}
	for name, text := range o.Descriptions {
		if s.Descriptions == nil {
			s.Descriptions = map[string]string{}
		}
		s.Descriptions[name] = record.DescriptionHash(text)
	}
	return s
}
