package datasets

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/commcal/commcal/experiments"
)

// The saturation test of SimGrid's platform-calibration (src/saturation/alltoall_loadtest.c
// of github.com/Ezibenroc/platform-calibration) loads a cluster's network with more and more
// concurrent 4 MB messages. It runs on P ranks, half = ⌊P/2⌋ of them on each side, and four
// tests one after the other, each written by rank 0 to its own file. What follows is the
// program's behaviour as its source gives it, and how each file becomes rows.
//
// The files. Every rank prints one line per timed call into a buffer of its own,
// "rank,op,size,start_ms,duration_ms" (printf "%d,%s,%d,%f,%e"): size is the call's count of
// MPI_CHAR, 4,000,000 bytes; start_ms is the call's start on the rank's own clock, in ms since
// the rank read gettimeofday just after MPI_Init; duration_ms is the call's duration in ms
// (both with 1 µs resolution). At the end of a test MPI_Gatherv concatenates the buffers in
// rank order into load_send.csv, load_sendrecv_same.csv, load_sendrecv_diff.csv or
// load_alltoall.csv: a file is rank 0's rows, then rank 1's, …, each rank's in the order of
// its calls. No header; clocks are per rank, so starts compare only within a rank, where each
// call starts after the previous one ended.
//
// The steps. Each test runs steps x = 0 … half−1 (k = x+1), separated by barriers:
//   - send: ranks r ≤ x call MPI_Send to rank r+half, ranks half … half+x MPI_Recv from rank
//     r−half (logged as "MPI_Send" too): k disjoint sender→receiver pairs, NB_RUNS (10) runs
//     back to back with no barrier between them. Rank r < half takes part in steps x ≥ r,
//     rank half+j in steps x ≥ j; its rows are its steps in order, the runs of each in order.
//   - sendrecv_same: the same ranks and runs, each calling MPI_Sendrecv with its one peer: k
//     same-peer exchanges, 2k flows.
//   - sendrecv_diff: odd x only (k = 2, 4, …): MPI_Sendrecv that sends to one peer and
//     receives from another, around cycles of four ranks 2c → half+2c → 2c+1 → half+2c+1 → 2c:
//     k/2 cycles, 2k flows. With half odd, ranks half−1 and 2·half−1 never take part.
//   - alltoall: 3 runs of MPI_Alltoall among ranks 0 … 2x+1, in a communicator that
//     MPI_Comm_create (collective over every rank) makes before each run; the count is per
//     destination, so each rank sends a 4,000,000-byte block to every other.
//
// The step and run of a row follow from its place in its rank's block: row i of rank r is
// run i mod R of r's (i / R)-th step. R, and half (from the ranks that log rows), are read
// from the file and checked: every rank has R rows per step it takes part in.
//
// Completion times. 4 MB is far above the eager limits of MPI libraries over TCP (MPICH's
// ch3: 128 KiB; Open MPI's TCP BTL: 64 KiB), so a send is rendezvous: its data flow once the
// receive is posted, the receiver's MPI_Recv returns when the last byte has arrived, and the
// sender's MPI_Send once its last byte is handed to TCP, which can be earlier. A flow's time
// is therefore its receiving rank's duration, from its call to the arrival. In the miriel
// logs the receiver's and the sender's durations agree to 2 µs in median after a step's first
// run (every run starts as the previous one ends, both ends in step); in a step's first run
// the receiver's is 0.4–0.8 ms longer (median 0.64 ms, of 6–21 ms), once 10.7 ms (k = 1).
// In the plafrim logs: 0.4–0.8 ms longer in the first run, within 0.16 ms in median after.
// A step's first run can thus count a receiver's wait for its sender after the barrier; it
// is kept, as the program measured it. In an exchange each rank's call returns when its
// receive has completed and its send has been handed over; a flow's time is again its
// receiver's duration. An all-to-all is complete when its slowest rank is: a run's time is
// the longest duration of its ranks (as IMB's t_max).
//
// What each file becomes (t_start_s 0; one repetition per run, numbered across the ingest):
//   - send: pattern "saturation/send/k=K": flow f from rank f to rank f+half; fair_inter when
//     --ranks puts the pairs between distinct nodes, fair_intra when every pair joins the same
//     two nodes (satPlace).
//   - sendrecv_same: "saturation/sendrecv_same/k=K": flows rank f → f+half, then f+half → f.
//     The file's smallest k is exchange_calibration and the others exchange (held out), as a
//     nightly catalogue measures one exchange to calibrate and keeps the others to judge the
//     model; --role puts every pattern of a file in one role.
//   - sendrecv_diff: "saturation/sendrecv_diff/k=K", a flow per sending rank (0 … k−1, then
//     half … half+k−1); the smallest k (2) is cycle_calibration, the others cycle.
//   - alltoall: a collectives row per run: op alltoall, procs 2k, root rank 0's node, bytes
//     per block, seconds the slowest rank's duration.
//
// Which test a file holds comes from its content: the operation, and for MPI_Sendrecv the
// ranks' steps (in sendrecv_same rank 1 joins a step after rank 0, in sendrecv_diff with it).
// A file named load_NAME.csv after another test is read as its content says, with a note.
// The file does not name hosts: --ranks gives the node of each rank, and must place them as
// the test means them (satPlace: textReader.place's checks on the largest step's ranks).

