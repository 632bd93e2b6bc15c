package record

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseShard(t *testing.T) {
	tests := []struct {
		in      string
		want    Shard
		wantErr string
	}{
		{"1/1", Shard{1, 1}, ""},
		{"2/4", Shard{2, 4}, ""},
		{" 4/4 ", Shard{4, 4}, ""},
		{"0/4", Shard{}, "1 <= K <= N"},
		{"5/4", Shard{}, "1 <= K <= N"},
		{"1/0", Shard{}, "1 <= K <= N"},
		{"-1/4", Shard{}, "1 <= K <= N"},
		{"2", Shard{}, "want K/N"},
		{"a/4", Shard{}, "whole numbers"},
		{"2/4/8", Shard{}, "whole numbers"},
		{"", Shard{}, "want K/N"},
	}
	for _, tt := range tests {
		got, err := ParseShard(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseShard(%q) = %v, %v; want an error with %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

// In run.json a shard is "K/N", and a run of the whole suite has none.
func TestShardInRunInfo(t *testing.T) {
	data, err := json.Marshal(RunInfo{RunID: "r", Shard: Shard{2, 4}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"shard":"2/4"`) {
		t.Errorf("run.json = %s, want \"shard\":\"2/4\"", data)
	}
	var back RunInfo
	if err := json.Unmarshal(data, &back); err != nil || back.Shard != (Shard{2, 4}) {
		t.Errorf("read back %v, %v; want shard 2/4", back.Shard, err)
	}
	data, err = json.Marshal(RunInfo{RunID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "shard") {
		t.Errorf("run.json of a whole run = %s, want no shard", data)
	}
	if err := json.Unmarshal([]byte(`{"run_id":"r","shard":"5/4"}`), &back); err == nil {
		t.Error("a shard 5/4 in run.json was read without an error")
	}
}
