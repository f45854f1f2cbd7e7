package contention

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/commcal/commcal/internal/badinput"
)

// PenaltyTable holds back-solved penalties (Martinasso and Méhaut, Euro-Par 2011, §3.3):
// for each contention-graph shape measured, the penalty of each of its edge classes.
type PenaltyTable struct {
	// Entries maps a shape key (GraphShape.Key) to its edge classes' penalties.
	Entries map[string]map[string]float64 `json:"entries"`
	// Graphs gives, per shape key, one measured graph of that shape, for reports.
	Graphs map[string]string `json:"graphs"`
	// weight counts the graphs averaged into each entry.
	weight map[string]int
	// maxEdges is the size of the largest graph in the table (0: not known yet).
	maxEdges int
}

// largest returns the number of edges of the largest graph in the table: a component with
// more cannot be in it.
func (t *PenaltyTable) largest() int {
	if t.maxEdges == 0 {
		for _, g := range t.Graphs {
			t.maxEdges = max(t.maxEdges, strings.Count(g, " ")+1)
		}
	}
	return t.maxEdges
}

// NewPenaltyTable makes an empty table.
func NewPenaltyTable() *PenaltyTable {
	return &PenaltyTable{Entries: map[string]map[string]float64{}, Graphs: map[string]string{}, weight: map[string]int{}}
}

// Add records the penalties of one measured graph; a shape measured several times keeps the
// mean of its penalties, class by class.
func (t *PenaltyTable) Add(sh GraphShape, edges []Edge, rho []float64) {
	if t.weight == nil {
		t.weight = map[string]int{}
	}
	sums, counts := map[string]float64{}, map[string]int{}
	for i, c := range sh.EdgeClass {
		sums[c] += rho[i]
		counts[c]++
	}
	old, w := t.Entries[sh.Key], t.weight[sh.Key]
	entry := map[string]float64{}
	for c, s := range sums {
		v := s / float64(counts[c])
		if prev, ok := old[c]; ok {
			v = (prev*float64(w) + v) / float64(w+1)
		}
		entry[c] = v
	}
	t.Entries[sh.Key] = entry
	t.weight[sh.Key] = w + 1
	if _, ok := t.Graphs[sh.Key]; !ok {
		t.Graphs[sh.Key] = Describe(edges)
	}
	t.maxEdges = max(t.maxEdges, len(edges))
}

// Validate checks a table read from a calibration: every penalty finite and at least 1 (a
// communication never goes faster than alone, Martinasso and Méhaut's ρ ≥ 1). The error names
// the entry by its JSON keys (entries["<shape>"]["<class>"]), lists the first problems on one
// line, and is bad input (internal/badinput) without a file, like Params.Validate.
func (t *PenaltyTable) Validate() error {
	if t == nil {
		return nil
	}
	var probs []string
	more := 0
	shapes := make([]string, 0, len(t.Entries))
	for k := range t.Entries {
		shapes = append(shapes, k)
	}
	slices.Sort(shapes)
	for _, sh := range shapes {
		entry := t.Entries[sh]
		classes := make([]string, 0, len(entry))
		for c := range entry {
			classes = append(classes, c)
		}
		slices.Sort(classes)
		for _, c := range classes {
			v := entry[c]
			if v >= 1 && !math.IsInf(v, 0) {
				continue
			}
			if len(probs) == 10 {
				more++
				continue
			}
			probs = append(probs, fmt.Sprintf("entries[%q][%q]: penalty %g, want a finite number of at least 1", sh, c, v))
		}
	}
	if len(probs) == 0 {
		return nil
	}
	msg := strings.Join(probs, "; ")
	if more > 0 {
		msg += fmt.Sprintf("; and %d more", more)
	}
	return badinput.Errorf("", "contention: penalty table: %s", msg)
}

// Lookup returns the penalties of a graph whose shape is in the table.
func (t *PenaltyTable) Lookup(sh GraphShape) ([]float64, bool) {
	if t == nil {
		return nil, false
	}
	entry, ok := t.Entries[sh.Key]
	if !ok {
		return nil, false
	}
	rho := make([]float64, len(sh.EdgeClass))
	for i, c := range sh.EdgeClass {
		v, ok := entry[c]
		if !ok {
			return nil, false
		}
		rho[i] = v
	}
	return rho, true
}