// satTest is one of the saturation program's four tests.
type satTest int

const (
	satSend satTest = iota
	satSame
	satDiff
	satAlltoall
)

// name is the test's name in the program's file names (load_NAME.csv) and in pattern IDs.
func (t satTest) name() string {
	return [...]string{"send", "sendrecv_same", "sendrecv_diff", "alltoall"}[t]
}

// satOps are the operations the program logs, and the tests they can be.
var satOps = map[string][]satTest{
	"MPI_Send":     {satSend},
	"MPI_Sendrecv": {satSame, satDiff},
	"MPI_Alltoall": {satAlltoall},
}

// steps lists the steps x of the test on 2·half ranks, in the order they run.
func (t satTest) steps(half int) []int {
	var xs []int
	for x := range half {
		if t != satDiff || x%2 == 1 {
			xs = append(xs, x)
		}
	}
	return xs
}

// first returns the index in steps(half) of the first step rank r takes part in, or
// len(steps) when it takes part in none; a rank, once in, stays in every later step. Rank
// r < half joins at x = r, rank half+j at x = j (sendrecv_diff: at the first odd x from
// there), and an all-to-all's rank r at the first x with r < 2(x+1).
func (t satTest) first(r, half int) int {
	var x0 int
	switch {
	case t == satAlltoall:
		x0 = r / 2
	case r < half:
		x0 = r
	case r < 2*half:
		x0 = r - half
	default:
		x0 = half
	}
	if t == satDiff {
		return min(x0/2, half/2)
	}
	return min(x0, half)
}

// peer returns the rank that rank r sends to (send, sendrecv_same, sendrecv_diff).
func (t satTest) peer(r, half int) int {
	switch {
	case r < half:
		return r + half
	case t == satDiff && (r-half)%2 == 0:
		return r - half + 1
	case t == satDiff:
		return r - half - 1
	}
	return r - half
}

// satRow is one logged call.
type satRow struct {
	line  int64
	rank  int
	size  int64
	start float64 // ms
	dur   float64 // ms
}

// satBlock is the rows of one rank, in file order.
type satBlock struct {
	rank int
	rows []satRow
}

// satColumns name the fields of a line, for messages.
var satColumns = [5]string{"rank", "op", "size", "start_ms", "duration_ms"}

// maxSatRank bounds a rank number: a million ranks, beyond any MPI run that logs its calls
// into a file of one line each.
const maxSatRank = 1 << 20

