package experiments

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/internal/badinput"
)

// WorkloadHelp lists the generated workloads Workload understands.
const WorkloadHelp = `all-to-all:BYTES   every node sends BYTES to every other node, all at once
alltoallv:FILE     an MPI_Alltoallv with sizes from a CSV matrix: a header "src,<node>,<node>,..."
                   and a row "<node>,<bytes>,<bytes>,..." per node of the header (0: no transfer)
random:nodes=N,d=D[,count=K][,seed=S][,sizes=A/B/...]
                   K (default 1, at most 10000) random patterns of CCPE 2014 §7.1 (N nodes over
                   two racks, each drawing D ≤ 64 destinations kept with probability 1/2; sizes
                   default 10 MB)
Sizes are whole numbers of bytes up to 2^50; a workload holds at most 10^7 transfers.`

// Workload generates the patterns of a workload spec (see WorkloadHelp) on a cluster, so that
// a user need not write a million transfers to predict an all-to-all. Sizes are whole numbers
// of bytes up to contention.MaxTransferBytes, counts are bounded (MaxRandomPatterns,
// MaxRandomDraws), and a workload's transfers are counted before any is made: more than
// contention.MaxPatternTransfers is refused. Mistakes in the spec are bad input naming it.
func Workload(cl *cluster.Cluster, spec string) ([]contention.Pattern, error) {
	kind, arg, _ := strings.Cut(spec, ":")
	bad := func(format string, a ...any) error {
		return badinput.Errorf("", "--workload %s: %s", badinput.Quote(spec), fmt.Sprintf(format, a...))
	}
	switch kind {
	case "all-to-all":
		return allToAll(cl, arg, bad)
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
		spec, count, seed, err := randomWorkload(arg)
		if err != nil {
			return nil, bad("%v", err)
		}
		if n := float64(count) * float64(spec.Nodes) * float64(spec.D); n > contention.MaxPatternTransfers {
			return nil, bad("up to %.4g transfers (count × nodes × d), want at most %d", n, contention.MaxPatternTransfers)
		}
		pats, err := RandomPatterns(cl, spec, count, seed)
		if err != nil {
			return nil, bad("%v", err)
		}
		return pats, nil
	}
	return nil, bad("unknown workload %s; want one of all-to-all, alltoallv, random", badinput.Quote(kind))
}

// allToAll is the all-to-all workload of arg bytes (Workload); bad makes its errors.
func allToAll(cl *cluster.Cluster, arg string, bad func(string, ...any) error) ([]contention.Pattern, error) {
	b, err := contention.ParseBytes(arg, 1)
	if err != nil {
		return nil, bad("want all-to-all:BYTES: %v", err)
	}
	nodes := cl.Nodes()
	n := len(nodes)
	switch {
	case n < 2:
		return nil, bad("cluster %s has one node: no all-to-all", cl.Name())
	case float64(n)*float64(n-1) > contention.MaxPatternTransfers:
		return nil, bad("%d nodes make %d transfers, want at most %d", n, n*(n-1), contention.MaxPatternTransfers)
	}
	p := contention.Pattern{ID: "all-to-all", Flows: make([]contention.Flow, 0, n*(n-1))}
	for _, s := range nodes {
		for _, d := range nodes {
			if s.Name != d.Name {
				p.Flows = append(p.Flows, contention.Flow{Src: s.Name, Dst: d.Name, Bytes: b})
			}
		}
	}
	return []contention.Pattern{p}, nil
}

// randomWorkload parses the keys of a random workload: nodes, d, count, seed and sizes, each
// at most once, with count and d within their ceilings.
func randomWorkload(arg string) (spec RandomSpec, count int, seed uint64, err error) {
	count, seed = 1, 1
	seen := map[string]bool{}
	for _, kv := range strings.Split(arg, ",") {
		k, v, ok := strings.Cut(kv, "=")
		switch {
		case !ok:
			err = fmt.Errorf("%s is not key=value", badinput.Quote(kv))
		case seen[k]:
			err = fmt.Errorf("key %s given twice", badinput.Quote(k))
		case k == "nodes":
			spec.Nodes, err = strconv.Atoi(v)
		case k == "d":
			spec.D, err = strconv.Atoi(v)
		case k == "count":
			count, err = strconv.Atoi(v)
		case k == "seed":
			seed, err = strconv.ParseUint(v, 10, 64)
		case k == "sizes":
			spec.Sizes, err = workloadSizes(v)
		default:
			err = fmt.Errorf("unknown key %s (nodes, d, count, seed, sizes)", badinput.Quote(k))
		}
		if err != nil {
			return spec, 0, 0, err
		}
		seen[k] = true
	}
	if spec.Nodes < 2 || spec.D < 1 || spec.D > MaxRandomDraws || count < 1 || count > MaxRandomPatterns {
		return spec, 0, 0, fmt.Errorf("want nodes ≥ 2, d from 1 to %d and count from 1 to %d", MaxRandomDraws, MaxRandomPatterns)
	}
	return spec, count, seed, nil
}

// workloadSizes parses a random workload's sizes, A/B/...: at most MaxSizes whole numbers of
// bytes.
func workloadSizes(v string) ([]int64, error) {
	parts := strings.Split(v, "/")
	if len(parts) > MaxSizes {
		return nil, fmt.Errorf("%d sizes, want at most %d", len(parts), MaxSizes)
	}
	sizes := make([]int64, len(parts))
	for i, s := range parts {
		b, err := contention.ParseBytes(s, 1)
		if err != nil {
			return nil, fmt.Errorf("size %v", err)
		}
		sizes[i] = int64(b)
	}
	return sizes, nil
}
