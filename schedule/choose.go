package schedule

import (
	"fmt"
	"strings"

	"github.com/commcal/commcal/internal/badinput"
)

// Library is an MPI library whose default decision rules Choose follows.
type Library string

// The libraries.
const (
	// OpenMPI is Open MPI 4.1.8's tuned component with its fixed decision rules
	// (ompi/mca/coll/tuned/coll_tuned_decision_fixed.c; the same in 5.0.9), the default for
	// communicators that span nodes.
	OpenMPI Library = "openmpi"
	// MPICH is MPICH 4.3.2's default collective selection (maint/tuning/coll/mpir/generic.json,
	// compiled in as MPII_coll_generic_json) for a communicator of one rank per node (its
	// "comm_hierarchy=any" branches; with several ranks per node, MPICH's CH4 device runs
	// node-aware broadcasts that the package does not expand).
	MPICH Library = "mpich"
)

// Libraries lists the libraries Choose knows.
func Libraries() []Library { return []Library{OpenMPI, MPICH} }

// Choice is the algorithm a library's rules pick, and the rule, quoted with its thresholds.
type Choice struct {
	Algorithm string
	Rule      string
}

// Choose returns the algorithm lib runs op with among procs ranks for a size of bytes (as
// Collective.Bytes; Alltoallv's rules look at the number of ranks only). The thresholds are
// the libraries', expressed in this package's own tables and code: Open MPI compares its
// total_dsize (the block of an all-to-all, allgather, scatter or gather, the message of a
// broadcast, the whole vector of a reduce-scatter) with strict upper bounds per
// communicator-size band; MPICH compares avg_msg_size (an all-to-all's block, a broadcast's
// message) or total_msg_size (n blocks of an allgather or a reduce-scatter) as its JSON keys
// say (< or ≤). Reduce-scatter rules are those for a commutative operation.
func Choose(lib Library, op Op, procs int, bytes float64) (Choice, error) {
	if procs < 2 {
		return Choice{}, badinput.Errorf("", "schedule: %s among %d ranks: want at least two", op, procs)
	}
	if _, ok := catalogue[op]; !ok {
		return Choice{}, badinput.Errorf("", "schedule: unknown collective %s", badinput.Quote(string(op)))
	}
	if !(bytes >= 0) {
		return Choice{}, badinput.Errorf("", "schedule: %s of %g bytes: want a size of at least 0 bytes", op, bytes)
	}
	switch lib {
	case OpenMPI:
		return ompiChoose(op, procs, bytes), nil
	case MPICH:
		return mpichChoose(op, procs, bytes), nil
	}
	names := make([]string, 0, 2)
	for _, l := range Libraries() {
		names = append(names, string(l))
	}
	return Choice{}, badinput.Errorf("", "schedule: unknown library %s; want one of %s", badinput.Quote(string(lib)), strings.Join(names, ", "))
}

// ompiCut sends sizes below below (0: any size) to Open MPI algorithm alg.
type ompiCut struct {
	below float64
	alg   int
}

// ompiBand is one communicator-size branch of a fixed rule: n == only when only is set,
// otherwise n < below (0: any n).
type ompiBand struct {
	only, below int
	cuts        []ompiCut
}

// ompiAlg is one of Open MPI's numbered algorithms: its name in Open MPI and the catalogue's.
type ompiAlg struct{ ompi, name string }

// ompiRule is Open MPI's fixed rule of one collective.
type ompiRule struct {
	bands []ompiBand
	algs  map[int]ompiAlg
	size  string // what total_dsize is
}

// cuts spells the branches of coll_tuned_decision_fixed.c compactly: pairs of (strict upper
// bound, algorithm), the last pair's bound 0 for "else".
func cuts(pairs ...float64) []ompiCut {
	out := make([]ompiCut, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, ompiCut{pairs[i], int(pairs[i+1])})
	}
	return out
}

// one is a branch without a size test.
func one(alg int) []ompiCut { return []ompiCut{{0, alg}} }

