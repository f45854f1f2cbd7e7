package schedule

import (
	"strings"
	"testing"

	"github.com/commcal/commcal/internal/badinput"
)

// The libraries' rules just below and at their thresholds. Open MPI's come from
// coll_tuned_decision_fixed.c of 4.1.8 (strict upper bounds: a size equal to a bound belongs
// to the next branch), MPICH's from maint/tuning/coll/mpir/generic.json of 4.3.2 (≤ or < as
// its keys say).
func TestChooseThresholds(t *testing.T) {
	cases := []struct {
		lib   Library
		op    Op
		n     int
		bytes float64
		alg   string
		rule  string // a part of the rule
	}{
		// Open MPI, alltoall: 4 MB blocks among 4 to 12 ranks run linear, not pairwise.
		{OpenMPI, Alltoall, 12, 4194304, "linear", "alltoall among 12 ranks (8 ≤ n < 16), block of 4194304 bytes (size ≥ 262144) → linear (basic_linear, algorithm 1)"},
		{OpenMPI, Alltoall, 12, 262143, "linear", "(size < 262144) → linear (linear_sync"},
		{OpenMPI, Alltoall, 4, 524287, "linear", "(65536 ≤ size < 524288) → linear (basic_linear, algorithm 1)"},
		{OpenMPI, Alltoall, 4, 524288, "pairwise", "(524288 ≤ size < 1048576) → pairwise (pairwise, algorithm 2)"},
		{OpenMPI, Alltoall, 4, 1048576, "linear", "(size ≥ 1048576) → linear"},
		{OpenMPI, Alltoall, 100, 262143, "linear", "(64 ≤ n < 128)"},
		{OpenMPI, Alltoall, 100, 262144, "pairwise", "(size ≥ 262144) → pairwise"},
		{OpenMPI, Alltoall, 40, 511, "bruck", "(size < 512) → bruck (modified_bruck, algorithm 3)"},
		{OpenMPI, Alltoall, 2, 3, "two-proc", "(n = 2)"},
		{OpenMPI, Alltoall, 2, 4, "pairwise", "(4 ≤ size < 16)"},
		{OpenMPI, Alltoall, 5000, 65536, "linear", "(n ≥ 4096)"},
		{OpenMPI, Alltoallv, 3, 0, "pairwise", "alltoallv among 3 ranks (n < 4) → pairwise"},
		{OpenMPI, Alltoallv, 4, 0, "linear", "(4 ≤ n < 64) → linear"},
		{OpenMPI, Alltoallv, 127, 0, "pairwise", "(64 ≤ n < 128)"},
		{OpenMPI, Alltoallv, 128, 0, "linear", "(128 ≤ n < 256)"},
		{OpenMPI, Allgather, 2, 1e6, "two-proc", "(n = 2)"},
		{OpenMPI, Allgather, 31, 1e6, "recursive-doubling", "(n < 32)"},
		{OpenMPI, Allgather, 32, 1023, "recursive-doubling", "(32 ≤ n < 64)"},
		{OpenMPI, Allgather, 32, 1024, "neighbor-exchange", "(1024 ≤ size < 65536) → neighbor-exchange (neighbor, algorithm 5)"},
		{OpenMPI, Allgather, 32, 65536, "ring", "(size ≥ 65536) → ring"},
		{OpenMPI, Bcast, 12, 32767, "bmtree", "(16384 ≤ size < 32768) → bmtree (binomial, algorithm 6)"},
		{OpenMPI, Bcast, 12, 32768, "linear", "(size ≥ 32768) → linear"},
		{OpenMPI, Bcast, 5, 1048575, "linear", "(4 ≤ n < 8)"},
		{OpenMPI, Bcast, 5, 1048576, "chain", "(size ≥ 1048576) → chain (chain, algorithm 2)"},
		{OpenMPI, Bcast, 24, 1048576, "scatter-allgather", "→ scatter-allgather (scatter_allgather, algorithm 8)"},
		{OpenMPI, Bcast, 300, 16384, "split-bintree", "(16384 ≤ size < 32768) → split-bintree"},
		{OpenMPI, Bcast, 100, 1, "knomial", "(64 ≤ n < 128), message of 1 bytes (any size) → knomial"},
		{OpenMPI, Gather, 5, 262143, "linear", "→ linear (basic_linear, algorithm 1)"},
		{OpenMPI, Gather, 5, 262144, "linear-sync", "(size ≥ 262144) → linear-sync"},
		{OpenMPI, Scatter, 12, 16383, "binomial", "(size < 16384) → binomial"},
		{OpenMPI, Scatter, 12, 16384, "linear-nb", "(16384 ≤ size < 1048576) → linear-nb"},
		{OpenMPI, Scatter, 12, 1048576, "linear", "(size ≥ 1048576) → linear"},
		{OpenMPI, ReduceScatter, 16, 16383, "recursive-halving", "vector of 262128 bytes (size < 262144)"},
		{OpenMPI, ReduceScatter, 16, 16384, "ring", "vector of 262144 bytes (size ≥ 262144) → ring"},
		{OpenMPI, ReduceScatter, 100, 1, "non-overlapping", "(size < 256) → non-overlapping"},
		// MPICH.
		{MPICH, Alltoall, 8, 256, "bruck", `(comm_size=any, avg_msg_size<=256 with avg_msg_size = 256) → bruck (MPIR_Alltoall_intra_brucks)`},
		{MPICH, Alltoall, 8, 257, "scattered", "avg_msg_size<=32768"},
		{MPICH, Alltoall, 8, 32768, "scattered", "MPIR_Alltoall_intra_scattered"},
		{MPICH, Alltoall, 8, 32769, "pairwise-xor", "avg_msg_size=any with avg_msg_size = 32769) → pairwise-xor (MPIR_Alltoall_intra_pairwise)"},
		{MPICH, Alltoall, 12, 4194304, "pairwise", "alltoall among 12 ranks (comm_size=any"},
		{MPICH, Alltoall, 7, 100, "scattered", "(comm_size<8, avg_msg_size<=32768"},
		{MPICH, Alltoall, 7, 32769, "pairwise", "comm_size<8, avg_msg_size=any"},
		{MPICH, Alltoallv, 12, 0, "scattered", "MPIR_Alltoallv_intra_scattered"},
		{MPICH, Allgather, 8, 65535, "recursive-doubling", "comm_size=pow2, total_msg_size<524288 with total_msg_size = 524280"},
		{MPICH, Allgather, 8, 65536, "ring", "total_msg_size=any with total_msg_size = 524288"},
		{MPICH, Allgather, 10, 8191, "bruck", "comm_size=any, total_msg_size<81920 with total_msg_size = 81910"},
		{MPICH, Allgather, 10, 8192, "ring", "MPIR_Allgather_intra_ring"},
		{MPICH, Bcast, 7, 1e9, "binomial", "comm_size<8"},
		{MPICH, Bcast, 8, 12288, "binomial", "comm_size=pow2, avg_msg_size<=12288"},
		{MPICH, Bcast, 8, 12289, "scatter-allgather", "MPIR_Bcast_intra_scatter_recursive_doubling_allgather"},
		{MPICH, Bcast, 8, 524288, "scatter-allgather", "avg_msg_size<=524288"},
		{MPICH, Bcast, 8, 524289, "scatter-ring-allgather", "MPIR_Bcast_intra_scatter_ring_allgather"},
		{MPICH, Bcast, 12, 12289, "scatter-ring-allgather", "comm_size=any, avg_msg_size=any"},
		{MPICH, Gather, 12, 1e6, "binomial", "MPIR_Gather_intra_binomial"},
		{MPICH, Scatter, 12, 1e6, "binomial", "MPIR_Scatter_intra_binomial"},
		{MPICH, ReduceScatter, 16, 32767, "recursive-halving", "total_msg_size<524288 with total_msg_size = 524272"},
		{MPICH, ReduceScatter, 16, 32768, "pairwise", "MPIR_Reduce_scatter_intra_pairwise"},
	}
	for _, tc := range cases {
		ch, err := Choose(tc.lib, tc.op, tc.n, tc.bytes)
		if err != nil {
			t.Fatal(err)
		}
		if ch.Algorithm != tc.alg || !strings.Contains(ch.Rule, tc.rule) {
			t.Errorf("%s %s, %d ranks, %g bytes: %s by %q\nwant %s by a rule containing %q", tc.lib, tc.op, tc.n, tc.bytes, ch.Algorithm, ch.Rule, tc.alg, tc.rule)
		}
		if _, ok := lookup(tc.op, ch.Algorithm); !ok {
			t.Errorf("%s %s: %s is not in the catalogue", tc.lib, tc.op, ch.Algorithm)
		}
	}
}

