package datasets

import (
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
//     Other operations (bcast, reduce, …) have no table: refused.
//
// A row whose wtick column is 0 was timed by a clock too coarse for it (MPI_Wtick ≥ T) and is
// refused. Every row is one repetition-0 row, a mean over its reps.
func readMPIBlib(r *textReader, lines []textLine) (*textOut, error) {
	o := newTextOut("MPIBlib")
	var (
		hosts      []string
		inHosts    bool
		header     int64
		nodes      int64
		root       = int64(-1)
		op         string
		p2p        bool
		reps       counts
		ciMax      float64
		src, dst   string
		collective string
	)
	for _, l := range lines {
		text := strings.TrimSpace(l.text)
		if text == "" {
			continue
		}
		if body, ok := strings.CutPrefix(text, "#"); ok {
			f := strings.Fields(body)
			switch {
			case len(f) == 0:
				inHosts = false
			case f[0] == "Processors":
				inHosts = true
			case inHosts && f[0] == "rank":
			case inHosts && len(f) == 2 && isInt(f[0]):
				hosts = append(hosts, f[1])
			case f[0] == "p2p" && len(f) > 1 && f[1] == "time":
				return nil, r.errAt(l.n, "", ErrUnsupported, "an MPIBlib table of every pair at one message size: not read; run the p2p benchmark for one pair over a range of sizes")
			case strings.HasPrefix(f[0], "p2p"):
				p2p = true
			case f[0] == "nodes" && len(f) == 2:
				n, err := r.parseCount(l.n, "nodes", f[1])
				if err != nil {
					return nil, err
				}
				nodes = n
			case f[0] == "root" && len(f) == 2:
				n, err := r.parseSize(l.n, "root", f[1])
				if err != nil {
					return nil, err
				}
				root = n
			case f[0] == "operation" && len(f) >= 2:
				op = f[1]
			case f[0] == "msg" && len(f) >= 2 && f[1] == "time":
				header = l.n
			}
			continue
		}
		if header == 0 {
			return nil, r.errAt(l.n, "", ErrMissingColumn, `a data row before the "#msg time wtick reps ci" header`)
		}
		f := strings.Fields(text)
		if len(f) != 5 {
			return nil, r.errAt(l.n, "", ErrRaggedRow, "%d fields, want 5: msg, time, wtick, reps, ci", len(f))
		}
		size, err := r.parseSize(l.n, "msg", f[0])
		if err != nil {
			return nil, err
		}
		t, err := r.parsePositive(l.n, "time", "time in seconds", f[1])
		if err != nil {
			return nil, err
		}
		if f[2] != "1" {
			return nil, r.errAt(l.n, "wtick", ErrCorrupt, "wtick %s: the clock's resolution (MPI_Wtick) is not below the measured time, which is then meaningless", f[2])
		}
		n, err := r.parseCount(l.n, "reps", f[3])
		if err != nil {
			return nil, err
		}
		reps.add(n)
		ci, err := r.parseFloat(l.n, "ci", f[4])
		if err != nil {
			return nil, err
		}
		ciMax = max(ciMax, ci/t)
		switch {
		case op != "":
			kind := mpibCollective(op)
			if kind == "" {
				return nil, r.errAt(l.n, "", ErrUnsupported, "an MPIBlib benchmark of %s: no table holds it; commcal reads scatter and gather (collectives) and the p2p benchmark", op)
			}
			if nodes < 2 {
				return nil, r.errAt(l.n, "nodes", ErrMissingColumn, `a collective benchmark without "#nodes N" (N ≥ 2)`)
			}
			if collective == "" {
				collective = hostOr(hosts, root, r.src)
				if collective == "" || (r.src == "" && !r.hasNode(collective)) {
					return nil, inputErr(Location{File: r.path}, "", ErrUnsupported, "an MPIBlib %s output whose root host %s is no node of cluster %s; give the root's node (--src)", op, quote(collective), r.cl.Name())
				}
			}
			r.collective(o, l.n, kind, collective, nodes, size, t)
		case p2p:
			if len(hosts) > 2 {
				return nil, r.errAt(l.n, "", ErrUnsupported, "an MPIBlib p2p benchmark over %d processes: pairs run in parallel and the size is their sum; run it on two", len(hosts))
			}
			if size == 0 {
				continue
			}
			if src, dst, err = r.nodes("an MPIBlib p2p", hosts); err != nil {
				return nil, err
			}
			r.sweep(o, l.n, src, dst, size, t/2)
		default:
			return nil, r.errAt(l.n, "", ErrUnsupported, `MPIBlib results without "#p2p" or "#operation" lines: cannot tell what they measured`)
		}
	}
	if o.rows() == 0 {
		return nil, inputErr(Location{File: r.path}, "", ErrEmptyFile, "no result rows with a message size above 0")
	}
	if op != "" {
		o.note("%s %s: each row is MPIBlib's mean time T in seconds over %s repetitions (confidence interval up to ±%.3g%% of T), root %s", o.tool, op, reps, 100*ciMax, collective)
	} else {
		o.note("%s p2p: each row is half of MPIBlib's mean round trip T from %s to %s (one-way), over %s repetitions (confidence interval up to ±%.3g%% of T)", o.tool, src, dst, reps, 100*ciMax)
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
