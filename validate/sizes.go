package validate

import (
	"fmt"
	"math"
)

// A transfer's size class is the power-of-two range of its size, [2^k, 2^(k+1)) bytes. On the
// TCP datasets the error left at d ≥ 2 sorts by size (docs/journal/tcp-campaigns.md): the share
// within ±10% rises from 1 MB transfers to 8 MB ones while, from 2 MB on, the error in time
// stays about the same (a median of 25–30 ms at d = 2 on the 1g and three-rack shapes), the
// signature of a transient (slow start, the take-up of freed capacity) rather than of the
// steady-state shares. Accuracy per size class, all settings together, shows that on any
// dataset with mixed sizes, beside each class's noise limit.

// SizeAccuracy is every model's accuracy on the held-out transfers of one size class, all
// settings together.
type SizeAccuracy struct {
	// Size names the class, "[1 MiB, 2 MiB)"; MinBytes and MaxBytes are its bounds, MaxBytes
	// excluded and 0 for the top class, [4 EiB, ∞), which has no upper bound. Sizes under a
	// byte (which ingest does not let through) are the class [0 B, 1 B).
	Size     string `json:"size"`
	MinBytes int64  `json:"min_bytes"`
	MaxBytes int64  `json:"max_bytes"`
	GroupAccuracy
}

// topSizeClass is the largest class, [2^62, ∞): every int64 size above 2^62 is in it.
const topSizeClass = 62

// sizeClass is the class of a transfer of b bytes: ⌊log₂ b⌋ up to topSizeClass, −1 under a
// byte (NaN included).
func sizeClass(b float64) int {
	if !(b >= 1) {
		return -1
	}
	_, exp := math.Frexp(b) // b = f·2^exp, f ∈ [½, 1)
	return min(exp-1, topSizeClass)
}

// sizeBounds are a class's bounds in bytes, the upper one excluded (0: none).
func sizeBounds(class int) (lo, hi int64) {
	switch {
	case class < 0:
		return 0, 1
	case class >= topSizeClass:
		return 1 << topSizeClass, 0
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
	if hi == 0 {
		return fmt.Sprintf("[%s, ∞)", iecBytes(lo))
	}
	return fmt.Sprintf("[%s, %s)", iecBytes(lo), iecBytes(hi))
}