// ompiRules transcribes the fixed decision functions of Open MPI 4.1.8's
// coll_tuned_decision_fixed.c, branch by branch.
var ompiRules = map[Op]ompiRule{
	Alltoall: {size: "block", algs: map[int]ompiAlg{1: {"basic_linear", "linear"}, 2: {"pairwise", "pairwise"},
		3: {"modified_bruck", "bruck"}, 4: {"linear_sync, every request at once (max_requests = 0)", "linear"}, 5: {"two_proc", "two-proc"}},
		bands: []ompiBand{
			{only: 2, cuts: cuts(2, 2, 4, 5, 16, 2, 64, 5, 256, 2, 4096, 5, 32768, 2, 262144, 4, 1048576, 5, 0, 2)},
			{below: 8, cuts: cuts(8192, 4, 16384, 1, 65536, 4, 524288, 1, 1048576, 2, 0, 1)},
			{below: 16, cuts: cuts(262144, 4, 0, 1)},
			{below: 32, cuts: cuts(4, 4, 512, 3, 8192, 4, 32768, 1, 262144, 4, 524288, 1, 0, 4)},
			{below: 64, cuts: cuts(512, 3, 524288, 1, 0, 4)},
			{below: 128, cuts: cuts(1024, 3, 2048, 1, 4096, 4, 262144, 1, 0, 2)},
			{below: 256, cuts: cuts(1024, 3, 2048, 4, 262144, 1, 0, 2)},
			{below: 512, cuts: cuts(1024, 3, 8192, 4, 32768, 1, 0, 2)},
			{below: 1024, cuts: cuts(512, 3, 8192, 4, 16384, 1, 131072, 4, 262144, 1, 0, 2)},
			{below: 2048, cuts: cuts(512, 3, 1024, 4, 2048, 1, 16384, 4, 262144, 1, 0, 4)},
			{below: 4096, cuts: cuts(1024, 3, 4096, 4, 8192, 1, 131072, 4, 0, 1)},
			{cuts: cuts(2048, 3, 8192, 4, 16384, 1, 32768, 4, 65536, 1, 0, 4)},
		}},
	Alltoallv: {size: "", algs: map[int]ompiAlg{1: {"basic_linear", "linear"}, 2: {"pairwise", "pairwise"}},
		bands: []ompiBand{{below: 4, cuts: one(2)}, {below: 64, cuts: one(1)}, {below: 128, cuts: one(2)},
			{below: 256, cuts: one(1)}, {below: 1024, cuts: one(2)}, {cuts: one(1)}}},
	Allgather: {size: "block", algs: map[int]ompiAlg{2: {"bruck", "bruck"}, 3: {"recursive_doubling", "recursive-doubling"},
		4: {"ring", "ring"}, 5: {"neighbor", "neighbor-exchange"}, 6: {"two_proc", "two-proc"}},
		bands: []ompiBand{
			{only: 2, cuts: one(6)},
			{below: 32, cuts: one(3)},
			{below: 64, cuts: cuts(1024, 3, 65536, 5, 0, 4)},
			{below: 128, cuts: cuts(512, 3, 65536, 5, 0, 4)},
			{below: 256, cuts: cuts(512, 3, 131072, 5, 524288, 4, 1048576, 5, 0, 4)},
			{below: 512, cuts: cuts(32, 3, 128, 2, 1024, 3, 131072, 5, 524288, 4, 1048576, 5, 0, 4)},
			{below: 1024, cuts: cuts(64, 3, 256, 2, 2048, 3, 0, 5)},
			{below: 2048, cuts: cuts(4, 3, 8, 2, 16, 3, 32, 2, 256, 3, 512, 2, 4096, 3, 0, 5)},
			{below: 4096, cuts: cuts(32, 2, 128, 3, 512, 2, 4096, 3, 0, 5)},
			{cuts: cuts(2, 3, 8, 2, 16, 3, 512, 2, 4096, 3, 0, 5)},
		}},
	Bcast: {size: "message", algs: map[int]ompiAlg{1: {"basic_linear", "linear"}, 2: {"chain", "chain"}, 3: {"pipeline", "pipeline"},
		4: {"split_binary_tree", "split-bintree"}, 5: {"binary_tree", "bintree"}, 6: {"binomial", "bmtree"}, 7: {"knomial", "knomial"},
		8: {"scatter_allgather", "scatter-allgather"}, 9: {"scatter_allgather_ring", "scatter-ring-allgather"}},
		bands: []ompiBand{
			{below: 4, cuts: cuts(32, 3, 256, 5, 512, 3, 1024, 7, 32768, 1, 131072, 5, 262144, 2, 524288, 1, 1048576, 6, 0, 5)},
			{below: 8, cuts: cuts(64, 5, 128, 6, 2048, 5, 8192, 6, 1048576, 1, 0, 2)},
			{below: 16, cuts: cuts(8, 7, 64, 5, 4096, 7, 16384, 5, 32768, 6, 0, 1)},
			{below: 32, cuts: cuts(4096, 7, 1048576, 6, 0, 8)},
			{below: 64, cuts: cuts(2048, 6, 0, 7)},
			{below: 128, cuts: one(7)},
			{below: 256, cuts: cuts(2, 6, 16384, 5, 32768, 1, 65536, 5, 0, 7)},
			{below: 1024, cuts: cuts(16384, 7, 32768, 4, 0, 7)},
			{below: 2048, cuts: cuts(524288, 7, 0, 8)},
			{below: 4096, cuts: cuts(262144, 7, 0, 8)},
			{cuts: cuts(8192, 7, 16384, 5, 262144, 7, 0, 8)},
		}},
	Gather: {size: "block", algs: map[int]ompiAlg{1: {"basic_linear", "linear"}, 2: {"binomial", "binomial"}, 3: {"linear_sync", "linear-sync"}},
		bands: []ompiBand{
			{below: 4, cuts: cuts(2, 3, 4, 1, 32768, 2, 65536, 1, 131072, 2, 0, 3)},
			{below: 8, cuts: cuts(1024, 2, 8192, 1, 32768, 2, 262144, 1, 0, 3)},
			{below: 256, cuts: one(2)},
			{below: 512, cuts: cuts(2048, 2, 8192, 1, 0, 2)},
			{cuts: one(2)},
		}},
	Scatter: {size: "block", algs: map[int]ompiAlg{1: {"basic_linear", "linear"}, 2: {"binomial", "binomial"}, 3: {"linear_nb", "linear-nb"}},
		bands: []ompiBand{
			{below: 4, cuts: cuts(2, 3, 131072, 1, 262144, 3, 0, 1)},
			{below: 8, cuts: cuts(2048, 2, 4096, 1, 8192, 2, 32768, 1, 1048576, 3, 0, 1)},
			{below: 16, cuts: cuts(16384, 2, 1048576, 3, 0, 1)},
			{below: 32, cuts: cuts(16384, 2, 32768, 1, 0, 3)},
			{below: 64, cuts: cuts(512, 2, 8192, 3, 16384, 2, 0, 3)},
			{cuts: cuts(512, 2, 0, 3)},
		}},
	ReduceScatter: {size: "vector", algs: map[int]ompiAlg{1: {"non-overlapping", "non-overlapping"}, 2: {"recursive_halving", "recursive-halving"},
		3: {"ring", "ring"}, 4: {"butterfly", "butterfly"}},
		bands: []ompiBand{
			{below: 4, cuts: cuts(65536, 3, 131072, 4, 0, 3)},
			{below: 8, cuts: cuts(8, 1, 262144, 2, 0, 3)},
			{below: 32, cuts: cuts(262144, 2, 0, 3)},
			{below: 64, cuts: cuts(64, 1, 2048, 2, 524288, 4, 0, 3)},
			{below: 128, cuts: cuts(256, 1, 512, 2, 2048, 4, 4096, 2, 0, 4)},
			{below: 256, cuts: cuts(256, 1, 512, 2, 0, 4)},
			{below: 512, cuts: cuts(256, 1, 1024, 2, 0, 4)},
			{below: 1024, cuts: cuts(512, 1, 2048, 2, 8192, 4, 16384, 2, 0, 4)},
			{below: 2048, cuts: cuts(512, 1, 4096, 2, 16384, 4, 32768, 2, 0, 4)},
			{below: 4096, cuts: cuts(512, 1, 4096, 2, 0, 4)},
			{cuts: cuts(1024, 1, 8192, 2, 0, 4)},
		}},
}

