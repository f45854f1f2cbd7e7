package datasets

import (
	"math/rand/v2"
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
