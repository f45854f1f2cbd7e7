package schedule

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// replay checks a traced schedule's data flow: every transfer carries pieces its sender
// holds when the round starts, no rank receives a piece it already holds (but in a
// broadcast, whose scatter-allgather algorithms send ranks slices they passed through, and
// the root slices it started with, as the libraries do; and in a reduce-scatter, whose
// ranks left out of the reduction receive a result holding their own contribution), each transfer's
// bytes are what its pieces add up to, and at the end every rank holds what the collective
// promises it. It returns how many times each piece was sent.
func replay(t *testing.T, s *Schedule, b *builder) map[int32]int {
	t.Helper()
	n := len(s.Ranks)
	held := make([]map[int32]bool, n)
	for r := range held {
		held[r] = map[int32]bool{}
	}
	// size is a piece's bytes (alltoall, allgather, bcast, scatter, gather); a reduction's
	// transfer is as long as the distinct blocks it carries.
	size := func(id int32) float64 {
		switch s.Op {
		case Alltoallv:
			return s.Sizes[int(id)/n][int(id)%n]
		case Bcast:
			return b.slices[id]
		}
		return s.Bytes
	}
	switch s.Op {
	case Alltoall, Alltoallv, ReduceScatter:
		for i := range n {
			for j := range n {
				if i != j && (s.Op != Alltoallv || s.Sizes[i][j] > 0) || s.Op == ReduceScatter {
					held[i][int32(i*n+j)] = true
				}
			}
		}
	case Allgather, Gather:
		for i := range n {
			held[i][int32(i)] = true
		}
	case Scatter:
		for j := range n {
			held[s.Root][int32(j)] = true
		}
	case Bcast:
		total := 0.0
		for id, sz := range b.slices {
			total += sz
			if sz > 0 {
				held[s.Root][int32(id)] = true
			}
		}
		if total != s.Bytes {
			t.Fatalf("the slices add up to %g bytes of a %g-byte message", total, s.Bytes)
		}
	}
	sent := map[int32]int{}
	for r, round := range s.Rounds {
		var arrivals []func()
		for i, tr := range round {
			ids := b.pieces[r][i]
			if len(ids) == 0 {
				t.Fatalf("round %d, transfer %d→%d carries no piece", r+1, tr.Src, tr.Dst)
			}
			bytes := 0.0
			blocks := map[int]bool{}
			for _, id := range ids {
				if !held[tr.Src][id] {
					t.Fatalf("round %d: rank %d sends piece %d to rank %d, which it does not hold", r+1, tr.Src, id, tr.Dst)
				}
				if held[tr.Dst][id] && s.Op != Bcast && s.Op != ReduceScatter {
					t.Fatalf("round %d: rank %d receives piece %d from rank %d, which it already holds", r+1, tr.Dst, id, tr.Src)
				}
				sent[id]++
				if s.Op == ReduceScatter {
					blocks[int(id)%n] = true
				} else {
					bytes += size(id)
				}
			}
			if s.Op == ReduceScatter {
				bytes = float64(len(blocks)) * s.Bytes
			}
			if bytes != tr.Bytes {
				t.Fatalf("round %d: transfer %d→%d of %g bytes carries %g bytes of pieces %v", r+1, tr.Src, tr.Dst, tr.Bytes, bytes, ids)
			}
			arrivals = append(arrivals, func() {
				for _, id := range ids {
					held[tr.Dst][id] = true
				}
			})
		}
		for _, arrive := range arrivals {
			arrive()
		}
	}
	missing := func(r int, id int32) {
		t.Helper()
		if !held[r][id] {
			t.Fatalf("rank %d ends without piece %d", r, id)
		}
	}
	for r := range n {
		switch s.Op {
		case Alltoall, ReduceScatter:
			for i := range n {
				if i != r || s.Op == ReduceScatter {
					missing(r, int32(i*n+r))
				}
			}
		case Alltoallv:
			for i := range n {
				if s.Sizes[i][r] > 0 && i != r {
					missing(r, int32(i*n+r))
				}
			}
		case Allgather:
			for i := range n {
				missing(r, int32(i))
			}
		case Bcast:
			for id, sz := range b.slices {
				if sz > 0 {
					missing(r, int32(id))
				}
			}
		case Scatter:
			missing(r, int32(r))
		case Gather:
			missing(s.Root, int32(r))
		}
	}
	return sent
}

// traced expands c under alg with a tracing builder.
func traced(t *testing.T, c Collective, alg string) (*Schedule, *builder) {
	t.Helper()
	s, b, err := expandWith(c, alg, "test", true)
	if err != nil {
		t.Fatal(err)
	}
	return s, b
}

// nodes is n ranks, one per node.
func nodes(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("n%d", i)
	}
	return out
}

// Every algorithm of every collective moves its data where the collective promises, from
// ranks that hold it, with the bytes the pieces add up to, for 2 to 17 ranks and a few
// larger counts (powers of two and not), roots at both ends, sizes that divide evenly and
// sizes that do not (slices of a broadcast left empty), and random Alltoallv matrices with
// zeros.
func TestEveryAlgorithmDelivers(t *testing.T) {
	counts := []int{2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 24, 31, 32, 33, 40, 64, 65}
	rng := rand.New(rand.NewPCG(37, 1))
	for _, op := range Ops() {
		for _, alg := range Algorithms(op) {
			if a, _ := lookup(op, alg); a.build == nil {
				continue
			}
			for _, n := range counts {
				roots := []int{0}
				if op.rooted() {
					roots = append(roots, n-1)
				}
				for _, root := range roots {
					for _, bytes := range []float64{1000, 7, 1} {
						c := Collective{Op: op, Ranks: nodes(n), Root: root, Bytes: bytes}
						if op == Alltoallv {
							c.Bytes = 0
							c.Sizes = make([][]float64, n)
							for i := range c.Sizes {
								c.Sizes[i] = make([]float64, n)
								for j := range c.Sizes[i] {
									if rng.IntN(4) != 0 {
										c.Sizes[i][j] = float64(1 + rng.IntN(100))
									}
								}
							}
							c.Sizes[0][n-1] = 5
						}
						t.Run(fmt.Sprintf("%s/%s/n=%d/root=%d/bytes=%g", op, alg, n, root, bytes), func(t *testing.T) {
							s, b := traced(t, c, alg)
							replay(t, s, b)
						})
					}
				}
			}
		}
	}
}

// The direct all-to-alls send each block once, from its sender to its receiver; Bruck's
// algorithm forwards blocks through other ranks.
func TestDirectAlltoallsSendEveryBlockOnce(t *testing.T) {
	for _, alg := range []string{"linear", "pairwise", "pairwise-xor", "scattered"} {
		for _, n := range []int{4, 5, 8, 40} {
			s, b := traced(t, Collective{Op: Alltoall, Ranks: nodes(n), Bytes: 10}, alg)
			sent := replay(t, s, b)
			if len(sent) != n*(n-1) {
				t.Errorf("%s, n = %d: %d blocks sent, want %d", alg, n, len(sent), n*(n-1))
			}
			for id, k := range sent {
				if k != 1 {
					t.Errorf("%s, n = %d: block %d→%d sent %d times", alg, n, id/int32(n), id%int32(n), k)
				}
			}
			for r, round := range s.Rounds {
				for i, tr := range round {
					if id := b.pieces[r][i][0]; int(id) != tr.Src*n+tr.Dst {
						t.Fatalf("%s: transfer %d→%d carries block %d→%d", alg, tr.Src, tr.Dst, id/int32(n), id%int32(n))
					}
				}
			}
		}
	}
}
