package schedule

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/commcal/commcal/internal/badinput"
)

// rounds spells a schedule's rounds as "src>dst:bytes" lists, each sorted.
func rounds(s *Schedule) [][]string {
	out := make([][]string, len(s.Rounds))
	for r, round := range s.Rounds {
		for _, t := range round {
			out[r] = append(out[r], fmt.Sprintf("%d>%d:%g", t.Src, t.Dst, t.Bytes))
		}
		slices.Sort(out[r])
	}
	return out
}

// spell writes rounds given as space-separated transfers, sorted as rounds sorts them.
func spell(rs ...string) [][]string {
	out := make([][]string, len(rs))
	for i, r := range rs {
		out[i] = strings.Fields(r)
		slices.Sort(out[i])
	}
	return out
}

// The rounds of every algorithm for small n, worked out by hand from the libraries' sources
// and the diagrams in their comments (Open MPI's coll_base_allgather.c for Bruck and the
// neighbour exchange on 6 ranks, coll_base_topo.c for the binary tree on 7 and the k-nomial
// tree on 10, coll_base_bcast.c for the scatter-allgather broadcast on 8).
func TestRoundsByHand(t *testing.T) {
	cases := []struct {
		name string
		c    Collective
		alg  string
		want [][]string
	}{
		{"alltoall pairwise n=4", Collective{Op: Alltoall, Ranks: nodes(4), Bytes: 10}, "pairwise",
			spell("0>1:10 1>2:10 2>3:10 3>0:10", "0>2:10 1>3:10 2>0:10 3>1:10", "0>3:10 1>0:10 2>1:10 3>2:10")},
		{"alltoall pairwise n=5", Collective{Op: Alltoall, Ranks: nodes(5), Bytes: 10}, "pairwise",
			spell("0>1:10 1>2:10 2>3:10 3>4:10 4>0:10", "0>2:10 1>3:10 2>4:10 3>0:10 4>1:10",
				"0>3:10 1>4:10 2>0:10 3>1:10 4>2:10", "0>4:10 1>0:10 2>1:10 3>2:10 4>3:10")},
		{"alltoall pairwise-xor n=4", Collective{Op: Alltoall, Ranks: nodes(4), Bytes: 10}, "pairwise-xor",
			spell("0>1:10 1>0:10 2>3:10 3>2:10", "0>2:10 1>3:10 2>0:10 3>1:10", "0>3:10 1>2:10 2>1:10 3>0:10")},
		{"alltoall bruck n=5: 2, 2 and 1 blocks", Collective{Op: Alltoall, Ranks: nodes(5), Bytes: 10}, "bruck",
			spell("0>1:20 1>2:20 2>3:20 3>4:20 4>0:20", "0>2:20 1>3:20 2>4:20 3>0:20 4>1:20", "0>4:10 1>0:10 2>1:10 3>2:10 4>3:10")},
		{"alltoall linear n=3", Collective{Op: Alltoall, Ranks: nodes(3), Bytes: 10}, "linear",
			spell("0>1:10 0>2:10 1>0:10 1>2:10 2>0:10 2>1:10")},
		{"allgather ring n=4", Collective{Op: Allgather, Ranks: nodes(4), Bytes: 10}, "ring",
			spell("0>1:10 1>2:10 2>3:10 3>0:10", "0>1:10 1>2:10 2>3:10 3>0:10", "0>1:10 1>2:10 2>3:10 3>0:10")},
		{"allgather recursive doubling n=8", Collective{Op: Allgather, Ranks: nodes(8), Bytes: 10}, "recursive-doubling",
			spell("0>1:10 1>0:10 2>3:10 3>2:10 4>5:10 5>4:10 6>7:10 7>6:10",
				"0>2:20 1>3:20 2>0:20 3>1:20 4>6:20 5>7:20 6>4:20 7>5:20",
				"0>4:40 1>5:40 2>6:40 3>7:40 4>0:40 5>1:40 6>2:40 7>3:40")},
		{"allgather bruck n=6", Collective{Op: Allgather, Ranks: nodes(6), Bytes: 10}, "bruck",
			spell("0>5:10 1>0:10 2>1:10 3>2:10 4>3:10 5>4:10", "0>4:20 1>5:20 2>0:20 3>1:20 4>2:20 5>3:20",
				"0>2:20 1>3:20 2>4:20 3>5:20 4>0:20 5>1:20")},
		{"allgather neighbor exchange n=6", Collective{Op: Allgather, Ranks: nodes(6), Bytes: 10}, "neighbor-exchange",
			spell("0>1:10 1>0:10 2>3:10 3>2:10 4>5:10 5>4:10", "0>5:20 5>0:20 1>2:20 2>1:20 3>4:20 4>3:20",
				"0>1:20 1>0:20 2>3:20 3>2:20 4>5:20 5>4:20")},
		{"bcast binomial n=8", Collective{Op: Bcast, Ranks: nodes(8), Bytes: 100}, "binomial",
			spell("0>4:100", "0>2:100 4>6:100", "0>1:100 2>3:100 4>5:100 6>7:100")},
		{"bcast binomial n=5 root 2", Collective{Op: Bcast, Ranks: nodes(5), Root: 2, Bytes: 100}, "binomial",
			spell("2>1:100", "2>4:100", "2>3:100 4>0:100")},
		{"bcast bmtree n=8", Collective{Op: Bcast, Ranks: nodes(8), Bytes: 100}, "bmtree",
			spell("0>1:100 0>2:100 0>4:100", "1>3:100 1>5:100 2>6:100", "3>7:100")},
		{"bcast knomial n=10", Collective{Op: Bcast, Ranks: nodes(10), Bytes: 100}, "knomial",
			spell("0>1:100 0>2:100 0>3:100 0>4:100 0>8:100", "4>5:100 4>6:100 4>7:100 8>9:100")},
		{"bcast bintree n=7", Collective{Op: Bcast, Ranks: nodes(7), Bytes: 100}, "bintree",
			spell("0>1:100 0>2:100", "1>3:100 1>5:100 2>4:100 2>6:100")},
		{"bcast chain n=4 root 1", Collective{Op: Bcast, Ranks: nodes(4), Root: 1, Bytes: 100}, "chain",
			spell("1>2:100", "2>3:100", "3>0:100")},
		{"bcast linear n=4", Collective{Op: Bcast, Ranks: nodes(4), Bytes: 100}, "linear",
			spell("0>1:100 0>2:100 0>3:100")},
		{"bcast split bintree n=7", Collective{Op: Bcast, Ranks: nodes(7), Bytes: 10}, "split-bintree",
			spell("0>1:5", "0>2:5 1>3:5", "1>5:5 2>4:5", "2>6:5", "1>2:5 2>1:5 3>4:5 4>3:5 5>6:5 6>5:5")},
		{"bcast split bintree n=6, halves of 6 and 5 bytes", Collective{Op: Bcast, Ranks: nodes(6), Bytes: 11}, "split-bintree",
			spell("0>1:6", "0>2:5 1>3:6", "1>5:6 2>4:5", "1>2:6 2>1:5 3>4:6 4>3:5 0>5:5")},
		{"bcast scatter-allgather n=8", Collective{Op: Bcast, Ranks: nodes(8), Bytes: 8000}, "scatter-allgather",
			spell("0>4:4000", "0>2:2000 4>6:2000", "0>1:1000 2>3:1000 4>5:1000 6>7:1000",
				"0>1:1000 1>0:1000 2>3:1000 3>2:1000 4>5:1000 5>4:1000 6>7:1000 7>6:1000",
				"0>2:2000 1>3:2000 2>0:2000 3>1:2000 4>6:2000 5>7:2000 6>4:2000 7>5:2000",
				"0>4:4000 1>5:4000 2>6:4000 3>7:4000 4>0:4000 5>1:4000 6>2:4000 7>3:4000")},
		{"bcast scatter-ring-allgather n=4", Collective{Op: Bcast, Ranks: nodes(4), Bytes: 400}, "scatter-ring-allgather",
			spell("0>2:200", "0>1:100 2>3:100", "0>1:100 1>2:100 2>3:100 3>0:100", "0>1:100 1>2:100 2>3:100 3>0:100",
				"0>1:100 1>2:100 2>3:100 3>0:100")},
		{"scatter binomial n=5", Collective{Op: Scatter, Ranks: nodes(5), Bytes: 10}, "binomial",
			spell("0>4:10", "0>2:20", "0>1:10 2>3:10")},
		{"gather binomial n=5", Collective{Op: Gather, Ranks: nodes(5), Bytes: 10}, "binomial",
			spell("1>0:10 3>2:10", "2>0:20", "4>0:10")},
		{"scatter linear n=4 root 2", Collective{Op: Scatter, Ranks: nodes(4), Root: 2, Bytes: 10}, "linear",
			spell("2>0:10", "2>1:10", "2>3:10")},
		{"scatter linear-nb n=4", Collective{Op: Scatter, Ranks: nodes(4), Bytes: 10}, "linear-nb",
			spell("0>1:10 0>2:10 0>3:10")},
		{"gather linear-sync n=3", Collective{Op: Gather, Ranks: nodes(3), Bytes: 10}, "linear-sync",
			spell("1>0:10", "2>0:10")},
		{"reduce_scatter ring n=4", Collective{Op: ReduceScatter, Ranks: nodes(4), Bytes: 10}, "ring",
			spell("0>1:10 1>2:10 2>3:10 3>0:10", "0>1:10 1>2:10 2>3:10 3>0:10", "0>1:10 1>2:10 2>3:10 3>0:10")},
		{"reduce_scatter recursive halving n=5", Collective{Op: ReduceScatter, Ranks: nodes(5), Bytes: 10}, "recursive-halving",
			spell("0>1:50", "1>3:20 3>1:30 2>4:20 4>2:30", "1>2:10 2>1:20 3>4:10 4>3:10", "1>0:10")},
		{"reduce_scatter butterfly n=4", Collective{Op: ReduceScatter, Ranks: nodes(4), Bytes: 10}, "butterfly",
			spell("0>1:20 1>0:20 2>3:20 3>2:20", "0>2:10 2>0:10 1>3:10 3>1:10", "1>2:10 2>1:10")},
		{"reduce_scatter pairwise n=3", Collective{Op: ReduceScatter, Ranks: nodes(3), Bytes: 10}, "pairwise",
			spell("0>1:10 1>2:10 2>0:10", "0>2:10 1>0:10 2>1:10")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(tc.c, tc.alg)
			if err != nil {
				t.Fatal(err)
			}
			if got := rounds(s); !slices.EqualFunc(got, tc.want, slices.Equal) {
				t.Errorf("rounds\n got %v\nwant %v", got, tc.want)
			}
			if s.Algorithm != tc.alg || s.Rule != "named by the user" {
				t.Errorf("algorithm %q, rule %q", s.Algorithm, s.Rule)
			}
		})
	}
}

