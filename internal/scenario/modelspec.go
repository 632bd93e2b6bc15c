package scenario

import (
	"github.com/hosteval/hosteval/internal/model"
	"github.com/hosteval/hosteval/internal/yamlx"
)

// models resolves a scenario's model or models.
func (f *fileCtx) models(root *yamlx.Node, d *scenarioDoc, sc *Scenario) {
	one, many := root.Get("model"), root.Get("models")
	switch {
	case one != nil && many != nil:
		errorAtKey(root, "models", "want model or models, not both")
		return
	case one == nil && many == nil:
		root.Report(Problem{Line: root.Line(), Path: "model", Msg: "required (or models)"})
		return
	case one != nil:
		if d.Model != nil {
			if spec, ok := f.modelSpec(d.Model, one); ok {
				sc.models = []ModelSpec{spec}
			}
		}
		return
	}
	if d.Models == nil {
		return // not a list: reported
	}
	if len(d.Models) == 0 {
		many.Errorf("want a list of models, got %s", many.Describe())
		return
	}
	seen := map[string]int{}
	for i, m := range d.Models {
		n := root.At(yamlx.Index("models", i))
		spec, ok := f.modelSpec(&m, n)
		if !ok {
			continue
		}
		if first, dup := seen[spec.Name]; dup {
			n.Errorf("duplicate model name %q (first at line %d): give each model a name", spec.Name, first)
			continue
		}
		seen[spec.Name] = n.Line()
		sc.models = append(sc.models, spec)
	}
}

// modelSpec builds one model once, to check it: its errors name the field
// they are about (model.New returns yamlx.Problems), which n places on the
// line that field was read from.
func (f *fileCtx) modelSpec(d *modelDoc, n *yamlx.Node) (ModelSpec, bool) {
	if d.kind == "" {
		return ModelSpec{}, false // its problems are reported
	}
	spec := ModelSpec{Name: d.Name, Config: d.Config}
	if spec.OpenAI != nil {
		*spec.OpenAI = spec.OpenAI.WithEnv(func(k string) string { v, _ := f.l.lookupEnv(k); return v })
	}
	m, err := spec.New()
	if err != nil {
		n.Locate(err)
		return spec, false
	}
	if spec.Name == "" {
		spec.Name = m.Name()
	}
	// The cases start from what was just parsed, not from the YAML again.
	spec.template = model.TemplateOf(spec.Config, m)
	return spec, true
}
