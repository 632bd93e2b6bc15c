package scenario

import (
	"fmt"
	"path/filepath"

	"github.com/hosteval/hosteval/internal/host"
)

// LoadServers reads a servers file, as strictly as Load reads the files
// that use it, and returns the servers named, in the order named (all of
// them, in file order, when no name is given). The CLI's tools, chat and
// catalog commands start servers from it.
func LoadServers(path string, names ...string) ([]host.ServerSpec, error) {
	l := newLoader()
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("servers file %s: %w", path, err)
	}
	sf := l.serversFile(abs, l.display(abs))
	if len(l.problems) > 0 {
		return nil, &LoadError{Problems: dedupe(l.problems)}
	}
	if len(names) == 0 {
		names = sf.names
	}
	var specs []host.ServerSpec
	for _, name := range names {
		def, ok := sf.defs[name]
		if !ok || def == nil {
			return nil, fmt.Errorf("%s: no server named %q (it has: %v)", sf.name, name, sf.names)
		}
		specs = append(specs, def.spec)
	}
	return specs, nil
}
