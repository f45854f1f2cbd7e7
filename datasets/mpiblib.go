package datasets

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// MPIBlib (Lastovetsky et al.'s MPI benchmarking library, also used by CPM) prints, after "#"
// lines describing the run ("#Processors" with a "#rank<TAB>host" line per process, "#Message
// set", "#Precision", and for a collective "#nodes", "#root", "#operation", "#timing"), a
// header "#msg time wtick reps ci" and one MPIB_result per message size: M (bytes), T (mean
// time in seconds), whether MPI_Wtick is below T, reps (repetitions until the confidence
// interval was small enough) and ci (the half-width of T's confidence interval, seconds).
//
// What it becomes:
//   - The point-to-point benchmark ("#p2p ... 0-1", two processes): T is a whole round trip of
//     M bytes each way, timed by rank 0; half of it is a one-way time: a p2p_sweep transfer
//     from rank 0 to rank 1. The nodes are --src/--dst, or the hosts of ranks 0 and 1 when
//     both are nodes of the cluster. With more than two processes the p2p benchmark runs
//     pairs in parallel and reports their summed size: refused.
//   - A collective benchmark whose operation is a scatter or a gather: a collectives row
//     (procs = #nodes, root: the host of rank #root if it is a node, else --src; seconds = T).
//     Two processes on one host of the #Processors list are refused (textReader.place): the
//     table counts one process per node.
//     Other operations (bcast, reduce, …) have no table: refused.
//
// A row whose wtick column is 0 was timed by a clock too coarse for it (MPI_Wtick ≥ T) and is
// refused. Every row is one repetition-0 row, a mean over its reps.
//
// Structure (mpib_output.c, the p2p and collective tools): the "#Processors" list names each
// process of the communicator measured once, by rank from 0; a collective's "#nodes" is the
// size of that communicator and "#root" one of its ranks, so they must agree with the list.
// One header, then the rows: MPIBlib measures sizes in increasing order (a fixed stride, or an
// adaptive set it keeps sorted and never measures twice), so the sizes must increase. A header
// without rows is a run that stopped before its first result.
func readMPIBlib(r *textReader, lines []textLine) (*textOut, error) {
	p := &mpibParser{r: r, o: newTextOut("MPIBlib"), root: -1}
	for _, l := range lines {
		text := strings.TrimSpace(l.text)
		if text == "" {
			continue
		}
		var err error
		if body, ok := strings.CutPrefix(text, "#"); ok {
			err = p.comment(l.n, strings.Fields(body))
		} else if err = r.whole(l); err == nil {
			err = p.row(l.n, text)
		}
		if err != nil {
			return nil, err
		}
	}
	return p.finish()
}

// mpibParser is what readMPIBlib has read so far: the run's description from the "#" lines
// and what the notes will say of the rows.
type mpibParser struct {
	r          *textReader
	o          *textOut
	hosts      []string // the host of each rank, from the "#Processors" list
	hostsLine  int64    // the line of "#Processors"
	inHosts    bool
	header     int64 // the line of "#msg time wtick reps ci"
	rows       int
	sizes      *sizeOrder
	nodes      int64
	nodesLine  int64
	root       int64
	rootLine   int64
	op         string // a collective's "#operation"
	p2p        bool
	reps       counts
	ciMax      float64 // the widest confidence interval, relative to T
	src, dst   string
	collective string // the collective's root node, settled by its first row
}