// MPICH's scattered all-to-all posts 32 sends at a time: among 40 ranks, a first round of
// offsets 1 … 31 and a second of 32 … 39, rank 0 sending to 0 − k mod 40.
func TestScatteredBatches(t *testing.T) {
	s, err := New(Collective{Op: Alltoall, Ranks: nodes(40), Bytes: 1}, "scattered")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Rounds) != 2 || len(s.Rounds[0]) != 40*31 || len(s.Rounds[1]) != 40*8 {
		t.Fatalf("%d rounds of %v transfers, want 2 of 1240 and 320", len(s.Rounds), []int{len(s.Rounds[0])})
	}
	var dst []int
	for _, tr := range s.Rounds[1] {
		if tr.Src == 0 {
			dst = append(dst, tr.Dst)
		}
	}
	slices.Sort(dst)
	if !slices.Equal(dst, []int{1, 2, 3, 4, 5, 6, 7, 8}) {
		t.Errorf("rank 0 sends to %v in the second round, want 1 … 8", dst)
	}
}

// Where a library's function runs another algorithm, the schedule runs that one and its
// rule says why.
func TestSubstitutions(t *testing.T) {
	cases := []struct {
		c        Collective
		alg, ran string
		why      string
	}{
		{Collective{Op: Alltoall, Ranks: nodes(6), Bytes: 1}, "pairwise-xor", "pairwise", "6 ranks are not a power of two"},
		{Collective{Op: Alltoall, Ranks: nodes(3), Bytes: 1}, "two-proc", "pairwise", "two-proc needs two ranks"},
		{Collective{Op: Allgather, Ranks: nodes(12), Bytes: 1}, "recursive-doubling", "bruck", "12 ranks are not a power of two"},
		{Collective{Op: Allgather, Ranks: nodes(5), Bytes: 1}, "neighbor-exchange", "ring", "5 ranks are odd"},
		{Collective{Op: Bcast, Ranks: nodes(8), Bytes: 7}, "scatter-allgather", "linear", "7 bytes are fewer than the 8 ranks"},
		{Collective{Op: Bcast, Ranks: nodes(8), Bytes: 1}, "split-bintree", "chain", "no two halves"},
	}
	for _, tc := range cases {
		s, err := New(tc.c, tc.alg)
		if err != nil {
			t.Fatal(err)
		}
		if s.Algorithm != tc.ran || !strings.Contains(s.Rule, tc.why) {
			t.Errorf("%s %s: ran %s, rule %q; want %s and %q", tc.c.Op, tc.alg, s.Algorithm, s.Rule, tc.ran, tc.why)
		}
	}
	for _, n := range []int{2, 8} {
		if s, _ := New(Collective{Op: Alltoall, Ranks: nodes(n), Bytes: 1}, "pairwise-xor"); s.Algorithm != "pairwise-xor" {
			t.Errorf("%d ranks: pairwise-xor ran %s", n, s.Algorithm)
		}
	}
}

