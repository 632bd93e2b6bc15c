package model

import "sync"

// Template builds the models of many conversations from one [Config],
// checking and parsing it once: a run of a thousand cases of one scenario
// parses its script (its YAML arguments) or compiles its rules once, not a
// thousand times. Each model it returns is a fresh conversation's: a
// scripted model starts at the top of the shared, read-only script; a rules
// model, which keeps no state between requests, is shared. Other models
// are built anew each time. A Template is safe for concurrent use.
type Template struct {
	cfg   Config
	once  sync.Once
	built Model
	err   error
}

// NewTemplate returns a Template of cfg; cfg is checked on first use.
func NewTemplate(cfg Config) *Template { return &Template{cfg: cfg} }

// TemplateOf returns the Template of cfg when m is what [New] built of it
// and has not been used yet: a loader that built a model to check its
// configuration need not parse it again.
func TemplateOf(cfg Config, m Model) *Template {
	t := &Template{cfg: cfg, built: m}
	t.once.Do(func() {})
	return t
}

// New returns a model for a new conversation, or the error [New] gives
// for the configuration.
func (t *Template) New() (Model, error) {
	t.once.Do(func() { t.built, t.err = New(t.cfg) })
	if t.err != nil {
		return nil, t.err
	}
	switch m := t.built.(type) {
	case *Scripted:
		return &Scripted{steps: m.steps}, nil
	case *Rules, *Lexical:
		// They keep nothing of a conversation: one serves them all (the
		// lexical router's indexes with it).
		return m, nil
	}
	return New(t.cfg)
}
