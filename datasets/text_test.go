package datasets

import (
	"strings"
	"testing"
)

// Two benchmarks' outputs never merge into one pattern: an osu_latency sweep and an
// osu_mbw_mr sweep of the same sizes between the same nodes stay two sets of patterns, each
// named by its benchmark, and each of repetition 0.
func TestTextPatternsNameTheirBenchmark(t *testing.T) {
	_, tr, _, _, err := benchIngest(t, x1y1, "osu5_latency.txt", "osu7_mbw_mr_1pair.txt")
	if err != nil {
		t.Fatal(err)
	}
	benches := map[string]int{}
	for _, r := range tr {
		bench, _, _ := strings.Cut(r.PatternID, "/")
		benches[bench]++
		if r.Rep != 0 {
			t.Errorf("%+v: repetition %d, want 0 (one run of each benchmark)", r, r.Rep)
		}
	}
	if len(benches) != 2 || benches["osu_latency"] == 0 || benches["osu_mbw_mr"] == 0 {
		t.Errorf("benchmarks %v, want osu_latency and osu_mbw_mr", benches)
	}
	for _, c := range []struct{ tool, want string }{
		{"OSU osu_latency v7.4", "osu_latency"},
		{"OSU osu_bw ", "osu_bw"},
		{"IMB-MPI1 2021.11", "IMB-MPI1"},
		{"IMB-P2P", "IMB-P2P"},
		{"SKaMPI 5.0.4", "SKaMPI"},
		{"NetPIPE", "NetPIPE"},
		{"MPIBlib", "MPIBlib"},
		{"saturation", "saturation"},
	} {
		if got := benchName(c.tool); got != c.want {
			t.Errorf("benchName(%q) = %q, want %q", c.tool, got, c.want)
		}
	}
}