// comment reads the fields of a "#" line: the host list, the benchmark ("#p2p …", or a
// collective's "#nodes", "#root" and "#operation") and the results' header.
func (p *mpibParser) comment(n int64, f []string) error {
	switch {
	case len(f) == 0:
		p.inHosts = false
	case f[0] == "Processors":
		p.inHosts, p.hostsLine = true, n
	case p.inHosts && f[0] == "rank":
	case p.inHosts && len(f) == 2 && isInt(f[0]):
		if f[0] != strconv.Itoa(len(p.hosts)) {
			return p.r.errAt(n, "rank", ErrCorrupt, "rank %s where the #Processors list (line %d) needs rank %d: MPIBlib lists each process once, in rank order", quote(f[0]), p.hostsLine, len(p.hosts))
		}
		p.hosts = append(p.hosts, f[1])
	case f[0] == "p2p" && len(f) > 1 && f[1] == "time":
		return p.r.errAt(n, "", ErrUnsupported, "an MPIBlib table of every pair at one message size: not read; run the p2p benchmark for one pair over a range of sizes")
	case strings.HasPrefix(f[0], "p2p"):
		p.p2p = true
	case f[0] == "nodes" && len(f) == 2:
		nodes, err := p.r.parseCount(n, "nodes", f[1])
		if err != nil {
			return err
		}
		p.nodes, p.nodesLine = nodes, n
	case f[0] == "root" && len(f) == 2:
		root, err := p.r.parseIndex(n, "root", "a rank", f[1])
		if err != nil {
			return err
		}
		p.root, p.rootLine = root, n
	case f[0] == "operation" && len(f) >= 2:
		p.op = f[1]
	case f[0] == "msg" && len(f) >= 2 && f[1] == "time":
		if p.header > 0 {
			return p.r.errAt(n, "", ErrCorrupt, `a second "#msg time wtick reps ci" header (line %d has the first): one MPIBlib run per file`, p.header)
		}
		p.header = n
		p.sizes = newSizeOrder(sizesIncrease, "", "MPIBlib measures its sizes in increasing order, each once")
	}
	return nil
}

// agree checks, before the first row, that the run's description holds together: #nodes is
// the number of processes listed, and #root one of them.
func (p *mpibParser) agree() error {
	if p.nodes > 0 && len(p.hosts) > 0 && p.nodes != int64(len(p.hosts)) {
		return p.r.errAt(p.nodesLine, "nodes", ErrCorrupt, "#nodes %d, but the #Processors list (line %d) names %d processes: MPIBlib prints the size of the communicator it measures in both",
			p.nodes, p.hostsLine, len(p.hosts))
	}
	if p.rootLine > 0 && p.nodes > 0 && p.root >= p.nodes {
		return p.r.errAt(p.rootLine, "root", ErrCorrupt, "#root %d is not a rank of the %d nodes (0 to %d)", p.root, p.nodes, p.nodes-1)
	}
	return nil
}

// row reads one MPIB_result (msg, time, wtick, reps, ci) and adds it as what the benchmark
// makes of it. A row timed by a clock too coarse for it is refused.
func (p *mpibParser) row(n int64, text string) error {
	if p.header == 0 {
		return p.r.errAt(n, "", ErrMissingColumn, `a data row before the "#msg time wtick reps ci" header`)
	}
	if p.rows == 0 {
		if err := p.agree(); err != nil {
			return err
		}
	}
	p.rows++
	f := strings.Fields(text)
	if len(f) != 5 {
		return p.r.errAt(n, "", ErrRaggedRow, "%d fields, want 5: msg, time, wtick, reps, ci", len(f))
	}
	size, err := p.r.parseSize(n, "msg", f[0])
	if err != nil {
		return err
	}
	if err := p.sizes.add(p.r, n, "msg", size); err != nil {
		return err
	}
	t, err := p.r.parsePositive(n, "time", "time in seconds", f[1])
	if err != nil {
		return err
	}
	if f[2] != "1" {
		return p.r.errAt(n, "wtick", ErrCorrupt, "wtick %s: the clock's resolution (MPI_Wtick) is not below the measured time, which is then meaningless", quote(f[2]))
	}
	if err := p.r.addCount(&p.reps, n, "reps", f[3]); err != nil {
		return err
	}
	ci, err := p.r.parseFloat(n, "ci", f[4])
	if err == nil && ci < 0 {
		err = p.r.errAt(n, "ci", ErrNegative, "ci %s: a confidence interval's half-width is ≥ 0", quote(f[4]))
	}
	if err != nil {
		return err
	}
	p.ciMax = max(p.ciMax, ci/t)
	switch {
	case p.op != "":
		return p.addCollective(n, size, t)
	case p.p2p:
		return p.addP2P(n, size, t)
	}
	return p.r.errAt(n, "", ErrUnsupported, `MPIBlib results without "#p2p" or "#operation" lines: cannot tell what they measured`)
}