// ompiChoose applies Open MPI's fixed rule for op to a collective of the given bytes.
func ompiChoose(op Op, n int, bytes float64) Choice {
	if op == ReduceScatter {
		return ompiPick(op, n, bytes*float64(n))
	}
	return ompiPick(op, n, bytes)
}

// ompiPick applies Open MPI's fixed rule for op to its total_dsize.
func ompiPick(op Op, n int, size float64) Choice {
	rule := ompiRules[op]
	lo := 0 // the band's lower bound on n
	for _, band := range rule.bands {
		if band.only != 0 && n != band.only {
			continue
		}
		if band.only == 0 && band.below != 0 && n >= band.below {
			lo = band.below
			continue
		}
		var ranks string
		switch {
		case band.only != 0:
			ranks = fmt.Sprintf("n = %d", band.only)
		case band.below == 0:
			ranks = fmt.Sprintf("n ≥ %d", lo)
		case lo == 0:
			ranks = fmt.Sprintf("n < %d", band.below)
		default:
			ranks = fmt.Sprintf("%d ≤ n < %d", lo, band.below)
		}
		from := 0.0
		for _, c := range band.cuts {
			if c.below != 0 && size >= c.below {
				from = c.below
				continue
			}
			a := rule.algs[c.alg]
			what := ""
			if rule.size != "" {
				what = fmt.Sprintf(", %s of %.0f bytes (%s)", rule.size, size, interval("size", from, c.below, "<"))
			}
			return Choice{Algorithm: a.name, Rule: fmt.Sprintf("Open MPI 4.1.8 tuned fixed rule (coll_tuned_decision_fixed.c): %s among %d ranks (%s)%s → %s (%s, algorithm %d)",
				op, n, ranks, what, a.name, a.ompi, c.alg)}
		}
	}
	panic(fmt.Sprintf("schedule: Open MPI's %s rule has no branch for %d ranks and %g bytes", op, n, size))
}

