package validate

import (
	"fmt"
	"math/bits"
)

// A transfer's size class is the power-of-two range of its size, [2^k, 2^(k+1)) bytes. On the
// TCP datasets the error left at d ≥ 2 sorts by size (data/tcp/README.md, round 16): the share
// within ±10% rises from 1 MB transfers to 8 MB ones while the error in time stays about the
// same, the signature of a transient (slow start, the take-up of freed capacity) rather than
// of the steady-state shares. Accuracy per size class shows that on any dataset with mixed
// sizes, beside each class's noise limit.

// SizeAccuracy is every model's accuracy on the held-out transfers of one size class, all
// settings together.
type SizeAccuracy struct {
	// Size names the class, "[1 MiB, 2 MiB)"; MinBytes and MaxBytes are its bounds (MaxBytes
	// excluded). Zero-byte transfers are the class [0 B, 1 B).
	Size     string `json:"size"`
	MinBytes int64  `json:"min_bytes"`
	MaxBytes int64  `json:"max_bytes"`
	GroupAccuracy
}

// sizeClass is the class of a transfer of n bytes: ⌊log₂ n⌋, −1 for none.
func sizeClass(n int64) int {
	if n <= 0 {
		return -1
	}
	return bits.Len64(uint64(n)) - 1
}

// sizeBounds are a class's bounds in bytes, the upper one excluded.
func sizeBounds(class int) (lo, hi int64) {
	if class < 0 {
		return 0, 1
	}
	if class >= 62 {
		return 1 << 62, 1<<63 - 1
	}
	return 1 << class, 1 << (class + 1)
}

// iecBytes spells a power of two of bytes with the largest binary prefix that keeps it whole:
// 512 B, 4 KiB, 1 MiB.
func iecBytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	u := 0
	for n >= 1024 && n%1024 == 0 && u < len(units)-1 {
		n /= 1024
		u++
	}
	return fmt.Sprintf("%d %s", n, units[u])
}

// sizeName is a class's name, "[lo, hi)".
func sizeName(class int) string {
	lo, hi := sizeBounds(class)
	if class >= 62 {
		return fmt.Sprintf("[%s, ∞)", iecBytes(lo))
	}
	return fmt.Sprintf("[%s, %s)", iecBytes(lo), iecBytes(hi))
}
