package model

import "github.com/hosteval/hosteval/internal/yamlx"

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
	Scripted []ScriptStep   `yaml:"scripted" doc:"A scripted model: the exact messages a test wants, one step per model request, consumed across the turns; then it answers done."`
	Rules    *RulesConfig   `yaml:"rules" doc:"A rules model: regular expressions on the question choose a call, templates over the result write the answer."`
	OpenAI   *OpenAIConfig  `yaml:"openai" doc:"A model behind any OpenAI-compatible Chat Completions endpoint (vLLM, Ollama, a hosted API); empty base_url, api_key and model come from OPENAI_BASE_URL, OPENAI_API_KEY and HOSTEVAL_MODEL."`
	Lexical  *LexicalConfig `yaml:"lexical" doc:"The lexical router, a proxy for a model in CI without an endpoint: it ranks the offered tools by BM25 over what the host sends of each (name, description, parameters' names and descriptions) and calls the best one, or none under min_score; it fills only arguments whose enum or pattern a word of the question meets. Reports mark it a lexical proxy." example:"{min_score: 2.5}"`
}

// New builds the model cfg chooses. Errors are [yamlx.Problem]s naming the
// field from the model key down, e.g. "scripted[2].call: ..." or
// "rules.rules[1].match: ...", so that a file's reader puts them on their
// line.
// New does not read the environment: fill an OpenAI configuration with
// [OpenAIConfig.WithEnv] first. A scripted model keeps its place in the
// script, so call New once per conversation.
func New(cfg Config) (Model, error) {
	set := 0
	for _, b := range []bool{cfg.Scripted != nil, cfg.Rules != nil, cfg.OpenAI != nil, cfg.Lexical != nil} {
		if b {
			set++
		}
	}
	switch {
	case set == 0:
		return nil, yamlx.Errorf("", "no model: want one of scripted, rules, openai or lexical")
	case set > 1:
		return nil, yamlx.Errorf("", "want only one of scripted, rules, openai or lexical")
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
	case cfg.Lexical != nil:
		m, err := newLexical(*cfg.Lexical, "lexical.")
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
