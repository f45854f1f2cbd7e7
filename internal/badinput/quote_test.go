package badinput

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Quote and Cut bound what outside input can put into a message: short values are quoted
// whole, long ones cut at a character boundary with their length.
func TestQuoteAndCut(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"short", "node1", `"node1"`},
		{"control characters", "a\nb", `"a\nb"`},
		{"exactly the bound", strings.Repeat("x", MaxQuote), `"` + strings.Repeat("x", MaxQuote) + `"`},
		{"long number", strings.Repeat("9", 10<<20), `"` + strings.Repeat("9", MaxQuote) + `"… (10485760 bytes)`},
		{"cut inside a character", strings.Repeat("x", MaxQuote-1) + "é" + "yyy", `"` + strings.Repeat("x", MaxQuote-1) + `"… (68 bytes)`},
	} {
		if got := Quote(tc.in); got != tc.want {
			t.Errorf("%s: Quote gives %.100s, want %.100s", tc.name, got, tc.want)
		}
	}
	long := strings.Repeat("é", MaxMessage)
	got := Cut(long)
	if len(got) > MaxMessage || !utf8.ValidString(got) || !strings.HasSuffix(got, "(message cut, 2000 bytes)") {
		t.Errorf("Cut: %d bytes, valid UTF-8 %v, ends %q", len(got), utf8.ValidString(got), got[max(0, len(got)-40):])
	}
	if short := "line 3: bad"; Cut(short) != short {
		t.Errorf("Cut changed a short message: %q", Cut(short))
	}
}
