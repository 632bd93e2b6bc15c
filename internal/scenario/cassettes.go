package scenario

import (
	"path/filepath"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hosteval/hosteval/internal/model"
	"github.com/hosteval/hosteval/internal/model/replay"
	"github.com/hosteval/hosteval/internal/yamlx"
)

// A scenario's cassettes: where its cases' model requests (and the answers
// of its servers marked record_server) are recorded and replayed. The
// runner opens one cassette per case in the folder; the command line's
// -record and -replay override the scenario's folder and mode.

// cassettesDoc is a scenario's cassettes: key.
type cassettesDoc struct {
	Dir  string        `yaml:"dir" required:"true" doc:"The folder, relative to this file. A case's cassette is <dir>/<scenario>/[<variant>/]<model>.<repeat>.yaml (names made safe for a file name); a server's answers go beside it, in <model>.<repeat>.server-<name>.yaml." example:"cassettes"`
	Mode *cassetteMode `yaml:"mode" doc:"replay (the default: a request that is not in the cassette fails the case, saying what changed, and never reaches the endpoint), record (every request goes to the endpoint and the cassettes are written anew) or fallback (replay what is recorded; send the rest and append it)." example:"replay"`
}

// cassetteMode is a replay.Mode.
type cassetteMode replay.Mode

func (m *cassetteMode) UnmarshalYAML(n *yamlx.Node) error {
	var s string
	if !n.Decode(&s) {
		return nil
	}
	mode, err := replay.ParseMode(s)
	if err != nil {
		return err
	}
	*m = cassetteMode(mode)
	return nil
}

func (*cassetteMode) JSONSchema(*yamlx.Reflector) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Enum: []any{string(replay.Replay), string(replay.Record), string(replay.Fallback)}}
}

// cassettes is a scenario's cassettes, as loaded.
type cassettes struct {
	dir  string // relative to the working folder, as the file's name is
	mode replay.Mode
}

// cassettes resolves a scenario's cassettes folder against its file.
func (f *fileCtx) cassettes(d *cassettesDoc) *cassettes {
	c := &cassettes{dir: d.Dir, mode: replay.Replay}
	if !filepath.IsAbs(c.dir) {
		c.dir = filepath.Join(filepath.Dir(f.name), c.dir)
	}
	if d.Mode != nil {
		c.mode = replay.Mode(*d.Mode)
	}
	return c
}

// Cassettes returns the folder and mode of the scenario's cassettes, and
// false when the scenario has none.
func (c *Case) Cassettes() (dir string, mode replay.Mode, ok bool) {
	if c.Scenario.cassettes == nil {
		return "", "", false
	}
	return c.Scenario.cassettes.dir, c.Scenario.cassettes.mode, true
}

// RecordedServers are the case's servers marked record_server, in the
// order of the scenario.
func (c *Case) RecordedServers() []string {
	var names []string
	for _, def := range c.Scenario.servers {
		if def.record {
			names = append(names, def.spec.Name)
		}
	}
	return names
}

// Endpoints are the configurations of the endpoints the case's model and
// judges talk to, for the run's registry of endpoint limits.
func (c *Case) Endpoints() []model.OpenAIConfig {
	var cfgs []model.OpenAIConfig
	if c.model.OpenAI != nil {
		cfgs = append(cfgs, *c.model.OpenAI)
	}
	for _, j := range c.Scenario.judges {
		if j.Config != nil && j.Config.OpenAI != nil {
			cfgs = append(cfgs, *j.Config.OpenAI)
		}
	}
	return cfgs
}

// TalksToEndpoint reports whether the case's model or one of its judges
// talks to an endpoint: only such a case has requests to record.
func (c *Case) TalksToEndpoint() bool { return len(c.Endpoints()) > 0 }