// Penalties gives every edge of a contention graph its penalty: each weakly connected
// component whose shape the table holds takes the table's penalties, the others the closed
// form (whose rules only look at an edge's neighbourhood, so it applies to components alone).
// The second result counts the edges that took the table's values.
func (t *PenaltyTable) Penalties(net *Network, edges []Edge) ([]float64, int) {
	rho := ClosedFormPenalties(edges)
	hits := 0
	if t == nil || len(t.Entries) == 0 {
		return rho, 0
	}
	for _, comp := range Components(edges) {
		if len(comp) > t.largest() {
			continue // larger than any graph measured: the closed form
		}
		sub := make([]Edge, len(comp))
		for i, e := range comp {
			sub[i] = edges[e]
		}
		if r, ok := t.Lookup(Shape(net.Cluster, sub)); ok {
			for i, e := range comp {
				rho[e] = r[i]
			}
			hits += len(comp)
		}
	}
	return rho, hits
}

// PenaltyTableModel is Martinasso's sequence of linear models with back-solved penalties
// (the network's PenaltyTable) looked up by the shape of each connected component of a step's
// contention graph, rack placement included, and the closed form where the table has no entry.
type PenaltyTableModel struct{}

// Name implements Model.
func (PenaltyTableModel) Name() string { return "penalty-table" }

// Predict implements Model.
func (m PenaltyTableModel) Predict(ctx context.Context, net *Network, flows []Flow) (*Prediction, error) {
	return predictSteps(ctx, m, net, flows, nil)
}

func (PenaltyTableModel) rule(net *Network) (bool, func(*engine) rateRule) {
	return false, func(e *engine) rateRule { return newPenaltyRule(e, net.PenaltyTable) }
}

// components holds the buffers of the step's weakly connected components: a union–find over
// nodes (rebuilt each step, O(nodes + classes)), the transfers of each component, and the
// classes of the components small enough to be in the table, listed root by root.
type components struct {
	parent, size, start, fill, list []int32
	sub                             []Edge
}

// find returns the root of node x, halving the path on the way.
func (cs *components) find(x int32) int32 {
	for cs.parent[x] != x {
		cs.parent[x] = cs.parent[cs.parent[x]]
		x = cs.parent[x]
	}
	return x
}

// lookup replaces the closed-form penalty of every class whose component has a shape the
// table holds, as PenaltyTable.Penalties does for a list of edges: a component of more
// transfers than the table's largest graph keeps the closed form.
func (p *penaltyRule) lookup() {
	e, cs := p.e, &p.comps
	n := e.nodeCount
	cs.parent, cs.size = grow(cs.parent, n), grow(cs.size, n)
	for i := range cs.parent {
		cs.parent[i] = int32(i)
	}
	for _, c := range e.act {
		if a, b := cs.find(e.src[c]), cs.find(e.dst[c]); a != b {
			cs.parent[a] = b
		}
	}
	for _, c := range e.act {
		cs.size[cs.find(e.src[c])] += e.mult[c]
	}
	largest := int32(p.table.largest())
	cs.start = grow(cs.start, n+1)
	for _, c := range e.act {
		if r := cs.find(e.src[c]); cs.size[r] <= largest {
			cs.start[r+1]++
		}
	}
	for r := range n {
		cs.start[r+1] += cs.start[r]
	}
	cs.fill = append(cs.fill[:0], cs.start[:n]...)
	cs.list = grow(cs.list, int(cs.start[n]))
	for _, c := range e.act {
		if r := cs.find(e.src[c]); cs.size[r] <= largest {
			cs.list[cs.fill[r]] = c
			cs.fill[r]++
		}
	}
	nodes := e.net.Cluster.Nodes()
	for r := range n {
		classes := cs.list[cs.start[r]:cs.start[r+1]]
		if len(classes) == 0 {
			continue
		}
		cs.sub = cs.sub[:0]
		for _, c := range classes {
			for range e.mult[c] {
				cs.sub = append(cs.sub, Edge{Src: nodes[e.src[c]].Name, Dst: nodes[e.dst[c]].Name})
			}
		}
		rho, ok := p.table.Lookup(Shape(e.net.Cluster, cs.sub))
		if !ok {
			continue
		}
		i := 0
		for _, c := range classes { // parallel edges share their class, hence their penalty
			p.rho[c] = rho[i]
			i += int(e.mult[c])
		}
	}
}
