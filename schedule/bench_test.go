package schedule

import (
	"testing"

	"github.com/commcal/commcal/contention"
)

// A pairwise all-to-all of 4 MB blocks among 1,000 ranks, one per node of 20 racks of 50:
// 999 rounds of 1,000 transfers, predicted under max-min.
func BenchmarkPairwise1000MaxMin(b *testing.B) {
	net, names := bigCluster(b)
	s, err := New(Collective{Op: Alltoall, Ranks: names, Bytes: 4e6}, "pairwise")
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := Predict(b.Context(), net, contention.MaxMin{}, s, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// Expanding the same all-to-all: 999,000 transfers.
func BenchmarkPairwise1000Expand(b *testing.B) {
	_, names := bigCluster(b)
	for b.Loop() {
		if _, err := New(Collective{Op: Alltoall, Ranks: names, Bytes: 4e6}, "pairwise"); err != nil {
			b.Fatal(err)
		}
	}
}
