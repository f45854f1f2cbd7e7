package schedule

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/internal/badinput"
)

// Op is an MPI collective operation.
type Op string

// The collectives the package expands. Sizes are in bytes, as MPI counts them with MPI_BYTE:
//
//   - Alltoall: Bytes is the block each rank sends to each other rank.
//   - Alltoallv: Sizes[i][j] is what rank i sends to rank j (Bytes is not used).
//   - Allgather: Bytes is each rank's contribution.
//   - Bcast: Bytes is the message the root sends.
//   - Scatter, Gather: Bytes is the block of each rank.
//   - ReduceScatter: Bytes is the block of the result each rank keeps (equal blocks, as
//     MPI_Reduce_scatter_block; the vector reduced is n·Bytes long); the operation is taken
//     as commutative (MPI_SUM and the other predefined operations), and the time the
//     reductions compute is left out: only transfers are predicted.
const (
	Alltoall      Op = "alltoall"
	Alltoallv     Op = "alltoallv"
	Allgather     Op = "allgather"
	Bcast         Op = "bcast"
	Scatter       Op = "scatter"
	Gather        Op = "gather"
	ReduceScatter Op = "reduce_scatter"
)

// Ops lists the collectives the package expands.
func Ops() []Op {
	return []Op{Alltoall, Alltoallv, Allgather, Bcast, Scatter, Gather, ReduceScatter}
}

// rooted reports whether op has a root.
func (op Op) rooted() bool { return op == Bcast || op == Scatter || op == Gather }

// Collective is one call of a collective: what it moves and where its ranks run.
type Collective struct {
	Op Op
	// Ranks holds the node of each MPI rank, in rank order; ranks that share a node exchange
	// through shared memory, which no network model describes, so Predict leaves their
	// transfers out.
	Ranks []string
	// Root is the root rank of Bcast, Scatter and Gather (0 for the others).
	Root int
	// Bytes is the size the operation is called with (see Op).
	Bytes float64
	// Sizes is Alltoallv's matrix: Sizes[i][j] bytes from rank i to rank j, the diagonal
	// ignored (a library copies it in memory).
	Sizes [][]float64
}

// Transfer is one point-to-point message of a round, between ranks.
type Transfer struct {
	Src, Dst int
	Bytes    float64
}

// Round is the transfers that start together.
type Round []Transfer

// Schedule is a collective expanded into the rounds of an algorithm.
type Schedule struct {
	Collective
	// Algorithm names the algorithm expanded (see Algorithms).
	Algorithm string
	// Rule says why this algorithm: named by the user, or the library rule that picked it,
	// and any substitution the library makes (recursive doubling on a number of ranks that is
	// not a power of two runs Bruck's algorithm in Open MPI, for instance).
	Rule string
	// Rounds holds the rounds in the order they run; rounds that would move no byte are left
	// out (zero-byte messages carry only a latency, which no model here prices).
	Rounds []Round
}

// Transfers counts the transfers of every round.
func (s *Schedule) Transfers() int {
	n := 0
	for _, r := range s.Rounds {
		n += len(r)
	}
	return n
}

// MaxTransfers bounds the transfers of one schedule, counted from the algorithm's formula
// before any is made: the ceiling of a predicted pattern (contention.MaxPatternTransfers),
// which a pairwise all-to-all reaches at 3,163 ranks.
const MaxTransfers = contention.MaxPatternTransfers

// MaxRanks bounds the ranks of a collective: 2¹⁸, where the logarithmic algorithms reach
// MaxTransfers.
const MaxRanks = 1 << 18

// algorithm is one entry of the catalogue.
type algorithm struct {
	name string
	doc  string // what its rounds send
	src  string // the library functions it follows
	// substitute names the algorithm a library runs instead for c, and says why; "" when this
	// one runs.
	substitute func(c *Collective) (alg, why string)
	// transfers bounds its transfers among n ranks.
	transfers func(n float64) float64
	build     func(b *builder, c *Collective)
}

// quadratic and logarithmic bound the transfers of the algorithms whose every rank sends to
// every other, and of those whose every rank sends once per doubling step (with the
// non-power-of-two steps added).
func quadratic(n float64) float64   { return n * n }
func logarithmic(n float64) float64 { return 2 * n * (math.Ceil(math.Log2(n)) + 2) }

// catalogue lists every algorithm of every collective, in the order Algorithms gives them.
var catalogue = map[Op][]algorithm{
	Alltoall:      alltoallAlgorithms,
	Alltoallv:     alltoallvAlgorithms,
	Allgather:     allgatherAlgorithms,
	Bcast:         bcastAlgorithms,
	Scatter:       scatterAlgorithms,
	Gather:        gatherAlgorithms,
	ReduceScatter: reduceScatterAlgorithms,
}

// Algorithms lists the names of the algorithms that expand op.
func Algorithms(op Op) []string {
	var names []string
	for _, a := range catalogue[op] {
		names = append(names, a.name)
	}
	return names
}

// Describe says what an algorithm of op sends, round by round, and which library functions
// it follows.
func Describe(op Op, name string) (doc, source string, ok bool) {
	a, ok := lookup(op, name)
	return a.doc, a.src, ok
}

func lookup(op Op, name string) (algorithm, bool) {
	for _, a := range catalogue[op] {
		if a.name == name {
			return a, true
		}
	}
	return algorithm{}, false
}

// New expands c into the rounds of the algorithm named alg (see Algorithms). Mistakes in c
// (fewer than two ranks, a root outside them, a size that is not a positive number of bytes,
// a matrix of the wrong shape, an algorithm c's op does not have, a schedule of more than
// MaxTransfers transfers) are bad input.
func New(c Collective, alg string) (*Schedule, error) {
	return expand(c, alg, "named by the user")
}

