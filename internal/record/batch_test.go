package record

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWriteBatch(t *testing.T) {
	dir := t.TempDir()
	w, err := OpenWriter(filepath.Join(dir, RecordsFile))
	if err != nil {
		t.Fatal(err)
	}
	a := &Record{CaseID: "a#0", Status: StatusPass}
	// NaN does not encode: the record is named in the error, the others land.
	bad := &Record{CaseID: "bad#0", MS: math.NaN()}
	b := &Record{Schema: SchemaVersion, CaseID: "b#0", Status: StatusFail}
	err = w.WriteBatch([]*Record{a, bad, b})
	if err == nil || !strings.Contains(err.Error(), "bad#0") {
		t.Errorf("err = %v, want one naming bad#0", err)
	}
	if a.Schema != 0 {
		t.Errorf("WriteBatch changed the record's schema to %d", a.Schema)
	}
	if err := w.WriteBatch(nil); err != nil {
		t.Errorf("empty batch: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	run, got := readCaseIDs(t, dir)
	for _, r := range run.Records {
		if r.Schema != SchemaVersion {
			t.Errorf("%s: schema %d, want %d", r.CaseID, r.Schema, SchemaVersion)
		}
	}
	if diff := cmp.Diff([]string{"a#0", "b#0"}, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	if err := w.WriteBatch([]*Record{a}); !errors.Is(err, os.ErrClosed) {
		t.Errorf("after Close: err = %v, want os.ErrClosed", err)
	}
}
