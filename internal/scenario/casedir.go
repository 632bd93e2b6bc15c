package scenario

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hosteval/hosteval/internal/host"
)

// The case folder: a fresh, empty folder per case that servers can be
// pointed at (${CASE_DIR} in a server's args, env and dir) and that a
// scenario fills before the servers start (files:). A server that keeps
// state in files (server-memory's MEMORY_FILE_PATH, server-filesystem's
// allowed directory) then starts every case from the same nothing, however
// many cases run at once.

// caseDirVar is the variable a servers file writes as ${CASE_DIR}.
const caseDirVar = "CASE_DIR"

// caseDirMark stands for ${CASE_DIR} in a loaded definition until the
// runner knows the folder. It cannot come out of expanding anything else:
// "$${CASE_DIR}" is the literal text ${CASE_DIR}, and no YAML a person
// writes by accident holds a NUL.
const caseDirMark = "\x00" + caseDirVar + "\x00"

// checkCaseDir reports where ${CASE_DIR} may not be used in a server
// definition and whether the definition uses it where it may.
func (f *fileCtx) checkCaseDir(fs *fields, spec *host.ServerSpec, path string) bool {
	only := func(key string) {
		f.errorf(fs.keys[key], join(path, key), "${CASE_DIR} is only for args, env and dir")
	}
	if strings.Contains(spec.Command, caseDirMark) {
		only("command")
	}
	if strings.Contains(spec.URL, caseDirMark) {
		only("url")
	}
	for _, v := range spec.Headers {
		if strings.Contains(v, caseDirMark) {
			only("headers")
			break
		}
	}
	uses := strings.Contains(spec.Dir, caseDirMark) ||
		slices.ContainsFunc(spec.Args, func(a string) bool { return strings.Contains(a, caseDirMark) }) ||
		slices.ContainsFunc(spec.Env, func(e string) bool { return strings.Contains(e, caseDirMark) })
	if uses && spec.Shareable {
		f.errorf(fs.keys["shareable"], join(path, "shareable"),
			"a shareable server cannot use ${CASE_DIR}: it outlives the case whose folder it would get")
	}
	return uses
}

// files reads a scenario's files: relative path -> text, written into the
// case folder before the servers start.
func (f *fileCtx) files(n *yaml.Node, path string, sc *Scenario) map[string]string {
	fs := f.fields(n, path, nil)
	if fs == nil {
		return nil
	}
	out := map[string]string{}
	written := map[string]int{} // cleaned path -> line
	for _, name := range fs.order {
		key, p := fs.keys[name], join(path, name)
		clean := filepath.Clean(filepath.FromSlash(name))
		if !filepath.IsLocal(name) || clean == "." {
			f.errorf(key, path, "%q: want a relative path inside the case folder, e.g. notes/a.txt", name)
			continue
		}
		if line, dup := written[clean]; dup {
			f.errorf(key, path, "%q is the same file as the one at line %d", name, line)
			continue
		}
		v := deref(fs.vals[name])
		if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
			f.errorf(v, p, "want the file's text, got %s", describe(v))
			continue
		}
		written[clean] = key.Line
		out[clean] = v.Value
	}
	for name, line := range written {
		for dir := filepath.Dir(name); dir != "."; dir = filepath.Dir(dir) {
			if _, ok := written[dir]; ok {
				f.errorAt(line, path, fmt.Sprintf("%q is inside %q, which is a file", filepath.ToSlash(name), filepath.ToSlash(dir)))
			}
		}
	}
	if len(out) == 0 {
		return out
	}
	uses := false
	for _, def := range sc.servers {
		if def.file == "" {
			return out // a server with problems: they are reported
		}
		uses = uses || def.caseDir
	}
	if !uses {
		f.errorf(n, path, "no server of this scenario uses ${CASE_DIR}, so none would see these files")
	}
	return out
}

// UsesCaseDir reports whether the case needs a case folder: a server uses
// ${CASE_DIR}, or the scenario has files. The runner makes the folder and
// writes the files; [Case.HostOptionsIn] points the servers at it.
func (c *Case) UsesCaseDir() bool {
	return len(c.Scenario.files) > 0 || slices.ContainsFunc(c.Scenario.servers, func(d *serverDef) bool { return d.caseDir })
}

// Files are the scenario's files: path (relative, with the OS's separator)
// -> text.
func (c *Case) Files() map[string]string { return maps.Clone(c.Scenario.files) }

// withCaseDir replaces the mark of ${CASE_DIR} in a server's args, env and
// dir (the only places the loader lets it be).
func withCaseDir(spec *host.ServerSpec, dir string) {
	for i, a := range spec.Args {
		spec.Args[i] = strings.ReplaceAll(a, caseDirMark, dir)
	}
	for i, e := range spec.Env {
		spec.Env[i] = strings.ReplaceAll(e, caseDirMark, dir)
	}
	spec.Dir = strings.ReplaceAll(spec.Dir, caseDirMark, dir)
}