// readSaturation reads one file of the saturation test (see above).
func readSaturation(r *textReader, lines []textLine) (*textOut, error) {
	o := newTextOut("saturation")
	op, blocks, err := readSatRows(r, lines)
	if err != nil {
		return nil, err
	}
	test, half, runs, err := placeSat(r, op, blocks)
	if err != nil {
		return nil, err
	}
	last := blocks[len(blocks)-1].rank
	nodes, err := r.rankNodes("saturation", last+1)
	if err != nil {
		return nil, err
	}
	steps := test.steps(half)
	pairsExp, err := satPlace(r, test, half, steps[len(steps)-1]+1, nodes)
	if err != nil {
		return nil, err
	}
	byRank := map[int]*satBlock{}
	for i := range blocks {
		byRank[blocks[i].rank] = &blocks[i]
	}
	// row returns rank rk's row of run i of a step (its index in steps).
	row := func(rk, step, i int) satRow {
		return byRank[rk].rows[(step-test.first(rk, half))*runs+i]
	}
	size := blocks[0].rows[0].size
	for s, x := range steps {
		k := x + 1
		for i := range runs {
			if test == satAlltoall {
				slow := row(0, s, i)
				for rk := 1; rk < 2*k; rk++ {
					if c := row(rk, s, i); c.dur > slow.dur {
						slow = c
					}
				}
				r.collective(o, slow.line, "alltoall", nodes[0], int64(2*k), size, slow.dur/1e3)
				continue
			}
			exp := satExperiment(test, s == 0, pairsExp)
			id := o.patternID(fmt.Sprintf("%s/k=%d", test.name(), k))
			var senders []int
			for f := range k {
				senders = append(senders, f)
			}
			if test != satSend {
				for f := range k {
					senders = append(senders, half+f)
				}
			}
			for f, from := range senders {
				to := test.peer(from, half)
				c := row(to, s, i)
				o.transfers = append(o.transfers, Transfer{Cluster: r.cl.Name(), Experiment: exp, PatternID: id, FlowID: int64(f),
					Src: nodes[from], Dst: nodes[to], Bytes: size, TEnd: c.dur / 1e3})
				o.lines[TransfersTable] = append(o.lines[TransfersTable], c.line)
			}
		}
	}
	satNotes(o, r.path, test, half, runs, steps, size, pairsExp)
	return o, nil
}

// satPlace checks that the ranks of a test's largest step, k, are placed as the test means
// them (textReader.place), and returns the experiment of the send test's pairs: fair_intra when
// every pair joins the same two nodes, fair_inter when the pairs join distinct nodes. A
// smaller step's ranks are a subset of the largest's, placed alike, so the check holds for
// every step and the send test's patterns are one experiment.
func satPlace(r *textReader, test satTest, half, k int, nodes []string) (string, error) {
	var d design
	var groups [][]int
	what := fmt.Sprintf("saturation %s at k = %d", test.name(), k)
	switch test {
	case satSend, satSame:
		d, what = designPairs, fmt.Sprintf("%s (rank f sends to rank f + %d)", what, half)
		if test == satSame {
			d, what = designExchanges, fmt.Sprintf("saturation %s at k = %d (ranks f and f + %d exchange)", test.name(), k, half)
		}
		for f := range k {
			groups = append(groups, []int{f, half + f})
		}
	case satDiff:
		d, what = designCycles, fmt.Sprintf("%s (cycles 2c → 2c + %d → 2c + 1 → 2c + %d → 2c)", what, half, half+1)
		for c := range k / 2 {
			groups = append(groups, []int{2 * c, half + 2*c, 2*c + 1, half + 2*c + 1})
		}
	case satAlltoall:
		d, groups = designCollective, [][]int{rankRange(0, 2*k)}
	}
	return r.place(0, what, d, groups, nodes)
}

// satExperiment is the experiment of a test's patterns: pairsExp for the send test's pairs
// (satPlace); the smallest k calibrates the exchanges and cycles, the others are held out.
func satExperiment(test satTest, smallest bool, pairsExp string) string {
	switch {
	case test == satSend:
		return pairsExp
	case test == satSame && smallest:
		return experiments.ExchangeCalibration
	case test == satSame:
		return experiments.Exchange
	case smallest:
		return experiments.CycleCalibration
	}
	return experiments.Cycle
}

