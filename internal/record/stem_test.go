package record

import (
	"strings"
	"testing"
)

func TestCaseStem(t *testing.T) {
	long := strings.Repeat("scenario-", 20)
	tests := []struct {
		idx  int
		id   string
		want string
	}{
		{0, "ticket_0", "0001-ticket_0"},
		{41, "lookup/gpt-oss-120b#3", "0042-lookup_gpt-oss-120b_3"},
		{9, "a b  c", "0010-a_b_c"},
		{1, "_edge_", "0002-edge"},
		{2, "/ü/", "0003-"},
		{3, "v1.2-x", "0004-v1.2-x"},
		{4, long, "0005-" + long[:91] + "-4c8d436b"},
	}
	for _, tt := range tests {
		if got := CaseStem(tt.idx, tt.id); got != tt.want {
			t.Errorf("CaseStem(%d, %q) = %q, want %q", tt.idx, tt.id, got, tt.want)
		}
	}
}
