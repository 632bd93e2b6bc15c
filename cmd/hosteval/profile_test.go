package main

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"regexp"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"testing"
)

// checkProfile checks that data is what run's profile flags write: a
// pprof profile (gzipped protocol buffers of profile.proto) whose sample
// types are a CPU or a memory profile's, or a Go execution trace.
func checkProfile(kind string, data []byte) error {
	if kind == "trace" {
		// The trace's header names the Go version that wrote it, then
		// its events follow.
		if !regexp.MustCompile(`^go 1\.\d+ trace\x00\x00\x00`).Match(data) || len(data) < 1024 {
			return fmt.Errorf("not a Go execution trace (%d bytes: %.16q)", len(data), data)
		}
		return nil
	}
	want := map[string][]string{
		"cpu": {"samples", "count", "cpu", "nanoseconds"},
		"mem": {"alloc_objects", "alloc_space", "inuse_objects", "inuse_space", "bytes"},
	}[kind]
	if want == nil {
		return fmt.Errorf("kind %q: want cpu, mem or trace", kind)
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("not gzipped: %w", err)
	}
	pb, err := io.ReadAll(zr)
	if err != nil {
		return err
	}
	strs, samples, err := protoStrings(pb)
	if err != nil {
		return err
	}
	for _, s := range want {
		if !slices.Contains(strs, s) {
			return fmt.Errorf("no sample type %q in the string table %q", s, strs)
		}
	}
	if samples == 0 && kind == "mem" {
		return errors.New("no samples")
	}
	return nil
}

// protoStrings walks the top level of a profile.proto message, checking
// its wire format, and returns its string table (field 6) and how many
// samples (field 2) it has.
func protoStrings(b []byte) (strs []string, samples int, err error) {
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, 0, errors.New("bad field key")
		}
		b = b[n:]
		field, wire := key>>3, key&7
		switch wire {
		case 0:
			if _, n = binary.Uvarint(b); n <= 0 {
				return nil, 0, errors.New("bad varint")
			}
			b = b[n:]
		case 2:
			l, n := binary.Uvarint(b)
			if n <= 0 || uint64(len(b)-n) < l {
				return nil, 0, fmt.Errorf("field %d: bad length", field)
			}
			v := b[n : n+int(l)]
			b = b[n+int(l):]
			switch field {
			case 2:
				samples++
			case 6:
				strs = append(strs, string(v))
			}
		default:
			return nil, 0, fmt.Errorf("field %d: wire type %d, not one profile.proto uses", field, wire)
		}
	}
	return strs, samples, nil
}

// TestCheckProfile holds the script's profile check to telling the three
// kinds apart, so that run_profiles.txtar can fail.
func TestCheckProfile(t *testing.T) {
	var cpu, mem, tr bytes.Buffer
	if err := pprof.StartCPUProfile(&cpu); err != nil {
		t.Fatal(err)
	}
	if err := trace.Start(&tr); err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		_ = fmt.Sprint(make([]byte, 4096), i)
	}
	trace.Stop()
	pprof.StopCPUProfile()
	if err := pprof.Lookup("allocs").WriteTo(&mem, 0); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"cpu": cpu.Bytes(), "mem": mem.Bytes(), "trace": tr.Bytes(), "text": []byte("not a profile")}
	for _, kind := range []string{"cpu", "mem", "trace"} {
		for name, data := range files {
			err := checkProfile(kind, data)
			if (err == nil) != (name == kind) {
				t.Errorf("checkProfile(%s, the %s file) = %v, want an error: %t", kind, name, err, name != kind)
			}
		}
	}
}
