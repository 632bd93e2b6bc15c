// Package view is `hosteval view`: read-only pages over a results folder,
// served on the loopback interface by internal/web.
//
// The pages: the runs found in the folder, with a trend of pass rate, p95
// call latency and tool-definition tokens per request across the runs of
// one suite (the same scenario files); a run, with its summary, gates,
// charts, A/B tables and its cases, filtered and paginated; a case, with
// its transcript (internal/report's model), its raw record and its log
// files; two runs compared (report.Compare, the regressions marked, the
// groups and cases that appeared or vanished first); and a tool catalog
// (a `hosteval catalog -json` document found in the folder).
//
// It reads records as they are appended: a run in progress can be watched,
// and the pages that show it refresh themselves through server-sent events
// (internal/web.Events). An interrupted run (no end in run.json, a last
// line cut short) is read like any other, the cut line reported.
//
// It changes nothing: every route is GET or HEAD (web.ReadOnly), and every
// file is read through an os.Root of the folder, so that no path, however
// written (.., %2e%2e, a symbolic link that leads out), reaches a file
// outside it. Every string from a model, a server or a scenario reaches a
// page through html/template; the files of a run are served as plain text,
// or, for the reports' own HTML, in a sandbox that runs no script.
package view

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/hosteval/hosteval/internal/web"
)

// Options configure a Server.
type Options struct {
	// Dir is the results folder (or one run folder).
	Dir string
	// Poll is how often the folder is looked at for new runs and records
	// (default DefaultPoll).
	Poll time.Duration
	// Keep is how many runs keep their records in memory (default 4); a
	// run read again after that is read from its files.
	Keep int
}

// DefaultPoll is how often the folder is looked at by default.
const DefaultPoll = 500 * time.Millisecond

// Server serves the pages. Build it with New; it is an http.Handler, and
// Serve runs it with the watch that feeds its live pages.
type Server struct {
	opts    Options
	store   *store
	events  *web.Events
	pages   map[string]*template.Template
	handler http.Handler
	// started stands for the time of the embedded files.
	started time.Time
}

//go:embed templates assets
var files embed.FS

// pageNames are the pages, each a template of templates/ on the shared frame.
var pageNames = []string{"runs", "run", "case", "compare", "catalog", "error"}

// New opens the results folder and prepares the pages.
func New(opts Options) (*Server, error) {
	if opts.Poll <= 0 {
		opts.Poll = DefaultPoll
	}
	if opts.Keep <= 0 {
		opts.Keep = 4
	}
	st, err := newStore(opts.Dir, opts.Keep)
	if err != nil {
		return nil, fmt.Errorf("view %s: %w", opts.Dir, err)
	}
	v := &Server{opts: opts, store: st, events: web.NewEvents(64), pages: map[string]*template.Template{}, started: time.Now()}
	for _, name := range pageNames {
		t, err := web.Templates(files, "templates/parts.html", "templates/"+name+".html")
		if err != nil {
			st.close()
			return nil, fmt.Errorf("view: page %s: %w", name, err)
		}
		v.pages[name] = t
	}
	st.scan()

	mux := http.NewServeMux()
	mux.Handle("GET /static/", web.Static())
	assets, err := fs.Sub(files, "assets")
	if err != nil {
		return nil, err
	}
	mux.HandleFunc("GET /assets/report.css", v.reportCSS)
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(assets)))
	mux.Handle("GET /events", v.events)
	mux.HandleFunc("GET /{$}", v.runsPage)
	mux.HandleFunc("GET /runs/{run}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, runURL(r.PathValue("run")), http.StatusMovedPermanently)
	})
	mux.HandleFunc("GET /runs/{run}/{$}", v.runPage)
	mux.HandleFunc("GET /runs/{run}/cases/{n}", v.casePage)
	mux.HandleFunc("GET /runs/{run}/cases/{n}/record.json", v.recordJSON)
	mux.HandleFunc("GET /runs/{run}/files/{path...}", v.file)
	mux.HandleFunc("GET /compare", v.comparePage)
	mux.HandleFunc("GET /catalog", v.catalogPage)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		v.fail(w, r, http.StatusNotFound, "There is no page at this address.")
	})
	v.handler = web.ReadOnly(mux)
	return v, nil
}

// ServeHTTP serves the pages (read-only; web.Serve adds the headers).
func (v *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { v.handler.ServeHTTP(w, r) }

// Close releases the folder and ends the event streams.
func (v *Server) Close() error {
	v.events.Close()
	return v.store.close()
}

// Serve serves the pages on ln and watches the folder for new runs and
// records until ctx ends.
func (v *Server) Serve(ctx context.Context, ln net.Listener) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return web.Serve(ctx, ln, v) })
	g.Go(func() error { v.Watch(ctx); return nil })
	err := g.Wait()
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// scanEvery is how many polls go by between looks for new run folders.
const scanEvery = 4

// Watch looks at the folder every Options.Poll until ctx ends, and tells
// the open pages what changed: a "run" event names the run that grew or
// ended, or appeared.
func (v *Server) Watch(ctx context.Context) {
	tick := time.NewTicker(v.opts.Poll)
	defer tick.Stop()
	for n := 0; ; n++ {
		if n%scanEvery == 0 {
			for _, key := range v.store.scan() {
				if n > 0 {
					v.events.Publish("run", runEvent{Run: key, New: true})
				}
			}
		}
		for _, e := range v.store.entries() {
			if v.store.poll(e) {
				v.events.Publish("run", runEvent{Run: e.key})
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// runEvent tells a page which run changed.
type runEvent struct {
	Run string `json:"run"`
	New bool   `json:"new,omitempty"`
}