// interval spells lo ≤ name, name cmp hi or both (0: no bound).
func interval(name string, lo, hi float64, cmp string) string {
	switch {
	case hi == 0 && lo == 0:
		return "any " + name
	case hi == 0:
		return fmt.Sprintf("%s ≥ %.0f", name, lo)
	case lo == 0:
		return fmt.Sprintf("%s %s %.0f", name, cmp, hi)
	}
	return fmt.Sprintf("%.0f ≤ %s %s %.0f", lo, name, cmp, hi)
}

// mpichCut is one leaf of MPICH's JSON tree: the key that tests the size ("…=any" for
// none) and the algorithm's function.
type mpichCut struct {
	key   string
	holds func(size float64) bool
	fn    string
	name  string
}

// mpichBranch is a communicator-size branch of MPICH's JSON tree.
type mpichBranch struct {
	key   string
	holds func(n int) bool
	cuts  []mpichCut
}

// mpichRule is MPICH's selection tree of one collective, with the size its keys test.
type mpichRule struct {
	size     string // avg_msg_size, total_msg_size or "" (no size test)
	branches []mpichBranch
}

func le(key string, bound float64, fn, name string) mpichCut {
	return mpichCut{fmt.Sprintf("%s<=%.0f", key, bound), func(s float64) bool { return s <= bound }, fn, name}
}
func lt(key string, bound float64, fn, name string) mpichCut {
	return mpichCut{fmt.Sprintf("%s<%.0f", key, bound), func(s float64) bool { return s < bound }, fn, name}
}
func anySize(key, fn, name string) mpichCut {
	return mpichCut{key + "=any", func(float64) bool { return true }, fn, name}
}

var (
	commLess8 = mpichBranch{key: "comm_size<8", holds: func(n int) bool { return n < 8 }}
	commPow2  = mpichBranch{key: "comm_size=pow2", holds: isPow2}
	commAny   = mpichBranch{key: "comm_size=any", holds: func(int) bool { return true }}
)

// with is a branch with its leaves.
func (b mpichBranch) with(cuts ...mpichCut) mpichBranch { b.cuts = cuts; return b }

