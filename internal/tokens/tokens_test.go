package tokens

import "testing"

func TestCount(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		{`{"type":"function"}`, 5},
	}
	for _, tt := range tests {
		if got := Count(tt.in); got != tt.want {
			t.Errorf("Count(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestCache(t *testing.T) {
	var nilCache *Cache
	c := NewCache()
	for range 2 {
		for _, s := range []string{"hello world", `{"type":"function"}`} {
			if got, want := c.Count(s), Count(s); got != want {
				t.Errorf("Cache.Count(%q) = %d, want %d", s, got, want)
			}
			if got, want := nilCache.Count(s), Count(s); got != want {
				t.Errorf("nil Cache.Count(%q) = %d, want %d", s, got, want)
			}
		}
	}
	if len(c.m) != 2 {
		t.Errorf("cache holds %d texts, want 2", len(c.m))
	}
}
