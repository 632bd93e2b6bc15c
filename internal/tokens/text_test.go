package tokens

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"testing"
)

func TestTextCount(t *testing.T) {
	for _, s := range samples {
		if got, want := NewText(s).Count(), Count(s); got != want {
			t.Errorf("NewText(%.40q).Count() = %d, Count says %d", s, got, want)
		}
	}
}

// TestTextWithoutEveryCut cuts every span of short texts, the hard cases of
// the split pattern, and compares with counting the cut text.
func TestTextWithoutEveryCut(t *testing.T) {
	texts := []string{
		"Hello, World! they're   here\n\n  ok",
		"abc'll DEF'S  \t\n x 123456 ,,,//\n\nyz",
		`[{"a":"b c"},{"d":"E'RE"},{"f":1234}]`,
		"日本語 テキスト\u0301 👍🏽!! \u00a0 end",
		"a  \n  b   c\r\n\r\n   ",
		"abc'lxl they'rxe WE'VXE I'xm",
	}
	for _, s := range texts {
		text := NewText(s)
		for from := 0; from <= len(s); from++ {
			for to := from; to <= len(s); to++ {
				cut := s[:from] + s[to:]
				if !validCut(s, from, to) {
					continue
				}
				if got, want := text.Without(from, to), Count(cut); got != want {
					t.Fatalf("Without(%d, %d) of %q = %d; Count(%q) = %d", from, to, s, got, cut, want)
				}
			}
		}
	}
}

// validCut reports whether both ends of the span are at character starts:
// Without is asked about whole characters.
func validCut(s string, from, to int) bool {
	ok := func(i int) bool { return i == len(s) || s[i]&0xC0 != 0x80 }
	return ok(from) && ok(to)
}

// TestTextWithoutRandom cuts random spans of random texts.
func TestTextWithoutRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100 {
		s := randomText(rng, 50+rng.IntN(400))
		text := NewText(s)
		for range 20 {
			from, to := rng.IntN(len(s)+1), rng.IntN(len(s)+1)
			if from > to {
				from, to = to, from
			}
			if !validCut(s, from, to) {
				continue
			}
			cut := s[:from] + s[to:]
			if got, want := text.Without(from, to), Count(cut); got != want {
				t.Fatalf("Without(%d, %d) of %q = %d; Count of the cut = %d", from, to, s, got, want)
			}
		}
	}
}

// TestTextWithoutArrayElements cuts each element (with a separator) out of
// JSON arrays, as the catalog's marginal costs do: the fixture servers'
// tools array, and arrays of random strings.
func TestTextWithoutArrayElements(t *testing.T) {
	// The catalog's tests check its 138-tool array the same way.
	b, err := os.ReadFile("../catalog/testdata/fixtures.json")
	if err != nil {
		t.Fatal(err)
	}
	arrays := []string{string(bytes.TrimSpace(b))}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 50 {
		var elems []string
		for range 1 + rng.IntN(8) {
			e, _ := json.Marshal(map[string]string{randomText(rng, 3): randomText(rng, rng.IntN(40))})
			elems = append(elems, string(e))
		}
		b, _ := json.Marshal(elems)
		arrays = append(arrays, string(b))
	}
	for _, s := range arrays {
		var elems []json.RawMessage
		if err := json.Unmarshal([]byte(s), &elems); err != nil {
			t.Fatal(err)
		}
		text := NewText(s)
		at := 1
		for i, e := range elems {
			from, to := at, at+len(e)
			switch {
			case len(elems) == 1:
			case i == 0:
				to++ // the separator after
			default:
				from-- // the separator before
			}
			at += len(e) + 1
			cut := s[:from] + s[to:]
			if got, want := text.Without(from, to), Count(cut); got != want {
				t.Fatalf("array of %d bytes without element %d: %d tokens, Count says %d", len(s), i, got, want)
			}
		}
	}
}

func TestTextWithoutPanicsOutOfRange(t *testing.T) {
	text := NewText("hello")
	for _, span := range [][2]int{{-1, 2}, {3, 2}, {0, 6}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Without(%d, %d) did not panic", span[0], span[1])
				}
			}()
			text.Without(span[0], span[1])
		}()
	}
}

func TestTextInvalidUTF8(t *testing.T) {
	s := "abc \xff def \xe2\x82 ghi"
	text := NewText(s)
	if got, want := text.Count(), Count(s); got != want {
		t.Errorf("Count() = %d, want %d", got, want)
	}
	if got, want := text.Without(4, 5), Count(s[:4]+s[5:]); got != want {
		t.Errorf("Without(4, 5) = %d, want %d", got, want)
	}
}

func FuzzTextWithout(f *testing.F) {
	f.Add("Hello, World! they're   here\n\n  ok", 3, 9)
	f.Add(`[{"a":"b c"},{"d":"E'RE"}]`, 12, 25)
	f.Fuzz(func(t *testing.T, s string, from, to int) {
		if from < 0 || to < from || to > len(s) || !validCut(s, from, to) {
			return
		}
		if got, want := NewText(s).Without(from, to), Count(s[:from]+s[to:]); got != want {
			t.Fatalf("Without(%d, %d) of %q = %d; Count of the cut = %d", from, to, s, got, want)
		}
	})
}