// Auto expands c into the rounds of the algorithm lib's default rules choose (Choose), and
// the schedule's Rule quotes the rule.
func Auto(c Collective, lib Library) (*Schedule, error) {
	if err := check(&c); err != nil {
		return nil, err
	}
	if lib == MPICH && c.Op == Bcast && sharesNodes(c.Ranks) {
		return nil, badinput.Errorf("", "schedule: MPICH broadcasts among several ranks per node node-aware (within nodes, then across), which its flat rules do not describe; name an algorithm (alg=NAME) for a broadcast with ppn > 1")
	}
	ch, err := Choose(lib, c.Op, len(c.Ranks), c.Bytes)
	if err != nil {
		return nil, err
	}
	return expand(c, ch.Algorithm, ch.Rule)
}

// sharesNodes says whether two ranks run on one node.
func sharesNodes(ranks []string) bool {
	seen := make(map[string]bool, len(ranks))
	for _, n := range ranks {
		if seen[n] {
			return true
		}
		seen[n] = true
	}
	return false
}

// expand builds c's schedule under alg, following the substitutions the libraries make.
func expand(c Collective, alg, rule string) (*Schedule, error) {
	s, _, err := expandWith(c, alg, rule, false)
	return s, err
}

// expandWith is expand, with the builder (which traces the pieces each transfer carries when
// trace is set).
func expandWith(c Collective, alg, rule string, trace bool) (*Schedule, *builder, error) {
	if err := check(&c); err != nil {
		return nil, nil, err
	}
	a, ok := lookup(c.Op, alg)
	if !ok {
		return nil, nil, badinput.Errorf("", "schedule: %s has no algorithm %s; want one of %s", c.Op, badinput.Quote(alg), strings.Join(Algorithms(c.Op), ", "))
	}
	for seen := []string{alg}; a.substitute != nil; {
		sub, why := a.substitute(&c)
		if sub == "" {
			break
		}
		if slices.Contains(seen, sub) {
			panic(fmt.Sprintf("schedule: %s substitutions loop: %v", c.Op, append(seen, sub)))
		}
		seen = append(seen, sub)
		rule += "; " + why
		a, _ = lookup(c.Op, sub)
	}
	if a.build == nil {
		return nil, nil, badinput.Errorf("", "schedule: %s %s is not expanded: %s", c.Op, a.name, a.doc)
	}
	n := len(c.Ranks)
	if t := a.transfers(float64(n)); t > MaxTransfers {
		return nil, nil, badinput.Errorf("", "schedule: %s %s among %d ranks makes up to %.4g transfers, want at most %d", c.Op, a.name, n, t, MaxTransfers)
	}
	b := newBuilder(n, trace)
	a.build(b, &c)
	return &Schedule{Collective: c, Algorithm: a.name, Rule: rule, Rounds: b.finish()}, b, nil
}

// check says what is wrong with c, as bad input.
func check(c *Collective) error {
	bad := func(format string, a ...any) error {
		return badinput.Errorf("", "schedule: %s: %s", c.Op, fmt.Sprintf(format, a...))
	}
	if _, ok := catalogue[c.Op]; !ok {
		names := make([]string, 0, len(catalogue))
		for _, op := range Ops() {
			names = append(names, string(op))
		}
		return badinput.Errorf("", "schedule: unknown collective %s; want one of %s", badinput.Quote(string(c.Op)), strings.Join(names, ", "))
	}
	n := len(c.Ranks)
	if n < 2 || n > MaxRanks {
		return bad("%d ranks, want 2 to %d", n, MaxRanks)
	}
	for r, node := range c.Ranks {
		if node == "" {
			return bad("rank %d has no node", r)
		}
	}
	if c.Op.rooted() {
		if c.Root < 0 || c.Root >= n {
			return bad("root %d outside the ranks 0 to %d", c.Root, n-1)
		}
	} else if c.Root != 0 {
		return bad("has no root, got root %d", c.Root)
	}
	if c.Op == Alltoallv {
		if len(c.Sizes) != n {
			return bad("%d rows of sizes for %d ranks", len(c.Sizes), n)
		}
		sends := false
		for i, row := range c.Sizes {
			if len(row) != n {
				return bad("row %d has %d sizes for %d ranks", i, len(row), n)
			}
			for j, b := range row {
				if !(b >= 0 && b <= contention.MaxTransferBytes) || b != math.Trunc(b) {
					return bad("rank %d sends %g bytes to rank %d, want a whole number from 0 to %d", i, b, j, int64(contention.MaxTransferBytes))
				}
				sends = sends || b > 0 && i != j
			}
		}
		if !sends {
			return bad("no rank sends to another")
		}
		return nil
	}
	if c.Sizes != nil {
		return bad("a size matrix is for alltoallv only")
	}
	if !(c.Bytes > 0) || c.Bytes != math.Trunc(c.Bytes) || c.Bytes*float64(n) > contention.MaxTransferBytes {
		return bad("%g bytes among %d ranks, want a positive whole number of bytes whose %d-fold is at most %d", c.Bytes, n, n, int64(contention.MaxTransferBytes))
	}
	return nil
}

// isPow2 reports whether n is a power of two.
func isPow2(n int) bool { return n > 0 && n&(n-1) == 0 }

// floorPow2 is the largest power of two at most n (n ≥ 1).
func floorPow2(n int) int {
	p := 1
	for p*2 <= n {
		p *= 2
	}
	return p
}