// satNotes says what the rows of a file are.
func satNotes(o *textOut, path string, test satTest, half, runs int, steps []int, size int64, pairsExp string) {
	what := fmt.Sprintf("platform-calibration saturation test %s on %d ranks, %s, %d runs each, %d B per message",
		test.name(), 2*half, stepRange(steps), runs, size)
	roles := func(calibration, heldOut string) string {
		s := fmt.Sprintf("%s for %s", calibration, kRange(steps[:1]))
		if len(steps) > 1 {
			s += fmt.Sprintf(", %s (held out) for %s", heldOut, kRange(steps[1:]))
		}
		return s + " (--role overrides)"
	}
	const flowTime = "a flow's time is its receiver's duration, ms read as 10⁻³ s"
	switch test {
	case satSend:
		placed := map[string]string{experiments.FairIntra: "every pair between the same two nodes", experiments.FairInter: "pairs between distinct nodes"}[pairsExp]
		o.note("%s: each run is one repetition of %s pattern saturation/send/k=K (rank f sends to rank f+%d, f < k; --ranks: %s); %s (the receiver's MPI_Recv, logged as MPI_Send); runs follow one another without a barrier",
			what, pairsExp, half, placed, flowTime)
	case satSame:
		o.note("%s: each run is one repetition of pattern saturation/sendrecv_same/k=K (ranks f and f+%d exchange, f < k), %s; %s",
			what, half, roles(experiments.ExchangeCalibration, experiments.Exchange), flowTime)
	case satDiff:
		o.note("%s: each run is one repetition of pattern saturation/sendrecv_diff/k=K (cycles 2c → 2c+%d → 2c+1 → 2c+%d → 2c), %s; %s",
			what, half, half+1, roles(experiments.CycleCalibration, experiments.Cycle), flowTime)
	case satAlltoall:
		o.note("%s: each run is one collectives row (alltoall on 2k processes, bytes per block), its time the slowest rank's MPI_Alltoall, ms read as 10⁻³ s", what)
	}
	if m := satFileName.FindStringSubmatch(filepath.Base(path)); m != nil && m[1] != test.name() {
		o.note("named %s, but its rows are those of the %s test: read as %s", bounded(filepath.Base(path)), test.name(), test.name())
	}
}

// satFileName matches the names the program gives its files.
var satFileName = regexp.MustCompile(`^load_(send|sendrecv_same|sendrecv_diff|alltoall)\.csv$`)

// readSatRows reads every line into blocks of rows by rank and checks what holds line by
// line: five fields of the right types, one operation and one size throughout, each rank's
// rows together and ranks in increasing order, and each rank's calls one after the other.
func readSatRows(r *textReader, lines []textLine) (string, []satBlock, error) {
	var (
		op     string
		opLine int64
		blocks []satBlock
	)
	for _, l := range lines {
		if strings.TrimSpace(l.text) == "" {
			continue
		}
		if err := r.whole(l); err != nil {
			return "", nil, err
		}
		f := strings.Split(l.text, ",")
		if len(f) != len(satColumns) {
			return "", nil, r.errAt(l.n, "", ErrRaggedRow, "%d fields, want 5: the saturation test writes rank,op,size,start_ms,duration_ms for each call", len(f))
		}
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		rank, err := r.parseIndex(l.n, "rank", "a rank", f[0])
		if err != nil {
			return "", nil, err
		}
		if rank > maxSatRank {
			return "", nil, r.errAt(l.n, "rank", ErrWrongType, "rank %d, want at most %d", rank, maxSatRank)
		}
		switch {
		case satOps[f[1]] == nil:
			return "", nil, r.errAt(l.n, "op", ErrWrongType, "operation %s, want MPI_Send, MPI_Sendrecv or MPI_Alltoall (the calls the saturation test times)", quote(f[1]))
		case op == "":
			op, opLine = f[1], l.n
		case f[1] != op:
			return "", nil, r.errAt(l.n, "op", ErrWrongType, "operation %s after %s rows (line %d): each file of the saturation test holds one operation", bounded(f[1]), op, opLine)
		}
		c := satRow{line: l.n, rank: int(rank)}
		if c.size, err = r.parseSize(l.n, "size", f[2]); err != nil {
			return "", nil, err
		}
		if c.start, err = r.parseFloat(l.n, "start_ms", f[3]); err != nil {
			return "", nil, err
		}
		if c.start < 0 {
			return "", nil, r.errAt(l.n, "start_ms", ErrNegative, "start_ms %s, want ≥ 0 (ms since the rank's start)", bounded(f[3]))
		}
		if c.dur, err = r.parsePositive(l.n, "duration_ms", "duration in ms", f[4]); err != nil {
			return "", nil, err
		}
		if err := satAppend(r, &blocks, c); err != nil {
			return "", nil, err
		}
	}
	if len(blocks) == 0 {
		return "", nil, inputErr(Location{File: r.path}, "", ErrEmptyFile, "no rows")
	}
	return op, blocks, nil
}

