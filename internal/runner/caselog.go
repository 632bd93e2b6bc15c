package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/record"
)

// caseLogs are a case's logs: one file with the host's events and the
// servers' request logs interleaved as they happened (every line says its
// operation; they join on trace_id + step, as the first seed's host.log
// does), and the wire trace beside it when asked for. The log is kept in
// memory and written when the case ends, just before its record, and only
// for the cases Options.Logs asks for: creating a file is most of what a
// cheap case with shared servers costs on a slow disk. A case that does
// not end within Options.AbortWait of an abort loses its log with its
// record. The wire trace, a debugging aid that can be large, goes to its
// file as it happens.
type caseLogs struct {
	log  lockedBuffer
	wire *os.File // nil unless asked for
	// base is the case's name in the run folder (cases/NNNN-<id>), the
	// stem of its files and the name of its folder (${CASE_DIR}'s parent):
	// made when first needed, since a passing case of a -logs failed run
	// with shared servers has no file and no folder.
	base func() string
}

// lockedBuffer is a case's log in memory, safe for concurrent writers: the
// lines written to it, and the host's events as values (host.ValueLog),
// encoded as JSON lines only when the log is kept.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	// values are the events not encoded yet; at[i] is where values[i]'s
	// line goes in buf.
	values []any
	at     []int
}

var _ host.ValueLog = (*lockedBuffer)(nil)

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// LogValue keeps v to encode if the log is kept.
func (b *lockedBuffer) LogValue(v any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.values = append(b.values, v)
	b.at = append(b.at, b.buf.Len())
}

// bytes returns the log as JSON lines, the events encoded in their places.
// A value that cannot be encoded leaves no line, as the host's own
// encoding does.
func (b *lockedBuffer) bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.values) == 0 {
		return b.buf.Bytes()
	}
	raw := b.buf.Bytes()
	out := make([]byte, 0, len(raw)+512*len(b.values))
	last := 0
	for i, v := range b.values {
		out = append(out, raw[last:b.at[i]]...)
		last = b.at[i]
		if data, err := json.Marshal(v); err == nil {
			out = append(append(out, data...), '\n')
		}
	}
	return append(out, raw[last:]...)
}

func newCaseLogs(runDir string, idx int, id string, wire bool) (*caseLogs, error) {
	logs := &caseLogs{base: sync.OnceValue(func() string { return filepath.Join("cases", record.CaseStem(idx, id)) })}
	if wire {
		f, err := os.Create(filepath.Join(runDir, logs.base()+".wire.jsonl"))
		if err != nil {
			return nil, fmt.Errorf("create wire trace: %w", err)
		}
		logs.wire = f
	}
	return logs, nil
}

// finish closes the wire trace, writes the log if the run keeps it for a
// case with this status, and returns the paths written, relative to the
// run. A path is returned only for a file that was written.
func (l *caseLogs) finish(runDir, keep, status string) (map[string]string, error) {
	paths := map[string]string{}
	var errs []error
	if l.wire != nil {
		if err := l.wire.Close(); err != nil {
			errs = append(errs, err)
		} else {
			paths["wire"] = l.base() + ".wire.jsonl"
		}
	}
	if keep == LogsAll || keep == "" || (keep == LogsFailed && status != record.StatusPass) {
		name := l.base() + ".jsonl"
		err := os.WriteFile(filepath.Join(runDir, name), l.log.bytes(), 0o644)
		if err != nil {
			errs = append(errs, err)
		} else {
			paths["log"] = name
		}
	}
	if err := errors.Join(errs...); err != nil {
		return paths, fmt.Errorf("write case log: %w", err)
	}
	return paths, nil
}
