package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/hosteval/hosteval/internal/lint"
	"github.com/hosteval/hosteval/internal/text"
)

var pinCommand = command{
	name:        "pin",
	summary:     "write hosteval.lock: each tool's hash, to catch a changed catalog",
	usage:       pinUsage,
	onInterrupt: cancelContext,
	run:         runPin,
}

const pinUsage = `usage: hosteval pin [flags]

Starts the servers like hosteval lint (the servers file, -servers, -add)
and writes hosteval.lock: per server and tool, the definition the model is
given as the server listed it (name, title, description, input and output
schema, annotations) in canonical JSON (keys sorted: a reordered object is
the same definition) with its SHA-256, and the server's instructions with
theirs, with the name and version the server reported. Commit it and
review it: hosteval lint -pins hosteval.lock and hosteval run -pins
hosteval.lock then fail (rule pin-changed, exit 1) when a pinned tool's
definition changed, a tool appeared or vanished, or the instructions
changed, and show what changed: the description's words, the schema's
keys.

Without -update, pin writes the lock only when there is none, or when it
would pin the same; when the catalogs changed since, it lists the changes
and exits 1, leaving the lock as it is. -update rewrites it and lists what
changed; the pins of the lock's servers not started this time are kept.
Sends no tool call and needs no model.

exit codes: 0 written, or the same; 1 the catalogs changed since the lock
(without -update); 2 a usage or configuration error, or a lock that is not
one; 3 a server would not start; 130 interrupted.

examples:
  hosteval pin
  hosteval pin -servers cmdb,tickets -lock scenarios/hosteval.lock
  hosteval pin -update
  hosteval lint -pins hosteval.lock`

func runPin(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "pin", pinUsage)
	var hf hostFlags
	hf.register(fs)
	var adds addFlag
	fs.Var(&adds, "add", "add an ad-hoc stdio server: 'name=command arg arg' (repeatable; quote arguments with ' or \")")
	file := fs.String("lock", lint.DefaultLockFile, "the lock file to write")
	update := fs.Bool("update", false, "rewrite the lock when the catalogs changed since it was written")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if *file == "" {
		return usagef("-lock: name a file")
	}
	prev, err := readLockIfAny(*file)
	if err != nil {
		return usageError{err}
	}
	hopts, err := catalogHostOptions(e, &hf, adds)
	if err != nil {
		return err
	}
	if err := hf.login(ctx); err != nil {
		return err
	}
	servers, err := lintServers(ctx, hopts, nil)
	if err != nil {
		return err
	}
	next, err := lint.Pin(servers)
	if err != nil {
		return err
	}
	tools := 0
	for _, s := range next.Servers {
		tools += len(s.Tools)
	}
	if prev == nil {
		if err := writeLock(*file, next); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "pinned %s of %s in %s\n", text.Count(tools, "tool"), text.Count(len(next.Servers), "server"), *file)
		return nil
	}
	listed := len(next.Servers)
	kept := keepUnlisted(prev, next)
	changes := prev.Changes(next)
	if len(changes) == 0 {
		fmt.Fprintf(e.stdout, "%s: the same %s of %s, unchanged\n", *file, text.Count(tools, "tool"), text.Count(listed, "server"))
		return nil
	}
	for _, c := range changes {
		fmt.Fprintln(e.stdout, c)
	}
	if !*update {
		return failedf("%s: the catalogs changed since they were pinned (above); review the changes, then run hosteval pin -update", *file)
	}
	if err := writeLock(*file, next); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "updated %s: %s of %s pinned", *file, text.Count(tools, "tool"), text.Count(listed, "server"))
	if len(kept) > 0 {
		fmt.Fprintf(e.stdout, "; kept the pins of %s (not started this time)", strings.Join(kept, ", "))
	}
	fmt.Fprintln(e.stdout)
	return nil
}

// readLockIfAny reads the lock at path, or returns nil when there is none.
func readLockIfAny(path string) (*lint.Lock, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	l, err := lint.ReadLock(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
}

// keepUnlisted adds to next the pins of prev's servers that next does not
// list, after its own, and returns their names.
func keepUnlisted(prev, next *lint.Lock) []string {
	listed := map[string]bool{}
	for _, s := range next.Servers {
		listed[s.Name] = true
	}
	var kept []string
	for _, s := range prev.Servers {
		if !listed[s.Name] {
			next.Servers = append(next.Servers, s)
			kept = append(kept, s.Name)
		}
	}
	return kept
}

func writeLock(path string, l *lint.Lock) error {
	var b bytes.Buffer
	if err := lint.WriteLock(&b, l); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// readPins reads the lock -pins names (nil when none is named); a lock
// that is missing or not one is a usage error.
func readPins(path string) (*lint.Lock, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("-pins: %w (hosteval pin writes it)", err)
	}
	l, err := lint.ReadLock(data)
	if err != nil {
		return nil, usagef("-pins %s: %w", path, err)
	}
	return l, nil
}