// satAppend adds a row to its rank's block, checking it against the rows before. Ranks only
// increase from block to block, so a rank below the last block's is the only one seen
// before.
func satAppend(r *textReader, blocks *[]satBlock, c satRow) error {
	bs := *blocks
	if len(bs) > 0 {
		b := &bs[len(bs)-1]
		first, prev := b.rows[0], b.rows[len(b.rows)-1]
		switch {
		case c.size != first.size:
			return r.errAt(c.line, "size", ErrWrongType, "size %d B, want %d B as on line %d: the saturation test sends one size throughout", c.size, first.size, first.line)
		case c.rank == b.rank && c.start < prev.start+prev.dur-(1e-6*prev.dur+1e-6):
			return r.errAt(c.line, "start_ms", ErrNotIncreasing,
				"rank %d's call starts at %s ms, before its previous call ended (line %d: %s + %s ms): a rank's calls run one after the other on its own clock",
				c.rank, formatFloat(c.start), prev.line, formatFloat(prev.start), formatFloat(prev.dur))
		case c.rank == b.rank:
			b.rows = append(b.rows, c)
			return nil
		case c.rank < b.rank:
			return r.errAt(c.line, "rank", ErrNotIncreasing, "rank %d after rank %d's rows (from line %d): the saturation test gathers each rank's rows together, in rank order",
				c.rank, b.rank, first.line)
		}
	}
	*blocks = append(bs, satBlock{rank: c.rank, rows: []satRow{c}})
	return nil
}

// placeSat finds the test a file holds, its half and its runs per step, from its operation and
// the ranks' rows. An MPI_Sendrecv file is whichever of the two exchange tests fits; when
// neither does, the error is that of the test its name (or else sendrecv_same) says.
func placeSat(r *textReader, op string, blocks []satBlock) (satTest, int, int, error) {
	tests := satOps[op]
	var firstErr error
	for _, t := range tests {
		half, runs, err := t.fit(r, blocks)
		if err == nil {
			return t, half, runs, nil
		}
		if firstErr == nil || strings.Contains(filepath.Base(r.path), t.name()) {
			firstErr = err
		}
	}
	return 0, 0, 0, firstErr
}

