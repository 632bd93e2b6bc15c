package scenario

import (
	"fmt"
	"math/bits"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/yamlx"
)

// Distractors: the catalog as an axis. A dataset scenario's
// `distractors: {from, sizes, seed}` adds other tools to the table (from
// catalogs: tools files, or servers of the servers file that are
// catalogs), so that the same rows are asked beside 0, 25, 50, 100 other
// tools, each size a routing group of its own. The tools of each size
// are the first of one permutation of all the sources' tools, drawn from
// the seed (so the sizes are nested: 25 are among the 50), skipping a
// row's expected tools. Distractors are offered and never called: a
// route-only case calls nothing, and in a whole conversation the host
// answers a call of one with an error saying its server is not connected,
// sending nothing anywhere.

// distractorsDoc is a scenario's distractors block.
type distractorsDoc struct {
	From   []string   `yaml:"from" required:"true" doc:"Where the other tools come from: tools files (hosteval catalog -save, relative to this file, ending in .json) or servers of the servers file that are catalogs (catalog: FILE). Their tools keep their own server's prefix (the file's server, or the servers file's name), which must not be a server of the scenario." example:"[catalogs/everything.json, catalogs/filesystem.json]"`
	Sizes  []int      `yaml:"sizes" required:"true" doc:"How many other tools each group offers beside the scenario's own, each a group of its own (0: none), at most as many as the sources hold." example:"[0, 25, 50]"`
	Seed   *uint64    `yaml:"seed" doc:"The seed of the permutation the tools are drawn from (default 1): one seed, one set of tools per size, on every machine and every run." example:"7"`
	Target *unitScore `yaml:"target" doc:"The routing accuracy the reports look for: they name the configuration (variant and size) with the fewest tool-definition tokens that reaches it." example:"0.9"`
}

// distractors are a scenario's distractors as loaded.
type distractors struct {
	sizes  []int
	target float64
	// pool is every source's offerable tool, in the order of the sources
	// and their tools; order is the pool permuted by the seed.
	pool  []distractorTool
	order []int
	// sources are the catalogs, in the order given.
	sources []distractorSource
	// sets caches the servers of each size and exclusion: cases that
	// get the same tools get the same catalogs, so the run builds their
	// table once.
	sets map[string][]host.ServerSpec
}

type distractorSource struct {
	server  string
	catalog *host.Catalog
}

type distractorTool struct {
	source int // index into sources
	index  int // the tool's index in its catalog
	name   string
}

// DefaultDistractorSeed seeds the permutation when distractors: gives no
// seed.
const DefaultDistractorSeed = 1

// readDistractors reads the block: its sources, the pool and the sizes.
func (l *loader) readDistractors(f *fileCtx, root *yamlx.Node, d *distractorsDoc, sc *Scenario, dataset bool) {
	n := root.At("distractors")
	ds := &distractors{sizes: d.Sizes, sets: map[string][]host.ServerSpec{}}
	if d.Target != nil {
		ds.target = float64(*d.Target)
	}
	if !dataset {
		errorAtKey(root, "distractors", "distractors go with a dataset: they are an axis of its rows")
	}
	own := map[string]bool{}
	for _, s := range sc.servers {
		own[s.spec.Name] = true
	}
	names := map[string]string{} // namespaced tool -> its source, for collisions
	for i, from := range d.From {
		p := yamlx.Index("from", i)
		server, cat := l.distractorSource(f, root, n, p, from)
		if cat == nil {
			continue
		}
		if own[server] {
			errorAt(n, p, "%s: its tools' prefix %s is a server of the scenario: a distractor is another server's tool", from, server)
			continue
		}
		if slices.ContainsFunc(ds.sources, func(s distractorSource) bool { return s.server == server }) {
			errorAt(n, p, "%s: a second source of server %s", from, server)
			continue
		}
		ds.sources = append(ds.sources, distractorSource{server: server, catalog: cat})
		taskOnly := cat.TaskOnly()
		for j, name := range cat.Names() {
			if slices.Contains(taskOnly, name) {
				continue // never offered: it would not count
			}
			full := host.Namespaced(server, name)
			if prev, dup := names[full]; dup {
				errorAt(n, p, "%s: tool %s becomes %s, as a tool of %s does", from, name, full, prev)
				continue
			}
			names[full] = from
			ds.pool = append(ds.pool, distractorTool{source: len(ds.sources) - 1, index: j, name: full})
		}
	}
	if len(d.Sizes) == 0 && n.Get("sizes") != nil {
		errorAt(n, "sizes", "empty: want at least one size, e.g. [0, 25, 50]")
	}
	seen := map[int]bool{}
	for i, size := range d.Sizes {
		p := yamlx.Index("sizes", i)
		switch {
		case size < 0:
			errorAt(n, p, "want 0 or more, got %d", size)
		case seen[size]:
			errorAt(n, p, "size %d is given twice", size)
		case size > len(ds.pool) && len(ds.sources) == len(d.From):
			errorAt(n, p, "%d other tools, but the sources hold %d", size, len(ds.pool))
		}
		seen[size] = true
	}
	seed := uint64(DefaultDistractorSeed)
	if d.Seed != nil {
		seed = *d.Seed
	}
	ds.order = permutation(len(ds.pool), seed)
	sc.distractors = ds
}

