package runner

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/hosteval/hosteval/internal/record"
)

// TestCaseLogEncodesValuesInPlace: a case log kept writes the host's
// events, handed over as values, as the JSON lines the host would have
// written, in their places among the lines written as bytes.
func TestCaseLogEncodesValuesInPlace(t *testing.T) {
	call := record.Call{Operation: record.OpToolCall, Time: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), Name: "cmdb__get_asset", ArgKeys: []string{"hostname"}, Outcome: "ok", MS: 1.5}
	req := record.ModelRequest{Operation: record.OpModelRequest, Turn: 1, Index: 2, Model: "scripted"}
	line := func(v any) string {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(data) + "\n"
	}

	var direct, deferred lockedBuffer
	for _, step := range []any{"{\"server\":\"cmdb\",\"text\":\"started\"}\n", req, call, "{\"server\":\"cmdb\",\"text\":\"a\"}\n{\"text\":\"b\"}\n", req, make(chan int), call} {
		switch v := step.(type) {
		case string:
			direct.Write([]byte(v))
			deferred.Write([]byte(v))
		case chan int:
			deferred.LogValue(v) // not encodable: no line, as the host writes none
		default:
			direct.Write([]byte(line(v)))
			deferred.LogValue(v)
		}
	}
	if got, want := string(deferred.bytes()), string(direct.bytes()); got != want {
		t.Errorf("log with values encoded late:\n%s\nwant:\n%s", got, want)
	}
	var empty lockedBuffer
	if got := empty.bytes(); len(got) != 0 {
		t.Errorf("empty log = %q", got)
	}
}
