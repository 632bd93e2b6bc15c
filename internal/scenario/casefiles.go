package scenario

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/yamlx"
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

// checkCaseDir reports where ${CASE_DIR} may not be used in the server
// definition read at n and whether the definition uses it where it may.
func (f *fileCtx) checkCaseDir(n *yamlx.Node, spec *host.ServerSpec) bool {
	only := func(key string) {
		errorAtKey(n, key, "${CASE_DIR} is only for args, env and dir")
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
		errorAtKey(n, "shareable", "a shareable server cannot use ${CASE_DIR}: it outlives the case whose folder it would get")
	}
	return uses
}

// files reads a scenario's files (read at n): relative path -> text,
// written into the case folder before the servers start.
func (f *fileCtx) files(files yamlx.Map[fileText], n *yamlx.Node, sc *Scenario) map[string]string {
	out := map[string]string{}
	written := map[string]int{} // cleaned path -> line
	problem := func(line int, format string, args ...any) {
		n.Report(Problem{Line: line, Path: n.Path(), Msg: fmt.Sprintf(format, args...)})
	}
	for _, e := range files {
		clean := filepath.Clean(filepath.FromSlash(e.Key))
		if !filepath.IsLocal(e.Key) || clean == "." {
			problem(e.Line, "%q: want a relative path inside the case folder, e.g. notes/a.txt", e.Key)
			continue
		}
		if line, dup := written[clean]; dup {
			problem(e.Line, "%q is the same file as the one at line %d", e.Key, line)
			continue
		}
		if !e.OK {
			continue // reported
		}
		written[clean] = e.Line
		out[clean] = string(e.Value)
	}
	for name, line := range written {
		for dir := filepath.Dir(name); dir != "."; dir = filepath.Dir(dir) {
			if _, ok := written[dir]; ok {
				problem(line, "%q is inside %q, which is a file", filepath.ToSlash(name), filepath.ToSlash(dir))
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
		n.Errorf("no server of this scenario uses ${CASE_DIR}, so none would see these files")
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
