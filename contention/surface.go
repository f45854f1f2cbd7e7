package contention

import (
	"math"
	"slices"

	"github.com/commcal/commcal/cluster"
)

// surface: max-min sharing on capacities that depend on the traffic the other way. A directed
// resource carrying w transfers while its reverse direction carries c has capacity
// C·F_kind(w, c), with F measured per kind of resource (a NIC's outgoing direction, its incoming
// direction, and the backbone or uplinks between racks) from the bidirectional experiments,
// instead of the asymmetric model's one contra-flow factor φ. F(w, 0) = 1.
//
// Parameters (LearnedParams): Surface, the measured cells (kind, w, c, factor); the fitted
// capacities CeilingBps, NICBps, BackboneBps.
//
// Counts beyond the measured range take the value of the nearest measured cell (counts
// clamped to the largest measured w and c): more contra-flow transfers than measured are
// assumed to hurt no more than the most measured. A kind with no measured cell has F = 1.
//
// Source: commcal's own model, a generalisation of the asymmetric property of Zhu et al.
// (CCPE 2014, §4) from one factor to a measured table; fitted by estimate.FitLearned.
var SurfaceModel = Learned{"surface", LearnedVariant{Surface: true}}

// MaxSurfaceCount bounds a surface cell's counts: the table is a dense grid up to the largest
// (a bidirectional design measures 3 each way; a count of 10⁵ would ask for gigabytes).
const MaxSurfaceCount = 64

// SurfaceKinds are the kinds of directed resources a surface distinguishes: a NIC's outgoing
// and incoming directions, and every resource between racks (backbone cable or uplinks).
var SurfaceKinds = []string{"nic-out", "nic-in", "core"}

// SurfaceKind is the surface kind of a resource kind.
func SurfaceKind(k cluster.ResourceKind) string {
	switch k {
	case cluster.NICOut:
		return "nic-out"
	case cluster.NICIn:
		return "nic-in"
	}
	return "core"
}

// SurfaceCell is one measured point of the bidirectional surface: a resource of Kind carrying
// With transfers while its reverse carries Contra has Factor times its capacity.
type SurfaceCell struct {
	Kind   string  `json:"kind"`
	With   int     `json:"with"`
	Contra int     `json:"contra"`
	Factor float64 `json:"factor"`
}

// surfaceTable is a surface as dense per-kind grids, for lookups in the step loop: each cell
// the measured factor, or the nearest measured one's (see factor).
type surfaceTable struct {
	grid       [3][][]float64 // per kind: [with−1][contra−1]
	maxW, maxC [3]int
}

func kindIndex(kind string) int { return slices.Index(SurfaceKinds, kind) }

func newSurfaceTable(cells []SurfaceCell) *surfaceTable {
	if len(cells) == 0 {
		return nil
	}
	t := &surfaceTable{}
	for _, c := range cells {
		k := kindIndex(c.Kind)
		t.maxW[k], t.maxC[k] = max(t.maxW[k], c.With), max(t.maxC[k], c.Contra)
	}
	for k := range t.grid {
		t.grid[k] = make([][]float64, t.maxW[k])
		for w := range t.grid[k] {
			t.grid[k][w] = make([]float64, t.maxC[k])
			for c := range t.grid[k][w] {
				t.grid[k][w][c] = math.NaN()
			}
		}
	}
	for _, c := range cells {
		t.grid[kindIndex(c.Kind)][c.With-1][c.Contra-1] = c.Factor
	}
	// Cells not measured take the nearest measured one's factor (smallest |Δw| + |Δc|, then
	// smaller counts first), found once here rather than at every lookup.
	for k, g := range t.grid {
		filled := make([][]float64, len(g))
		for w := range g {
			filled[w] = slices.Clone(g[w])
			for c, f := range g[w] {
				if math.IsNaN(f) {
					filled[w][c] = nearestMeasured(g, w, c)
				}
			}
		}
		t.grid[k] = filled
	}
	return t
}

// nearestMeasured is the factor of grid's measured cell nearest to [w][c] (smallest
// |Δw| + |Δc|, the first in row-major order among equals), 1 when none is measured.
func nearestMeasured(grid [][]float64, w, c int) float64 {
	best, bestD := 1.0, math.MaxInt
	for i := range grid {
		for j, f := range grid[i] {
			if d := abs(i-w) + abs(j-c); !math.IsNaN(f) && d < bestD {
				best, bestD = f, d
			}
		}
	}
	return best
}

// factor is F_kind(w, c): 1 without contra-flow transfers or measurements; else the cell at
// the counts clamped to the measured range, or, where that cell was not measured, the
// nearest measured one (smallest |Δw| + |Δc|, then smaller counts first).
func (t *surfaceTable) factor(kind, w, c int) float64 {
	if t == nil || c == 0 || w == 0 || t.maxW[kind] == 0 {
		return 1
	}
	return t.grid[kind][min(w, t.maxW[kind])-1][min(c, t.maxC[kind])-1]
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
