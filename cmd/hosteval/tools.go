package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/report"
	"github.com/hosteval/hosteval/internal/text"
)

var toolsCommand = command{
	name:        "tools",
	summary:     "list the host's namespaced tool table",
	usage:       toolsUsage,
	onInterrupt: cancelContext,
	run:         runTools,
}

const toolsUsage = `usage: hosteval tools [flags]

Starts the servers, lists their tools as the model would see them
(server__tool), and prints each tool's size in bytes and o200k_base tokens
as sent to the model, with the totals. Needs no model.

examples:
  hosteval tools
  hosteval tools -servers cmdb,tickets
  hosteval tools -servers cmdb,tickets -tools cmdb__get_asset,cmdb__find_assets`

func runTools(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "tools", toolsUsage)
	var hf hostFlags
	hf.register(fs)
	var layout layoutFlags
	layout.register(fs, false)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	opts, err := hf.options(e)
	if err != nil {
		return err
	}
	if err := hf.login(ctx); err != nil {
		return err
	}
	h, err := host.Start(ctx, opts)
	if err != nil {
		return err
	}
	defer h.Close()
	serverErrs := serverErrors(h)
	// On a narrow terminal the server goes first (the name carries it),
	// then the bytes; the description is cut to what is left.
	t := &report.Table{Columns: []report.Column{
		{Name: "name"}, {Name: "server", Priority: 2}, {Name: "run"}, {Name: "description"},
		{Name: "bytes", Right: true, Priority: 1}, {Name: "tokens", Right: true},
	}}
	for _, tool := range h.Offered() {
		run := "ask"
		if tool.AutoRun {
			run = "auto"
		}
		desc, _, _ := strings.Cut(tool.MCP.Description, "\n")
		t.Rows = append(t.Rows, []report.Cell{
			{Text: tool.Name}, {Text: tool.Server}, {Text: run}, {Text: text.Shorten(desc, 70)},
			{Text: strconv.Itoa(tool.Bytes)}, {Text: strconv.Itoa(tool.Tokens())},
		})
	}
	defs := h.ToolDefs()
	estimated := ""
	if defs.Estimated {
		estimated = ", estimated"
	}
	t.Notes = []string{fmt.Sprintf("%s offered: %d bytes, %d tokens (o200k_base%s) sent with every model request", text.Count(defs.Tools, "tool"), defs.Bytes, defs.Tokens, estimated)}
	if defs.Warning != "" {
		t.Notes = append(t.Notes, "warning: "+defs.Warning)
	}
	for _, s := range h.Servers() {
		if s.Error == "" {
			t.Notes = append(t.Notes, fmt.Sprintf("%s: protocol %s, %s", s.Name, s.Protocol, text.Count(s.Tools, "tool")))
		}
	}
	out := fitLines(e.stdout, layout.width(e))
	if err := errors.Join(t.Fit(layout.width(e), wideHint).WriteText(out), out.Close()); err != nil {
		return err
	}
	return serverErrs
}

// serverErrors joins the errors of the host's servers that did not start.
func serverErrors(h *host.Host) error {
	var errs []error
	for _, s := range h.Servers() {
		switch {
		case s.ConfigError:
			// Exit 2: the configuration's to fix, not the server's.
			errs = append(errs, fmt.Errorf("%w: server %s: %s", host.ErrConfig, s.Name, strings.TrimPrefix(s.Error, host.ErrConfig.Error()+": ")))
		case s.Error != "":
			errs = append(errs, fmt.Errorf("server %s: %s", s.Name, s.Error))
		}
	}
	return errors.Join(errs...)
}
