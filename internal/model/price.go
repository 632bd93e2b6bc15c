package model

import (
	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/yamlx"
)

// Price is what an endpoint charges, in dollars (or any one currency) per
// million tokens. In YAML:
//
//	price: {input_per_mtok: 0.15, output_per_mtok: 0.60, cached_input_per_mtok: 0.075}
type Price struct {
	InputPerMTok  float64 `yaml:"input_per_mtok" doc:"Dollars per million prompt tokens." example:"0.15"`
	OutputPerMTok float64 `yaml:"output_per_mtok" doc:"Dollars per million completion tokens (reasoning included)." example:"0.6"`
	// CachedInputPerMTok prices the prompt tokens the endpoint served from
	// its prompt cache; nil prices them as input.
	CachedInputPerMTok *float64 `yaml:"cached_input_per_mtok" doc:"Dollars per million prompt tokens served from the endpoint's cache (default: the input price)." example:"0.075"`
}

func (p Price) check(prefix string) error {
	switch {
	case p.InputPerMTok < 0:
		return yamlx.Errorf(prefix+"price.input_per_mtok", "%g is negative", p.InputPerMTok)
	case p.OutputPerMTok < 0:
		return yamlx.Errorf(prefix+"price.output_per_mtok", "%g is negative", p.OutputPerMTok)
	case p.CachedInputPerMTok != nil && *p.CachedInputPerMTok < 0:
		return yamlx.Errorf(prefix+"price.cached_input_per_mtok", "%g is negative", *p.CachedInputPerMTok)
	}
	return nil
}

// Cost is what usage cost: prompt tokens at the input price, the cached
// part of them (cachedPromptTokens, from the endpoint's
// usage.prompt_tokens_details.cached_tokens) at the cached price, and
// completion tokens (reasoning included) at the output price. A nil usage
// costs 0.
func (p Price) Cost(u *record.Usage, cachedPromptTokens int) float64 {
	if u == nil {
		return 0
	}
	cached := min(max(cachedPromptTokens, 0), u.PromptTokens)
	cachedPrice := p.InputPerMTok
	if p.CachedInputPerMTok != nil {
		cachedPrice = *p.CachedInputPerMTok
	}
	return (float64(u.PromptTokens-cached)*p.InputPerMTok +
		float64(cached)*cachedPrice +
		float64(u.CompletionTokens)*p.OutputPerMTok) / 1e6
}
