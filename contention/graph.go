package contention

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	"github.com/commcal/commcal/cluster"
)

// Contention graphs (Martinasso and Méhaut, Euro-Par 2011, §3.1): the nodes are cluster nodes,
// the edges the communications of one step, parallel edges allowed. Penalties depend on a
// graph's shape, not on node names, so the penalty table is keyed by a canonical form.
//
// The form used here is colour refinement (one-dimensional Weisfeiler–Leman) on the directed
// multigraph: every node starts with the same colour; in each round a node's colour becomes the
// sorted list of (colour of neighbour, direction, same rack or not, multiplicity) over its
// edges; three rounds are made. Rack placement enters through the same-rack mark of every edge,
// so that a graph inside one rack and the same graph across two racks differ, while the racks'
// names do not matter. An edge's class is (colour of source, colour of destination, same
// rack). Colour refinement does not tell every pair of non-isomorphic graphs apart; for the
// small graphs of static-synchronous benchmarks (a handful of nodes) the classes it finds are
// those of the graphs' automorphisms, which is what a penalty table needs.

// refineRounds is the number of colour-refinement rounds; graphs of up to 8 nodes have
// diameter below it in practice.
const refineRounds = 3

// GraphShape is the canonical form of one contention graph.
type GraphShape struct {
	// Key identifies the graph up to relabelling of nodes and racks.
	Key string
	// EdgeClass gives each edge's class, in the order of the edges given.
	EdgeClass []string
}

// Shape computes the canonical form of a contention graph on a cluster.
func Shape(cl *cluster.Cluster, edges []Edge) GraphShape {
	idx := map[string]int{}
	var nodes []string
	for _, e := range edges {
		for _, n := range []string{e.Src, e.Dst} {
			if _, ok := idx[n]; !ok {
				idx[n] = len(nodes)
				nodes = append(nodes, n)
			}
		}
	}
	sameRack := make([]bool, len(edges))
	for i, e := range edges {
		a, _ := cl.Node(e.Src)
		b, _ := cl.Node(e.Dst)
		sameRack[i] = a.RackIndex == b.RackIndex
	}
	colour := make([]string, len(nodes))
	for r := 0; r < refineRounds; r++ {
		sig := make([][]string, len(nodes))
		for i, e := range edges {
			s, d := idx[e.Src], idx[e.Dst]
			mark := "x"
			if sameRack[i] {
				mark = "r"
			}
			sig[s] = append(sig[s], ">"+mark+colour[d])
			sig[d] = append(sig[d], "<"+mark+colour[s])
		}
		next := make([]string, len(nodes))
		for v := range nodes {
			slices.Sort(sig[v])
			next[v] = compress(colour[v] + "(" + strings.Join(sig[v], ",") + ")")
		}
		colour = next
	}
	sh := GraphShape{EdgeClass: make([]string, len(edges))}
	for i, e := range edges {
		mark := "x"
		if sameRack[i] {
			mark = "r"
		}
		sh.EdgeClass[i] = colour[idx[e.Src]] + "-" + mark + ">" + colour[idx[e.Dst]]
	}
	classes := slices.Clone(sh.EdgeClass)
	slices.Sort(classes)
	sh.Key = compress(strings.Join(classes, ";"))
	return sh
}

// compress shortens a colour signature to a fixed-length hash (FNV-1a, 64 bits), so that keys
// stay short however many rounds are made.
func compress(s string) string {
	h := fnv.New64a()
	h.Write([]byte(s))
	return strconv.FormatUint(h.Sum64(), 36)
}

// Components splits a contention graph into its weakly connected components, as lists of edge
// indices in increasing order; components come in the order of their first edge.
func Components(edges []Edge) [][]int {
	parent := map[string]string{}
	var find func(string) string
	find = func(x string) string {
		if p, ok := parent[x]; ok && p != x {
			r := find(p)
			parent[x] = r
			return r
		}
		parent[x] = x
		return x
	}
	for _, e := range edges {
		a, b := find(e.Src), find(e.Dst)
		if a != b {
			parent[a] = b
		}
	}
	byRoot := map[string]int{}
	var out [][]int
	for i, e := range edges {
		r := find(e.Src)
		c, ok := byRoot[r]
		if !ok {
			c = len(out)
			byRoot[r] = c
			out = append(out, nil)
		}
		out[c] = append(out[c], i)
	}
	return out
}

// Describe renders a small graph for reports: "a>b a>c d>b".
func Describe(edges []Edge) string {
	parts := make([]string, len(edges))
	for i, e := range edges {
		parts[i] = fmt.Sprintf("%s>%s", e.Src, e.Dst)
	}
	return strings.Join(parts, " ")
}
