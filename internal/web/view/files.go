package view

import (
	"errors"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
)

// filePolicy is the Content-Security-Policy of a run's own files: a
// sandbox (no script, an origin of its own), styles inline for the
// reports' HTML, and nothing loaded from anywhere.
const filePolicy = "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:"

// file serves one file of a run folder: the reports, the records, a
// case's log or wire trace. The path is read through the run's os.Root
// inside the results folder's, so that .., an encoded %2e%2e or a
// symbolic link cannot reach a file outside it. HTML (the run's reports
// and transcripts) is served in a sandbox; everything else as plain text,
// which no browser runs.
func (v *Server) file(w http.ResponseWriter, r *http.Request) {
	e := v.store.entry(r.PathValue("run"))
	rel := r.PathValue("path")
	if e == nil {
		v.fail(w, r, http.StatusNotFound, "There is no such run in this folder.")
		return
	}
	if !fs.ValidPath(rel) || strings.Contains(rel, `\`) {
		v.fail(w, r, http.StatusBadRequest, "A file of a run is named by a path inside it, without \"..\".")
		return
	}
	sub, err := v.store.root.OpenRoot(e.path)
	if err != nil {
		v.fail(w, r, http.StatusNotFound, "The run's folder cannot be read.")
		return
	}
	defer sub.Close()
	f, err := sub.Open(rel)
	if err != nil {
		status, msg := http.StatusNotFound, "There is no such file in the run's folder."
		if !errors.Is(err, fs.ErrNotExist) {
			status, msg = http.StatusForbidden, "This file cannot be served: only files inside the results folder are."
		}
		v.fail(w, r, status, msg)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		v.fail(w, r, http.StatusNotFound, "Only files are served, not folders.")
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", filePolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	switch ext := path.Ext(rel); ext {
	case ".html":
		h.Set("Content-Type", "text/html; charset=utf-8")
	case ".json":
		h.Set("Content-Type", "application/json; charset=utf-8")
	case ".png":
		h.Set("Content-Type", mime.TypeByExtension(ext))
	default:
		// jsonl, md, xml, logs: text to read, never to run.
		h.Set("Content-Type", "text/plain; charset=utf-8")
	}
	http.ServeContent(w, r, path.Base(rel), st.ModTime(), f)
}
