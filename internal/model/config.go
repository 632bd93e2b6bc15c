package model

import "errors"

// Config chooses one model and configures it: exactly one field is set. It
// is the "model:" value of a scenario:
//
//	model:
//	  scripted:
//	    - call: "cmdb__get_asset {hostname: jump-prod-02}"
//	    - answer: "It belongs to the platform team."
//
//	model:
//	  rules: {rules: [{match: '\bB-\d{3}\b', call: bikes__get_bike, args: {bike_id: '{{index .Groups 0}}'}}]}
//
//	model:
//	  openai: {base_url: http://localhost:8000/v1, model: gpt-oss-120b, timeout: 60s}
type Config struct {
	Scripted []ScriptStep  `yaml:"scripted,omitempty"`
	Rules    *RulesConfig  `yaml:"rules,omitempty"`
	OpenAI   *OpenAIConfig `yaml:"openai,omitempty"`
}

// New builds the model cfg chooses. Errors name the field from the model
// key down, e.g. "scripted[2].call: ..." or "rules.rules[1].match: ...".
// New does not read the environment: fill an OpenAI configuration with
// [OpenAIConfig.WithEnv] first. A scripted model keeps its place in the
// script, so call New once per conversation.
func New(cfg Config) (Model, error) {
	set := 0
	for _, b := range []bool{cfg.Scripted != nil, cfg.Rules != nil, cfg.OpenAI != nil} {
		if b {
			set++
		}
	}
	switch {
	case set == 0:
		return nil, errors.New("no model: want one of scripted, rules or openai")
	case set > 1:
		return nil, errors.New("want only one of scripted, rules or openai")
	case cfg.Scripted != nil:
		m, err := newScripted(cfg.Scripted, "scripted")
		if err != nil {
			return nil, err // not m: a nil *Scripted in a Model is not a nil Model
		}
		return m, nil
	case cfg.Rules != nil:
		m, err := newRules(*cfg.Rules, "rules.")
		if err != nil {
			return nil, err
		}
		return m, nil
	default:
		m, err := newOpenAI(*cfg.OpenAI, "openai.")
		if err != nil {
			return nil, err
		}
		return m, nil
	}
}
