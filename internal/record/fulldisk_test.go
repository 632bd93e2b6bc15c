package record

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// fullAfter is a records file on a disk that fills after left bytes.
type fullAfter struct {
	*os.File
	left int
}

func (f *fullAfter) Write(p []byte) (int, error) {
	if len(p) <= f.left {
		f.left -= len(p)
		return f.File.Write(p)
	}
	n, _ := f.File.Write(p[:f.left])
	f.left -= n
	return n, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
}

// TestWriterFullDisk: a batch that meets a full disk keeps the records
// whose lines fit whole, cuts the file back to the last of them, and names
// the others; every later write is refused at once, naming its records;
// the file reads whole, without a warning.
func TestWriterFullDisk(t *testing.T) {
	path := filepath.Join(t.TempDir(), RecordsFile)
	rec := func(id string) *Record { return &Record{RunID: "r", CaseID: id, Status: StatusPass} }
	line, err := marshalLine(rec("a"))
	if err != nil {
		t.Fatal(err)
	}
	// Room for two records and half of a third.
	w, err := OpenWriterOn(path, func(f *os.File) File { return &fullAfter{File: f, left: 2*len(line) + len(line)/2} })
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.WriteBatch([]*Record{rec("a")}); err != nil {
		t.Fatal(err)
	}
	err = w.WriteBatch([]*Record{rec("b"), rec("c"), rec("d")})
	var lost *NotWritten
	if !errors.As(err, &lost) || !slices.Equal(lost.Cases, []string{"c", "d"}) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("the batch that met the full disk: %v, want c and d not written (ENOSPC)", err)
	}
	if err := w.WriteBatch([]*Record{rec("e")}); !errors.As(err, &lost) || !slices.Equal(lost.Cases, []string{"e"}) {
		t.Errorf("a batch after: %v, want e not written", err)
	}
	if err := w.Write(rec("f")); !errors.As(err, &lost) || !slices.Equal(lost.Cases, []string{"f"}) {
		t.Errorf("a record after: %v, want f not written", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != 2*len(line) {
		t.Errorf("the file holds %d bytes, want the two whole records (%d)", len(data), 2*len(line))
	}
	run, err := ReadRun(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Warnings) > 0 || len(run.Records) != 2 || run.Records[1].CaseID != "b" {
		t.Errorf("read back %d records, warnings %q; want a and b, none", len(run.Records), run.Warnings)
	}
}