// fit checks that blocks are the rows of test t: the ranks that take part and R rows per step
// of each; it returns half and R.
func (t satTest) fit(r *textReader, blocks []satBlock) (int, int, error) {
	what := fmt.Sprintf("the %s test", t.name())
	ranks := make([]int, len(blocks))
	for i, b := range blocks {
		ranks[i] = b.rank
	}
	if ranks[0] != 0 {
		return 0, 0, r.errAt(blocks[0].rows[0].line, "rank", ErrCorrupt, "the rows start with rank %d: rank 0 takes part in every step of %s", ranks[0], what)
	}
	// half: the rank after the gap that sendrecv_diff leaves when half is odd, else half
	// the ranks.
	last := ranks[len(ranks)-1]
	half := (last + 1) / 2
	if t == satDiff {
		for i := 1; i < len(ranks); i++ {
			if ranks[i] != ranks[i-1]+1 {
				half = ranks[i]
				break
			}
		}
	}
	steps := t.steps(half)
	if len(steps) == 0 {
		return 0, 0, r.errAt(blocks[len(blocks)-1].rows[0].line, "rank", ErrCorrupt, "ranks 0–%d: %s needs a receiving half of ranks", last, what)
	}
	// The ranks that take part, against those that log rows.
	at := 0
	for rk := range max(2*half, last+1) {
		want := t.first(rk, half) < len(steps)
		has := at < len(blocks) && blocks[at].rank == rk
		switch {
		case want && !has:
			line := blocks[min(at, len(blocks)-1)].rows[0].line
			return 0, 0, r.errAt(line, "rank", ErrCorrupt, "rank %d has no rows: %s on %d ranks has it take part", rk, what, 2*half)
		case has && !want:
			return 0, 0, r.errAt(blocks[at].rows[0].line, "rank", ErrCorrupt, "rank %d has rows: %s on %d ranks has it take part in no step", rk, what, 2*half)
		case has:
			at++
		}
	}
	// Runs per step, from rank 0, which takes part in every step; then every rank's rows.
	n0 := len(blocks[0].rows)
	runs := n0 / len(steps)
	if runs == 0 || n0%len(steps) != 0 {
		return 0, 0, r.errAt(blocks[0].rows[n0-1].line, "rank", ErrCorrupt, "rank 0 has %d rows: %s on %d ranks has it take part in %d steps, each of the same number of runs",
			n0, what, 2*half, len(steps))
	}
	for _, b := range blocks {
		mine := steps[t.first(b.rank, half):]
		want := len(mine) * runs
		switch n := len(b.rows); {
		case n > want:
			return 0, 0, r.errAt(b.rows[want].line, "rank", ErrCorrupt, "rank %d has %d rows, want %d: %s on %d ranks (%d runs per step, from rank 0) has it take part in %s",
				b.rank, n, want, what, 2*half, runs, stepRange(mine))
		case n < want:
			return 0, 0, r.errAt(b.rows[n-1].line, "rank", ErrCorrupt, "rank %d has %d rows, want %d: %s on %d ranks (%d runs per step, from rank 0) has it take part in %s",
				b.rank, n, want, what, 2*half, runs, stepRange(mine))
		}
	}
	return half, runs, nil
}

// stepRange names steps by their k for a message: "k = 3–8 (6 steps)", "k = 2 (1 step)".
func stepRange(steps []int) string {
	if len(steps) == 1 {
		return kRange(steps) + " (1 step)"
	}
	return fmt.Sprintf("%s (%d steps)", kRange(steps), len(steps))
}

// kRange names steps by their first and last k: "k = 3–8", or "k = 2" for one step.
func kRange(steps []int) string {
	first, last := steps[0]+1, steps[len(steps)-1]+1
	if first == last {
		return fmt.Sprintf("k = %d", first)
	}
	return fmt.Sprintf("k = %d–%d", first, last)
}

// satLine matches a line of a saturation log: a rank, an MPI operation, a size and two
// numbers.
var satLine = regexp.MustCompile(`^\s*[0-9]+\s*,\s*MPI_[A-Za-z_]+\s*,\s*[0-9]+\s*,\s*[-+0-9.eE]+\s*,\s*[-+0-9.eE]+\s*$`)

// looksSaturation reports whether the head of a file is a saturation log: most of its first
// simgridHeadLines complete lines are "rank,MPI_op,size,start,duration". No other input has
// a number then an MPI operation: SimGrid's calibration files start with the operation, and
// commcal's CSV tables with a header.
func looksSaturation(head string) bool {
	ls := strings.Split(head, "\n")
	if len(ls) > 1 {
		ls = ls[:len(ls)-1] // cut, or empty after the last line end
	}
	var n, match int
	for _, l := range ls {
		l = strings.TrimPrefix(strings.TrimSuffix(l, "\r"), "\ufeff")
		if strings.TrimSpace(l) == "" {
			continue
		}
		if n++; satLine.MatchString(l) {
			match++
		}
		if n == simgridHeadLines {
			break
		}
	}
	return 2*match > n
}