// mpichRules transcribes the intra-communicator branches of MPICH 4.3.2's
// maint/tuning/coll/mpir/generic.json (not in place, commutative operation, flat hierarchy),
// whose thresholds are the CVARs' defaults: MPIR_CVAR_ALLTOALL_SHORT_MSG_SIZE = 256,
// MPIR_CVAR_ALLTOALL_MEDIUM_MSG_SIZE = 32768, MPIR_CVAR_BCAST_SHORT_MSG_SIZE = 12288,
// MPIR_CVAR_BCAST_LONG_MSG_SIZE = 524288, MPIR_CVAR_BCAST_MIN_PROCS = 8 and the allgather's
// 81920 and 524288.
var mpichRules = map[Op]mpichRule{
	Alltoall: {size: "avg_msg_size", branches: []mpichBranch{
		commLess8.with(le("avg_msg_size", 32768, "MPIR_Alltoall_intra_scattered", "scattered"),
			anySize("avg_msg_size", "MPIR_Alltoall_intra_pairwise", "pairwise")),
		commAny.with(le("avg_msg_size", 256, "MPIR_Alltoall_intra_brucks", "bruck"),
			le("avg_msg_size", 32768, "MPIR_Alltoall_intra_scattered", "scattered"),
			anySize("avg_msg_size", "MPIR_Alltoall_intra_pairwise", "pairwise")),
	}},
	Alltoallv: {branches: []mpichBranch{commAny.with(anySize("", "MPIR_Alltoallv_intra_scattered", "scattered"))}},
	Allgather: {size: "total_msg_size", branches: []mpichBranch{
		commPow2.with(lt("total_msg_size", 524288, "MPIR_Allgather_intra_recursive_doubling", "recursive-doubling"),
			anySize("total_msg_size", "MPIR_Allgather_intra_ring", "ring")),
		commAny.with(lt("total_msg_size", 81920, "MPIR_Allgather_intra_brucks", "bruck"),
			anySize("total_msg_size", "MPIR_Allgather_intra_ring", "ring")),
	}},
	Bcast: {size: "avg_msg_size", branches: []mpichBranch{
		commLess8.with(anySize("avg_msg_size", "MPIR_Bcast_intra_binomial", "binomial")),
		commPow2.with(le("avg_msg_size", 12288, "MPIR_Bcast_intra_binomial", "binomial"),
			le("avg_msg_size", 524288, "MPIR_Bcast_intra_scatter_recursive_doubling_allgather", "scatter-allgather"),
			anySize("avg_msg_size", "MPIR_Bcast_intra_scatter_ring_allgather", "scatter-ring-allgather")),
		commAny.with(le("avg_msg_size", 12288, "MPIR_Bcast_intra_binomial", "binomial"),
			anySize("avg_msg_size", "MPIR_Bcast_intra_scatter_ring_allgather", "scatter-ring-allgather")),
	}},
	Gather:  {branches: []mpichBranch{commAny.with(anySize("", "MPIR_Gather_intra_binomial", "binomial"))}},
	Scatter: {branches: []mpichBranch{commAny.with(anySize("", "MPIR_Scatter_intra_binomial", "binomial"))}},
	ReduceScatter: {size: "total_msg_size", branches: []mpichBranch{
		commAny.with(lt("total_msg_size", 524288, "MPIR_Reduce_scatter_intra_recursive_halving", "recursive-halving"),
			anySize("total_msg_size", "MPIR_Reduce_scatter_intra_pairwise", "pairwise")),
	}},
}

// mpichChoose walks MPICH's selection tree for op. MPICH's pairwise all-to-all exchanges
// with rank XOR s on a power-of-two number of ranks: pairwise-xor.
func mpichChoose(op Op, n int, bytes float64) Choice {
	rule := mpichRules[op]
	size := bytes
	if rule.size == "total_msg_size" {
		size = bytes * float64(n)
	}
	for _, br := range rule.branches {
		if !br.holds(n) {
			continue
		}
		for _, c := range br.cuts {
			if !c.holds(size) {
				continue
			}
			name := c.name
			if op == Alltoall && name == "pairwise" && isPow2(n) {
				name = "pairwise-xor"
			}
			keys := br.key
			if rule.size != "" {
				keys = fmt.Sprintf("%s, %s with %s = %.0f", br.key, c.key, rule.size, size)
			}
			return Choice{Algorithm: name, Rule: fmt.Sprintf("MPICH 4.3.2 default selection (maint/tuning/coll/mpir/generic.json): %s among %d ranks (%s) → %s (%s)",
				op, n, keys, name, c.fn)}
		}
	}
	panic(fmt.Sprintf("schedule: MPICH's %s rule has no branch for %d ranks and %g bytes", op, n, bytes))
}