// Every rule of both libraries answers with an algorithm of the catalogue for every number
// of ranks and size around the thresholds, and Auto quotes the rule in the schedule.
func TestChooseCoversCatalogue(t *testing.T) {
	for _, lib := range Libraries() {
		for _, op := range Ops() {
			for _, n := range []int{2, 3, 4, 7, 8, 12, 16, 31, 64, 100, 256, 1000, 3000, 5000} {
				for _, b := range []float64{0, 1, 255, 256, 257, 4096, 32768, 524288, 4194304} {
					ch, err := Choose(lib, op, n, b)
					if err != nil {
						t.Fatal(err)
					}
					if _, ok := lookup(op, ch.Algorithm); !ok {
						t.Fatalf("%s %s %d %g: %s", lib, op, n, b, ch.Algorithm)
					}
				}
			}
		}
	}
	s, err := Auto(Collective{Op: Alltoall, Ranks: nodes(12), Bytes: 4e6}, MPICH)
	if err != nil || s.Algorithm != "pairwise" || !strings.HasPrefix(s.Rule, "MPICH 4.3.2 default selection") || len(s.Rounds) != 11 {
		t.Errorf("Auto: %+v, %v", s, err)
	}
	s, err = Auto(Collective{Op: Allgather, Ranks: nodes(12), Bytes: 1e6}, OpenMPI)
	if err != nil || s.Algorithm != "bruck" || !strings.Contains(s.Rule, "→ recursive-doubling") || !strings.Contains(s.Rule, "runs Bruck's algorithm instead") {
		t.Errorf("Auto, a substitution: %+v, %v", s, err)
	}
}

