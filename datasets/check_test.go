package datasets

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestPlainText compares the word-at-a-time scan with a byte-at-a-time one on every byte value
// at every position of a word and past it.
func TestPlainText(t *testing.T) {
	naive := func(b []byte) bool {
		for _, c := range b {
			if c < 0x20 || c >= 0x7f {
				return false
			}
		}
		return true
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for n := 0; n <= 19; n++ {
		for pos := 0; pos < n; pos++ {
			for v := 0; v < 256; v++ {
				b := make([]byte, n)
				for i := range b {
					b[i] = byte(0x20 + rng.IntN(0x7f-0x20)) // printable
				}
				b[pos] = byte(v)
				if got, want := plainText(b), naive(b); got != want {
					t.Fatalf("plainText(%q) = %t, want %t", b, got, want)
				}
			}
		}
	}
}

// A transfer's times are checked together: it must end after it starts, and two finite times
// can still be infinitely apart (the duration overflows), which ingest refuses naming the row
// instead of letting estimate fail on an infinite repetition.
func TestTransferDuration(t *testing.T) {
	cl := testCluster(t, "ccpe-testbed")
	for _, tc := range []struct {
		name       string
		start, end float64
		kind       ErrKind
		want       string
	}{
		{"infinite duration", -1e308, 1e308, ErrInfinite, "t_end_s 1e+308 minus t_start_s -1e+308 overflows: the duration is infinite"},
		{"zero duration", 2, 2, ErrZeroDuration, "t_end_s 2 is not after t_start_s 2"},
		{"end before start", 2, 1, ErrEndBeforeStart, "t_end_s 1 is not after t_start_s 2"},
	} {
		rows := genTransfers(cl, 4, 24)
		rows[2].TStart, rows[2].TEnd = tc.start, tc.end
		_, err := ingestFile(t, cl, "t.csv", []byte(csvText(rows, transferColumns, false, "\n")), Source{})
		ie := wantKind(t, err, tc.kind)
		if ie == nil {
			continue
		}
		if ie.Loc.Row != 3 || ie.Loc.Line != 4 || ie.Column != "t_end_s" || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v (row %d, line %d), want row 3, line 4, column t_end_s saying %q", tc.name, err, ie.Loc.Row, ie.Loc.Line, tc.want)
		}
	}
}