// addCollective adds a scatter or gather row of t seconds, rooted at the host of rank
// "#root" (or --src); other operations are refused.
func (p *mpibParser) addCollective(n, size int64, t float64) error {
	kind := mpibCollective(p.op)
	if kind == "" {
		return p.r.errAt(n, "", ErrUnsupported, "an MPIBlib benchmark of %s: no table holds it; commcal reads scatter and gather (collectives) and the p2p benchmark", quote(p.op))
	}
	if p.nodes < 2 {
		return p.r.errAt(n, "nodes", ErrMissingColumn, `a collective benchmark without "#nodes N" (N ≥ 2)`)
	}
	if p.collective == "" {
		if len(p.hosts) > 0 {
			if _, err := p.r.place(p.hostsLine, "an MPIBlib "+bounded(p.op)+" (#Processors)", designCollective, [][]int{rankRange(0, len(p.hosts))}, p.hosts); err != nil {
				return err
			}
		}
		p.collective = hostOr(p.hosts, p.root, p.r.src)
		if p.collective == "" || (p.r.src == "" && !p.r.hasNode(p.collective)) {
			return inputErr(Location{File: p.r.path}, "", ErrUnsupported, "an MPIBlib %s output whose root host %s is no node of cluster %s; give the root's node (--src)", bounded(p.op), quote(p.collective), p.r.cl.Name())
		}
	}
	p.r.collective(p.o, n, kind, p.collective, p.nodes, size, t)
	return nil
}

// addP2P adds a p2p_sweep transfer taking half the round trip t; a 0-byte row is left out,
// and a run over more than two processes is refused.
func (p *mpibParser) addP2P(n, size int64, t float64) error {
	if len(p.hosts) > 2 {
		return p.r.errAt(n, "", ErrUnsupported, "an MPIBlib p2p benchmark over %d processes: pairs run in parallel and the size is their sum; run it on two", len(p.hosts))
	}
	if size == 0 {
		return nil
	}
	var err error
	if p.src, p.dst, err = p.r.nodes("MPIBlib p2p", p.hosts); err != nil {
		return err
	}
	p.r.sweep(p.o, n, p.src, p.dst, size, t/2)
	return nil
}

// finish refuses an output without rows above 0 bytes and notes what the rows are.
func (p *mpibParser) finish() (*textOut, error) {
	o := p.o
	if p.header > 0 && p.rows == 0 {
		return nil, p.r.errNoRows(0, fmt.Sprintf("the MPIBlib table under the header of line %d", p.header))
	}
	if o.rows() == 0 {
		return nil, inputErr(Location{File: p.r.path}, "", ErrEmptyFile, "no result rows with a message size above 0")
	}
	if p.op != "" {
		o.note("%s %s: each row is MPIBlib's mean time T in seconds over %s repetitions (confidence interval up to ±%.3g%% of T), root %s", o.tool, bounded(p.op), p.reps, 100*p.ciMax, p.collective)
	} else {
		o.note("%s p2p: each row is half of MPIBlib's mean round trip T from %s to %s (one-way), over %s repetitions (confidence interval up to ±%.3g%% of T)", o.tool, p.src, p.dst, p.reps, 100*p.ciMax)
	}
	return o, nil
}

// mpibCollective names the collectives-table op of an MPIBlib operation ("MPI_Scatter",
// "Scatter_binomial", …), or "" (allgather and reduce-scatter are not gathers or scatters).
func mpibCollective(op string) string {
	l := strings.ToLower(op)
	switch {
	case strings.Contains(l, "allgather") || strings.Contains(l, "reduce"):
		return ""
	case strings.Contains(l, "scatter"):
		return "scatter"
	case strings.Contains(l, "gather"):
		return "gather"
	}
	return ""
}

// hostOr is the host of rank i, or def when --src gives it or the rank is not listed.
func hostOr(hosts []string, i int64, def string) string {
	if def != "" || i < 0 || i >= int64(len(hosts)) {
		return def
	}
	return hosts[i]
}

func isInt(s string) bool {
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil
}

var mpibHeader = regexp.MustCompile(`(?m)^#msg\s+time\s+wtick\s+reps\s+ci`)

// looksMPIBlib reports whether the head of a file is an MPIBlib output.
func looksMPIBlib(head string) bool {
	return mpibHeader.MatchString(head) || strings.Contains(head, "#p2p adaptive benchmark") ||
		strings.Contains(head, "#Processors\n#rank")
}