// Mistakes in a collective are bad input that says what is wrong.
func TestNewRefuses(t *testing.T) {
	cases := []struct {
		c    Collective
		alg  string
		want string
	}{
		{Collective{Op: Alltoall, Ranks: nodes(1), Bytes: 1}, "pairwise", "1 ranks, want 2 to 262144"},
		{Collective{Op: "allreduce", Ranks: nodes(4), Bytes: 1}, "ring", "unknown collective"},
		{Collective{Op: Alltoall, Ranks: nodes(4), Bytes: 1}, "ring", "alltoall has no algorithm \"ring\""},
		{Collective{Op: Bcast, Ranks: nodes(4), Root: 4, Bytes: 1}, "binomial", "root 4 outside the ranks 0 to 3"},
		{Collective{Op: Alltoall, Ranks: nodes(4), Root: 1, Bytes: 1}, "pairwise", "has no root"},
		{Collective{Op: Alltoall, Ranks: nodes(4), Bytes: 0}, "pairwise", "positive whole number"},
		{Collective{Op: Alltoall, Ranks: nodes(4), Bytes: 1.5}, "pairwise", "positive whole number"},
		{Collective{Op: Alltoall, Ranks: nodes(4), Bytes: math.NaN()}, "pairwise", "positive whole number"},
		{Collective{Op: Allgather, Ranks: nodes(4), Bytes: 1 << 49}, "ring", "4-fold is at most"},
		{Collective{Op: Alltoall, Ranks: []string{"a", ""}, Bytes: 1}, "pairwise", "rank 1 has no node"},
		{Collective{Op: Alltoallv, Ranks: nodes(2), Sizes: [][]float64{{0, 1}}}, "pairwise", "1 rows of sizes for 2 ranks"},
		{Collective{Op: Alltoallv, Ranks: nodes(2), Sizes: [][]float64{{0, 1}, {-1, 0}}}, "pairwise", "rank 1 sends -1 bytes to rank 0"},
		{Collective{Op: Alltoallv, Ranks: nodes(2), Sizes: [][]float64{{5, 0}, {0, 5}}}, "pairwise", "no rank sends to another"},
		{Collective{Op: Alltoall, Ranks: nodes(2), Bytes: 1, Sizes: [][]float64{{0, 1}, {1, 0}}}, "pairwise", "for alltoallv only"},
		{Collective{Op: ReduceScatter, Ranks: nodes(4), Bytes: 8}, "non-overlapping", "not expanded"},
		{Collective{Op: Alltoall, Ranks: nodes(3200), Bytes: 1}, "linear", "at most 10000000"},
	}
	for _, tc := range cases {
		_, err := New(tc.c, tc.alg)
		if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%s, %s) = %v, want bad input saying %q", tc.c.Op, tc.alg, err, tc.want)
		}
	}
	// Bruck's logarithmic rounds stay within the ceiling where the quadratic ones do not.
	if s, err := New(Collective{Op: Alltoall, Ranks: nodes(3200), Bytes: 1}, "bruck"); err != nil || len(s.Rounds) != 12 {
		t.Errorf("bruck among 3200 ranks: %v", err)
	}
}

// The catalogue describes every algorithm, and the Algorithms lists hold no name twice.
func TestCatalogue(t *testing.T) {
	for _, op := range Ops() {
		names := Algorithms(op)
		if len(names) == 0 {
			t.Errorf("%s has no algorithm", op)
		}
		for i, name := range names {
			if slices.Contains(names[:i], name) {
				t.Errorf("%s lists %s twice", op, name)
			}
			doc, src, ok := Describe(op, name)
			if !ok || doc == "" || !strings.Contains(src, "Open MPI") && !strings.Contains(src, "MPICH") {
				t.Errorf("%s %s: doc %q, source %q", op, name, doc, src)
			}
		}
	}
	if _, _, ok := Describe(Bcast, "pairwise"); ok {
		t.Error("bcast describes pairwise")
	}
}
