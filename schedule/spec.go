package schedule

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/internal/badinput"
)

// SpecHelp describes the collective specs Parse understands, in the style of the generated
// workloads of predict --workload; predict takes them with --collective.
const SpecHelp = `OP:BYTES[:ranks=N][:ppn=K][:root=R]:alg=NAME|alg=auto:LIBRARY
                   an MPI collective run as the rounds of an algorithm. OP is alltoall,
                   allgather, bcast, scatter, gather or reduce_scatter; BYTES the block of
                   each rank (bcast: the message; reduce_scatter: each rank's result). N ranks
                   (default: every node, K per node) run K per node (default 1) on the
                   cluster's nodes in order; R is the root (bcast, scatter, gather; default 0).
                   NAME is one of the algorithms of OP, or auto:openmpi or auto:mpich for that
                   library's default rules (Open MPI 4.1.8 tuned, MPICH 4.3.2)
alltoallv:FILE:alg=NAME|alg=auto:LIBRARY
                   an MPI_Alltoallv with sizes from a CSV matrix (as the alltoallv workload),
                   rank i on the node of the matrix's i-th column`

// MaxPerNode bounds the ranks per node of a spec: above the core count of any node built.
const MaxPerNode = 1024

// Parse turns a collective spec (SpecHelp) into its schedule on a cluster whose nodes are
// given in order: "alltoall:4e6:ranks=12:alg=pairwise", "bcast:1e6:root=3:alg=auto:mpich",
// "alltoallv:sizes.csv:alg=auto:openmpi". Sizes are whole numbers of bytes up to
// contention.MaxTransferBytes; a key may be given once. Mistakes are bad input naming the
// spec and what was wanted.
func Parse(spec string, nodes []string) (*Schedule, error) {
	bad := func(format string, a ...any) error {
		return badinput.Errorf("", "collective %s: %s", badinput.Quote(spec), fmt.Sprintf(format, a...))
	}
	fields := strings.Split(spec, ":")
	if len(fields) < 3 {
		return nil, bad("want OP:BYTES:alg=NAME or OP:BYTES:alg=auto:LIBRARY (%s)", opNames())
	}
	op := Op(fields[0])
	if _, ok := catalogue[op]; !ok {
		return nil, bad("unknown collective %s; want one of %s", badinput.Quote(fields[0]), opNames())
	}
	c := Collective{Op: op}
	keys := map[string]string{}
	var lib Library
	for i := 2; i < len(fields); i++ {
		k, v, ok := strings.Cut(fields[i], "=")
		switch {
		case !ok:
			return nil, bad("%s is not key=value (a library follows alg=auto only)", badinput.Quote(fields[i]))
		case !slices.Contains([]string{"ranks", "ppn", "root", "alg"}, k):
			return nil, bad("unknown key %s (ranks, ppn, root, alg)", badinput.Quote(k))
		case v == "":
			return nil, bad("key %s has no value", badinput.Quote(k))
		case keys[k] != "":
			return nil, bad("key %s given twice", badinput.Quote(k))
		}
		keys[k] = v
		if k == "alg" && v == "auto" && i+1 < len(fields) && !strings.Contains(fields[i+1], "=") {
			lib = Library(fields[i+1])
			i++
		}
	}
	alg := keys["alg"]
	switch {
	case alg == "":
		return nil, bad("no algorithm: want alg=NAME (%s) or alg=auto:openmpi, alg=auto:mpich", strings.Join(Algorithms(op), ", "))
	case alg == "auto" && lib == "":
		return nil, bad("alg=auto names no library: want alg=auto:openmpi or alg=auto:mpich")
	}
	choice := alg
	if alg == "auto" {
		choice = AutoPrefix + string(lib)
	}
	if err := CheckChoice(op, choice); err != nil {
		return nil, bad("%v", err)
	}
	if v, ok := keys["root"]; ok {
		if !op.rooted() {
			return nil, bad("%s has no root", op)
		}
		r, err := strconv.Atoi(v)
		if err != nil {
			return nil, bad("root %s is not a rank", badinput.Quote(v))
		}
		c.Root = r
	}
	var err error
	if op == Alltoallv {
		if keys["ranks"] != "" || keys["ppn"] != "" {
			return nil, bad("an Alltoallv's ranks are its matrix's nodes: no ranks or ppn")
		}
		c.Ranks, c.Sizes, err = readMatrix(fields[1], nodes)
		if err != nil {
			return nil, err
		}
	} else {
		if c.Bytes, err = contention.ParseBytes(fields[1], 1); err != nil {
			return nil, bad("size %v", err)
		}
		if c.Ranks, err = placeRanks(keys["ranks"], keys["ppn"], nodes); err != nil {
			return nil, bad("%v", err)
		}
	}
	s, err := ExpandChoice(c, choice)
	if err != nil {
		return nil, bad("%v", err)
	}
	return s, nil
}

func opNames() string {
	var names []string
	for _, op := range Ops() {
		names = append(names, string(op))
	}
	return strings.Join(names, ", ")
}

// placeRanks lays ranks (a count, or "" for every node's) out ppn per node on nodes, in order.
func placeRanks(ranks, ppn string, nodes []string) ([]string, error) {
	per := 1
	if ppn != "" {
		var err error
		if per, err = strconv.Atoi(ppn); err != nil || per < 1 || per > MaxPerNode {
			return nil, fmt.Errorf("ppn %s, want 1 to %d ranks per node", badinput.Quote(ppn), MaxPerNode)
		}
	}
	n := len(nodes) * per
	if ranks != "" {
		var err error
		if n, err = strconv.Atoi(ranks); err != nil || n < 2 || n > len(nodes)*per {
			return nil, fmt.Errorf("ranks %s, want 2 to %d (%d nodes × %d per node)", badinput.Quote(ranks), len(nodes)*per, len(nodes), per)
		}
	}
	if n < 2 || n > MaxRanks {
		return nil, fmt.Errorf("%d ranks on %d nodes, want 2 to %d", n, len(nodes), MaxRanks)
	}
	out := make([]string, n)
	for r := range out {
		out[r] = nodes[r/per]
	}
	return out, nil
}

// readMatrix reads an Alltoallv size matrix (contention.ReadSizeMatrix checks it): rank i
// runs on the node of the header's i-th column, which must be one of nodes.
func readMatrix(path string, nodes []string) ([]string, [][]float64, error) {
	p, err := contention.ReadSizeMatrix(path, "alltoallv")
	if err != nil {
		return nil, nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, badinput.Errorf(path, "schedule: %v", err)
	}
	data = bytes.TrimPrefix(data, []byte{0xEF, 0xBB, 0xBF})
	header, err := csv.NewReader(bufio.NewReader(bytes.NewReader(data))).Read()
	if err != nil {
		return nil, nil, badinput.Errorf(path, "schedule: header: %v", err)
	}
	known := make(map[string]bool, len(nodes))
	for _, nd := range nodes {
		known[nd] = true
	}
	ranks := make([]string, len(header)-1)
	index := make(map[string]int, len(ranks))
	for i, name := range header[1:] {
		ranks[i] = strings.TrimSpace(name)
		index[ranks[i]] = i
		if !known[ranks[i]] {
			return nil, nil, badinput.Errorf(path, "schedule: line 1, column %d: %s is not a node of the cluster", i+2, badinput.Quote(ranks[i]))
		}
	}
	sizes := make([][]float64, len(ranks))
	for i := range sizes {
		sizes[i] = make([]float64, len(ranks))
	}
	for _, f := range p.Flows {
		sizes[index[f.Src]][index[f.Dst]] = f.Bytes
	}
	return ranks, sizes, nil
}