// distractorSource reads one source: a tools file, or a server of the
// scenario's servers file that is a catalog. It returns the tools' prefix
// and the catalog (nil when it has problems, which are reported).
func (l *loader) distractorSource(f *fileCtx, root, n *yamlx.Node, p, from string) (string, *host.Catalog) {
	if strings.HasSuffix(strings.ToLower(from), ".json") {
		cat := f.catalog(n, p, from)
		if cat == nil {
			return "", nil
		}
		server := cat.Server
		if server == "" {
			server = strings.TrimSuffix(filepath.Base(from), filepath.Ext(from))
		}
		if !serverNameRE.MatchString(server) {
			errorAt(n, p, "%s: %q is not a valid server name: want %s", from, server, serverNameWant)
			return "", nil
		}
		return server, cat
	}
	sf := l.scenarioServersFile(f, root)
	if sf == nil || !sf.ok {
		errorAt(n, p, "%q: not a .json tools file, and no servers file names it", from)
		return "", nil
	}
	def, ok := sf.defs[from]
	switch {
	case !ok:
		errorAt(n, p, "no server %q in %s%s (or give a .json tools file)", from, sf.name, yamlx.Suggest(from, sf.names))
		return "", nil
	case def == nil:
		return "", nil // its problems are reported
	case def.spec.Catalog == nil:
		errorAt(n, p, "server %s of %s is started, not a catalog: save its tools once (hosteval catalog -servers %s -save FILE) and give the file", from, sf.name, from)
		return "", nil
	}
	return from, def.spec.Catalog
}

// scenarioServersFile is the servers file the scenario's server names
// resolve in (nil when there is none).
func (l *loader) scenarioServersFile(f *fileCtx, root *yamlx.Node) *serversFile {
	if n := root.Get("servers_file"); n != nil {
		rel := n.Text()
		abs, display := rel, rel
		if !filepath.IsAbs(rel) {
			abs, display = filepath.Join(f.dir, rel), filepath.Join(filepath.Dir(f.name), rel)
		}
		return l.serversFile(abs, display)
	}
	if abs := l.nearestServersFile(f.dir); abs != "" {
		return l.serversFile(abs, l.display(abs))
	}
	return nil
}

// servers are the distractor servers of one size for a row expecting
// expected: a catalog per source holding its chosen tools, the same
// values for every row whose exclusion is the same.
func (ds *distractors) servers(size int, expected []string) []host.ServerSpec {
	if ds == nil || size == 0 {
		return nil
	}
	var excluded []string
	for _, name := range expected {
		if slices.ContainsFunc(ds.pool, func(t distractorTool) bool { return t.name == name }) {
			excluded = append(excluded, name)
		}
	}
	slices.Sort(excluded)
	key := strconv.Itoa(size) + "\x00" + strings.Join(excluded, "\x00")
	if specs, ok := ds.sets[key]; ok {
		return specs
	}
	chosen := make([][]int, len(ds.sources))
	n := 0
	for _, i := range ds.order {
		if n == size {
			break
		}
		t := ds.pool[i]
		if slices.Contains(excluded, t.name) {
			continue
		}
		chosen[t.source] = append(chosen[t.source], t.index)
		n++
	}
	var specs []host.ServerSpec
	for s, indexes := range chosen {
		if len(indexes) == 0 {
			continue
		}
		slices.Sort(indexes) // in the catalog's own order
		src := ds.sources[s]
		sub := src.catalog.Subset(fmt.Sprintf("%s (%d distractors)", src.catalog.Source, len(indexes)), indexes)
		specs = append(specs, host.ServerSpec{Name: src.server, Catalog: sub})
	}
	ds.sets[key] = specs
	return specs
}

// HasDistractors reports whether the case's scenario has distractors: (a
// size of 0 included).
func (c *Case) HasDistractors() bool { return c.Scenario.distractors != nil }

// ServerNames are the names of the scenario's own servers, in order:
// [Case.HostOptions] lists its distractors' catalogs after them (a sample
// of another server's tools, under that server's name).
func (c *Case) ServerNames() []string {
	names := make([]string, len(c.Scenario.servers))
	for i, def := range c.Scenario.servers {
		names[i] = def.spec.Name
	}
	return names
}

// DistractorTools are the namespaced names of the tools the case's
// distractors add, in the table's order (none without distractors).
func (c *Case) DistractorTools() []string {
	var names []string
	for _, spec := range c.distractorSpecs {
		for _, name := range spec.Catalog.Names() {
			names = append(names, host.Namespaced(spec.Name, name))
		}
	}
	return names
}

// permutation is a permutation of 0..n-1 drawn from seed: Fisher-Yates
// over a PCG-XSH-RR generator written out here, so that it is the same on
// every machine and with every Go release.
func permutation(n int, seed uint64) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	r := pcg{state: seed + 0x853c49e6748fea9b, inc: 0xda3e39cb94b95bdb}
	r.next()
	for i := n - 1; i > 0; i-- {
		j := int(r.below(uint32(i + 1)))
		p[i], p[j] = p[j], p[i]
	}
	return p
}

// pcg is O'Neill's PCG32 (XSH RR): 64 bits of state, 32 bits out.
type pcg struct{ state, inc uint64 }

func (r *pcg) next() uint32 {
	old := r.state
	r.state = old*6364136223846793005 + (r.inc | 1)
	xorshifted := uint32(((old >> 18) ^ old) >> 27)
	rot := uint32(old >> 59)
	return bits.RotateLeft32(xorshifted, -int(rot))
}

// below returns a number in [0, n) without modulo bias (Lemire's method
// with rejection).
func (r *pcg) below(n uint32) uint32 {
	for {
		m := uint64(r.next()) * uint64(n)
		if low := uint32(m); low >= n || low >= -n%n {
			return uint32(m >> 32)
		}
	}
}
