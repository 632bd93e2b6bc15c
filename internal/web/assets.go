package web

import (
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strconv"
	"time"
)

// static holds the stylesheet, the page frame and the small scripts every
// page shares. Embedded, so the binary serves its pages with no files
// beside it.
//
//go:embed static
var static embed.FS

// StaticPrefix is where Static is mounted.
const StaticPrefix = "/static/"

// Static serves the shared assets under StaticPrefix.
func Static() http.Handler {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embed pattern guarantees the folder
	}
	return http.StripPrefix(StaticPrefix, http.FileServerFS(sub))
}

// Templates parses the shared page frame ("frame": title, nav and main
// blocks) with a page's own templates from fsys, and the functions every
// page may use.
func Templates(fsys fs.FS, patterns ...string) (*template.Template, error) {
	t, err := template.New("frame.html").Funcs(Funcs()).ParseFS(static, "static/frame.html")
	if err != nil {
		return nil, fmt.Errorf("page frame: %w", err)
	}
	if len(patterns) == 0 {
		return t, nil
	}
	t, err = t.ParseFS(fsys, patterns...)
	if err != nil {
		return nil, fmt.Errorf("page templates: %w", err)
	}
	return t, nil
}

// Funcs are the formatting functions of the pages.
func Funcs() template.FuncMap {
	return template.FuncMap{
		"bytes": FormatBytes,
		"ms":    FormatMS,
		"pct":   func(x float64) string { return strconv.FormatFloat(100*x, 'f', 0, 64) + "%" },
		"json": func(v any) (string, error) {
			b, err := json.MarshalIndent(v, "", "  ")
			return string(b), err
		},
		"time": func(t time.Time) string {
			if t.IsZero() {
				return ""
			}
			return t.Local().Format("2006-01-02 15:04:05")
		},
	}
}

// FormatBytes writes a size the way a person reads it: 812 B, 3.2 kB, 14 MB.
func FormatBytes(n int) string {
	switch {
	case n < 1000:
		return strconv.Itoa(n) + " B"
	case n < 1_000_000:
		return strconv.FormatFloat(float64(n)/1e3, 'f', 1, 64) + " kB"
	default:
		return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + " MB"
	}
}

// FormatMS writes a duration in milliseconds with the precision that
// matters at its size: 0.4 ms, 12 ms, 3.4 s.
func FormatMS(ms float64) string {
	switch {
	case ms < 10:
		return strconv.FormatFloat(ms, 'f', 1, 64) + " ms"
	case ms < 1000:
		return strconv.FormatFloat(ms, 'f', 0, 64) + " ms"
	default:
		return strconv.FormatFloat(ms/1000, 'f', 1, 64) + " s"
	}
}
