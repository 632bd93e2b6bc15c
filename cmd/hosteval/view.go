package main

import (
	"context"
	"fmt"
	"os"

	"golang.org/x/sync/errgroup"

	"github.com/hosteval/hosteval/internal/web"
	"github.com/hosteval/hosteval/internal/web/view"
)

var viewCommand = command{
	name:    "view",
	summary: "browse a results folder in a local web page",
	usage:   viewUsage,
	// It reads files and holds nothing: the first interrupt ends it.
	onInterrupt: exitNow,
	run:         runView,
}

const viewUsage = `usage: hosteval view [flags] [DIR]

Serves read-only pages over a results folder (default: results/) on
127.0.0.1, on a free port, and prints the address: every run with a trend
across runs of one suite, a run's summary, gates, charts and cases (filter
by status, scenario, model, variant, a call's outcome, or search), a case's
transcript with its raw record and logs, two runs compared, and the tool
catalogs (hosteval catalog -json) saved in the folder. A run in progress is
shown as it is written. Nothing is changed and only files under DIR are
served.

examples:
  hosteval view
  hosteval view -open results/
  hosteval view -addr 127.0.0.1:8080 results/nightly`

func runView(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "view", viewUsage)
	addr := fs.String("addr", web.DefaultAddr, "address to listen on (loopback unless -public)")
	public := fs.Bool("public", false, "allow an -addr that other machines can reach")
	open := fs.Bool("open", false, "open the pages in the default browser")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return usagef("want one results folder, got %d arguments", fs.NArg())
	}
	dir := "results"
	if fs.NArg() == 1 {
		dir = fs.Arg(0)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return usagef("%s is not a folder (hosteval run writes results/)", dir)
	}
	v, err := view.New(view.Options{Dir: dir})
	if err != nil {
		return usageError{err}
	}
	defer v.Close()
	ln, err := web.Listen(*addr, *public)
	if err != nil {
		return usagef("-addr: %w", err)
	}
	url := web.URL(ln)
	fmt.Fprintf(e.stdout, "hosteval view: %s at %s (Ctrl-C to stop)\n", dir, url)

	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return v.Serve(ctx, ln) })
	if *open {
		g.Go(func() error {
			if err := openBrowser(e, url); err != nil {
				fmt.Fprintf(e.stderr, "hosteval: view: -open: %v; open %s by hand\n", err, url)
			}
			return nil
		})
	}
	return g.Wait()
}
