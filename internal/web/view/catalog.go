package view

import (
	"bytes"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/hosteval/hosteval/internal/catalog"
)

// catalogPage renders a `hosteval catalog -json` document found in the
// results folder: its totals, then its tables (per tool: bytes, tokens,
// marginal cost; per server; the findings).
func (v *Server) catalogPage(w http.ResponseWriter, r *http.Request) {
	docs := v.catalogs()
	want := r.URL.Query().Get("file")
	if want == "" && len(docs) > 0 {
		want = docs[0]
	}
	data := struct {
		Files   []choice
		File    string
		Catalog *catalog.Catalog
		Tables  []template.HTML
		Problem string
		Dir     string
	}{Files: choices(docs, want), File: want, Dir: v.opts.Dir}
	data.Files = data.Files[1:] // no "all"
	if want != "" {
		if !slices.Contains(docs, want) {
			data.Problem = "There is no catalog document " + want + " in this folder."
		} else if c, err := v.readCatalog(want); err != nil {
			data.Problem = err.Error()
		} else {
			data.Catalog = c
			for _, t := range c.Tables() {
				data.Tables = append(data.Tables, tableHTML(t))
			}
		}
	}
	v.render(w, http.StatusOK, "catalog", page{Title: "Catalog", Nav: "catalog", Data: data})
}

// catalogs lists the catalog documents in the results folder: the .json
// files at most two folders down whose kind is hosteval.catalog.
func (v *Server) catalogs() []string {
	var docs []string
	fsys := v.store.root.FS()
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		entries, err := fs.ReadDir(fsys, dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			p := path.Join(dir, e.Name())
			switch {
			case strings.HasPrefix(e.Name(), "."):
			case e.IsDir() && depth < maxDepth && e.Name() != "cases" && e.Name() != "transcripts":
				walk(p, depth+1)
			case e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".json") && isCatalog(fsys, p):
				docs = append(docs, p)
			}
		}
	}
	walk(".", 0)
	slices.Sort(docs)
	return docs
}

// isCatalog reports whether the file's first bytes name the catalog kind.
func isCatalog(fsys fs.FS, name string) bool {
	f, err := fsys.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	return bytes.Contains(head[:n], []byte(`"kind": "`+catalog.Kind+`"`)) || bytes.Contains(head[:n], []byte(`"kind":"`+catalog.Kind+`"`))
}

func (v *Server) readCatalog(name string) (*catalog.Catalog, error) {
	f, err := v.store.root.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return catalog.Read(f)
}
