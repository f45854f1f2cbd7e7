package experiments

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/internal/badinput"
)

// WorkloadHelp lists the generated workloads Workload understands.
const WorkloadHelp = `all-to-all:BYTES   every node sends BYTES to every other node, all at once
alltoallv:FILE     an MPI_Alltoallv with sizes from a CSV matrix: a header "src,<node>,<node>,..."
                   and a row "<node>,<bytes>,<bytes>,..." per sending node (0: no transfer)
random:nodes=N,d=D[,count=K][,seed=S][,sizes=A/B/...]
                   K (default 1) random patterns of CCPE 2014 §7.1 (N nodes over two racks,
                   each drawing D destinations kept with probability 1/2; sizes default 10 MB)`

// Workload generates the patterns of a workload spec (see WorkloadHelp) on a cluster, so that
// a user need not write a million transfers to predict an all-to-all. Mistakes in the spec
// are bad input naming it.
func Workload(cl *cluster.Cluster, spec string) ([]contention.Pattern, error) {
	kind, arg, _ := strings.Cut(spec, ":")
	bad := func(format string, a ...any) error {
		return badinput.Errorf("", "--workload %q: %s", spec, fmt.Sprintf(format, a...))
	}
	switch kind {
	case "all-to-all":
		b, err := strconv.ParseFloat(arg, 64)
		if err != nil || !(b > 0) || math.IsInf(b, 0) {
			return nil, bad("want all-to-all:BYTES with a positive number of bytes")
		}
		nodes := cl.Nodes()
		p := contention.Pattern{ID: "all-to-all", Flows: make([]contention.Flow, 0, len(nodes)*(len(nodes)-1))}
		for _, s := range nodes {
			for _, d := range nodes {
				if s.Name != d.Name {
					p.Flows = append(p.Flows, contention.Flow{Src: s.Name, Dst: d.Name, Bytes: b})
				}
			}
		}
		return []contention.Pattern{p}, nil
	case "alltoallv":
		if arg == "" {
			return nil, bad("want alltoallv:FILE")
		}
		p, err := contention.ReadSizeMatrix(arg, Alltoallv)
		if err != nil {
			return nil, err
		}
		return []contention.Pattern{p}, nil
	case "random":
		spec := RandomSpec{}
		count, seed := 1, uint64(1)
		for _, kv := range strings.Split(arg, ",") {
			k, v, ok := strings.Cut(kv, "=")
			var err error
			switch {
			case !ok:
				err = fmt.Errorf("%q is not key=value", kv)
			case k == "nodes":
				spec.Nodes, err = strconv.Atoi(v)
			case k == "d":
				spec.D, err = strconv.Atoi(v)
			case k == "count":
				count, err = strconv.Atoi(v)
			case k == "seed":
				seed, err = strconv.ParseUint(v, 10, 64)
			case k == "sizes":
				for _, s := range strings.Split(v, "/") {
					f, perr := strconv.ParseFloat(s, 64)
					if perr != nil || !(f >= 1) || f > math.MaxInt64 {
						err = fmt.Errorf("size %q is not a positive number of bytes", s)
						break
					}
					spec.Sizes = append(spec.Sizes, int64(f))
				}
			default:
				err = fmt.Errorf("unknown key %q (nodes, d, count, seed, sizes)", k)
			}
			if err != nil {
				return nil, bad("%v", err)
			}
		}
		if spec.Nodes < 2 || spec.D < 1 || count < 1 {
			return nil, bad("want nodes ≥ 2, d ≥ 1 and count ≥ 1")
		}
		pats, err := RandomPatterns(cl, spec, count, seed)
		if err != nil {
			return nil, bad("%v", err)
		}
		return pats, nil
	}
	return nil, bad("unknown workload %q; want one of all-to-all, alltoallv, random", kind)
}
