package schedule

import "fmt"

// builder places an algorithm's transfers into rounds. An algorithm works in phases: within a
// phase it places each transfer at a round counted from the phase's start (add; a tree
// places a child's receive one round after its parent's), and step starts the next phase
// after every round placed so far. A transfer of zero bytes is left out, and finish removes
// the rounds left empty.
type builder struct {
	n      int
	base   int
	rounds []Round
	// trace, when set, records the pieces of data each transfer carries: pieces[r][i] belongs
	// to rounds[r][i]. The tests replay them to check that every piece reaches the ranks the
	// collective promises it to, from ranks that hold it.
	trace  bool
	pieces [][][]int32
	// slices holds the size of each piece of a broadcast, when tracing: the broadcasts cut
	// the message as their algorithm does.
	slices []float64
	kept   bool // whether the last add kept its transfer
	lastR  int  // the round of the last transfer kept
}

func newBuilder(n int, trace bool) *builder { return &builder{n: n, trace: trace} }

// add places a transfer of bytes from rank src to rank dst in round k of the current phase,
// unless it has no byte; it reports whether the transfer was kept.
func (b *builder) add(k, src, dst int, bytes float64) bool {
	b.kept = bytes > 0
	if !b.kept {
		return false
	}
	if src == dst || src < 0 || dst < 0 || src >= b.n || dst >= b.n {
		panic(fmt.Sprintf("schedule: a transfer between ranks %d and %d of %d", src, dst, b.n))
	}
	r := b.base + k
	for len(b.rounds) <= r {
		b.rounds = append(b.rounds, nil)
		if b.trace {
			b.pieces = append(b.pieces, nil)
		}
	}
	b.rounds[r] = append(b.rounds[r], Transfer{Src: src, Dst: dst, Bytes: bytes})
	b.lastR = r
	if b.trace {
		b.pieces[r] = append(b.pieces[r], nil)
	}
	return true
}

// carry records the pieces the transfer added last carries, when tracing and when it was
// kept.
func (b *builder) carry(ids []int32) {
	if b.trace && b.kept {
		b.pieces[b.lastR][len(b.pieces[b.lastR])-1] = ids
	}
}

// step starts a new phase after every round placed so far.
func (b *builder) step() { b.base = len(b.rounds) }

// finish returns the rounds that hold transfers, in order.
func (b *builder) finish() []Round {
	out := b.rounds[:0]
	var pieces [][][]int32
	for r, round := range b.rounds {
		if len(round) > 0 {
			out = append(out, round)
			if b.trace {
				pieces = append(pieces, b.pieces[r])
			}
		}
	}
	b.pieces = pieces
	return out
}