func TestChooseRefuses(t *testing.T) {
	for _, tc := range []struct {
		lib   Library
		op    Op
		n     int
		bytes float64
		want  string
	}{
		{"intelmpi", Alltoall, 4, 1, "unknown library \"intelmpi\"; want one of openmpi, mpich"},
		{OpenMPI, "allreduce", 4, 1, "unknown collective"},
		{MPICH, Bcast, 1, 1, "want at least two"},
		{MPICH, Bcast, 4, -1, "at least 0 bytes"},
	} {
		if _, err := Choose(tc.lib, tc.op, tc.n, tc.bytes); err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Choose(%s, %s, %d, %g) = %v, want %q", tc.lib, tc.op, tc.n, tc.bytes, err, tc.want)
		}
	}
}

// MPICH's broadcast among several ranks per node is node-aware, which its flat rules do not
// describe: Auto refuses it rather than expand the flat rule, and a named algorithm runs.
func TestAutoMPICHBcastSeveralRanksPerNode(t *testing.T) {
	c := Collective{Op: Bcast, Ranks: []string{"a", "a", "b", "b"}, Bytes: 1e6}
	if _, err := Auto(c, MPICH); err == nil || !strings.Contains(err.Error(), "node-aware") {
		t.Errorf("Auto(MPICH) of a broadcast with two ranks per node: %v", err)
	}
	if _, err := Auto(c, OpenMPI); err != nil {
		t.Errorf("Auto(OpenMPI): %v", err)
	}
	if _, err := New(c, "binomial"); err != nil {
		t.Errorf("New(binomial): %v", err)
	}
	c.Ranks = []string{"a", "b", "c", "d"}
	if _, err := Auto(c, MPICH); err != nil {
		t.Errorf("Auto(MPICH), one rank per node: %v", err)
	}
}
