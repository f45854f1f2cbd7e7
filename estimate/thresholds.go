package estimate

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/commcal/commcal/datasets"
)

// ThresholdFit holds the thresholds of the scatter and gather models of Lastovetsky et al.
// (§3): the scatter break S, the gather regions M1 and M2, and the slope corrections κ1, κ2.
// S, M1 and M2 come from the sweeps alone; κ1 and κ2 need the LMO model besides. What the data
// do not give is left out (zero, or nil) and listed in Missing.
type ThresholdFit struct {
	// Root and Procs are the sweeps' root node and process count.
	Root  string `json:"root"`
	Procs int64  `json:"procs"`
	// S is the last message size of the scatter's small-message (parallel) regime.
	S int64 `json:"s_bytes,omitempty"`
	// M1 is the last size of the gather's small-message regime: M_k with
	// k = min{i : T_{i+1}/T_1 > 10}; M2 the last size before its large-message linear regime.
	M1 int64 `json:"m1_bytes,omitempty"`
	M2 int64 `json:"m2_bytes,omitempty"`
	// Kappa1 and Kappa2 correct the gather's slopes in the small and large regimes.
	Kappa1 *Param `json:"kappa1_s_per_byte,omitempty"`
	Kappa2 *Param `json:"kappa2_s_per_byte,omitempty"`
	// Missing lists the thresholds and slope corrections the data do not give, with why
	// (named as in Calibration.NotIdentified; the calibration carries them there).
	Missing []Unidentified `json:"-"`
	// The sweeps (mean time per size) and their segmentations, for figures.
	ScatterSizes, ScatterTimes []float64     `json:"-"`
	GatherSizes, GatherTimes   []float64     `json:"-"`
	Scatter, Gather            *Segmentation `json:"-"`
}

// Names of the thresholds' estimates in Calibration.NotIdentified.
const (
	thresholdS      = "thresholds/s_bytes"
	thresholdM1     = "thresholds/m1_bytes"
	thresholdM2     = "thresholds/m2_bytes"
	thresholdKappa1 = "thresholds/kappa1_s_per_byte"
	thresholdKappa2 = "thresholds/kappa2_s_per_byte"
)

// Sweep returns the mean time per size of the most measured sweep of one collective (root and
// process count), sizes ascending.
func Sweep(rows []datasets.Collective, op string) (root string, procs int64, sizes, times []float64) {
	type key struct {
		root  string
		procs int64
	}
	count := map[key]int{}
	for _, r := range rows {
		if r.Op == op {
			count[key{r.Root, r.Procs}]++
		}
	}
	var best key
	for k, n := range count {
		if n > count[best] || (n == count[best] && (k.root < best.root || (k.root == best.root && k.procs < best.procs))) {
			best = k
		}
	}
	sum, n := map[int64]float64{}, map[int64]int{}
	for _, r := range rows {
		if r.Op == op && r.Root == best.root && r.Procs == best.procs {
			sum[r.Bytes] += r.Seconds
			n[r.Bytes]++
		}
	}
	keys := make([]int64, 0, len(sum))
	for m := range sum {
		keys = append(keys, m)
	}
	slices.SortFunc(keys, cmp.Compare[int64])
	for _, m := range keys {
		sizes = append(sizes, float64(m))
		times = append(times, sum[m]/float64(n[m]))
	}
	return best.root, best.procs, sizes, times
}

// FitThresholds finds S in the scatter sweep (one break, Bai–Perron with h = 15% of the
// points, kept only if BIC prefers it), M1 in the gather sweep by the 10×-first-time rule, and
// M2 as the end of the gather's last-but-one regime (up to two breaks, by BIC): the sweeps
// alone give them, as the paper finds them before any point-to-point parameter. κ1 and κ2,
// with lmo not nil, are the slopes of the gather's times less the LMO model's prediction,
// over the small (M ≤ M1) and large (M > M2) regimes, the receivers being the LMO nodes
// other than the root: n(C_0 + t_0·M) + max_i(C_i + t_i·M + M/β_0i) for small messages, the
// same with a sum for large ones. (The paper computes κ from the regime's fitted slope c1:
// κ2 = c1 − Σ(t_i + 1/β_0i); that reading leaves out the root's n·t_0 and bends when the
// longest leg changes inside the small regime, which the regression on the model's residual
// avoids.) The intervals add the regression's variance and the LMO parameters' (from their
// intervals, as independent).
//
// Each threshold the data do not give (no sweep, no break, no small-message regime, no LMO
// fit for κ) is left out and listed in the fit's Missing with why; only a dataset without any
// scatter or gather sweep is an error.
func FitThresholds(rows []datasets.Collective, lmo *LMOFit) (*ThresholdFit, error) {
	f := &ThresholdFit{}
	missing := func(param, format string, a ...any) {
		f.Missing = append(f.Missing, Unidentified{Parameter: param, Reason: fmt.Sprintf(format, a...)})
	}
	sroot, sprocs, ss, st := Sweep(rows, "scatter")
	groot, gprocs, gs, gt := Sweep(rows, "gather")
	if len(ss) == 0 && len(gs) == 0 {
		return nil, fmt.Errorf("estimate: thresholds: no scatter or gather sweep (collectives rows of op scatter and gather over a range of message sizes)")
	}
	f.Root, f.Procs = sroot, sprocs
	if len(ss) == 0 {
		f.Root, f.Procs = groot, gprocs
		missing(thresholdS, "no scatter sweep (collectives rows of op scatter over a range of message sizes)")
	} else {
		f.ScatterSizes, f.ScatterTimes = ss, st
		if err := f.scatterBreak(); err != nil {
			missing(thresholdS, "%v", err)
		}
	}
	var k, last int
	switch {
	case len(gs) == 0:
		why := "no gather sweep (collectives rows of op gather over a range of message sizes)"
		missing(thresholdM1, "%s", why)
		missing(thresholdM2, "%s", why)
	case groot != f.Root || gprocs != f.Procs:
		why := fmt.Sprintf("the gather sweep (root %s, %d processes) is not the scatter sweep's (root %s, %d)", groot, gprocs, f.Root, f.Procs)
		missing(thresholdM1, "%s", why)
		missing(thresholdM2, "%s", why)
	default:
		f.GatherSizes, f.GatherTimes = gs, gt
		var err error
		if k, err = f.gatherSmall(); err != nil {
			missing(thresholdM1, "%v", err)
		}
		if last, err = f.gatherLarge(); err != nil {
			missing(thresholdM2, "%v", err)
		}
	}
	f.kappas(lmo, k, last, missing)
	return f, nil
}

// scatterBreak sets S, the size at the scatter sweep's one break.
func (f *ThresholdFit) scatterBreak() error {
	h := max(3, len(f.ScatterSizes)*15/100)
	var err error
	if f.Scatter, err = Breakpoints(f.ScatterSizes, f.ScatterTimes, h, 1); err != nil {
		return fmt.Errorf("scatter: %w", err)
	}
	if len(f.Scatter.Breaks) == 0 {
		return fmt.Errorf("scatter: no break found in %d sizes (BIC prefers one line)", len(f.ScatterSizes))
	}
	f.S = int64(f.ScatterSizes[f.Scatter.Breaks[0]])
	return nil
}

// gatherSmall sets M1 = M_k, k = min{i : T_{i+1}/T_1 > 10}, and returns k.
func (f *ThresholdFit) gatherSmall() (int, error) {
	gs, gt := f.GatherSizes, f.GatherTimes
	k := -1
	for i := 0; i+1 < len(gt); i++ {
		if gt[i+1]/gt[0] > 10 {
			k = i
			break
		}
	}
	if k < 1 {
		return 0, fmt.Errorf("gather: no size where the time exceeds 10× the first, or it does at once: no small-message regime in %d sizes %g–%g B", len(gs), gs[0], gs[len(gs)-1])
	}
	f.M1 = int64(gs[k])
	return k, nil
}

// gatherLarge sets M2, the size at the gather sweep's last break (up to two), and returns its
// index.
func (f *ThresholdFit) gatherLarge() (int, error) {
	gs, gt := f.GatherSizes, f.GatherTimes
	h := max(3, len(gs)*15/100)
	var err error
	if f.Gather, err = Breakpoints(gs, gt, h, 2); err != nil {
		return 0, fmt.Errorf("gather: %w", err)
	}
	if len(f.Gather.Breaks) == 0 {
		return 0, fmt.Errorf("gather: no break found in %d sizes (BIC prefers one line)", len(gs))
	}
	last := f.Gather.Breaks[len(f.Gather.Breaks)-1]
	f.M2 = int64(gs[last])
	return last, nil
}

// kappas sets κ1 over the gather's sizes up to M1 (index k) and κ2 over those above M2
// (index last), each when its threshold was found and lmo is not nil; what it cannot set goes
// to missing.
func (f *ThresholdFit) kappas(lmo *LMOFit, k, last int, missing func(param, format string, a ...any)) {
	var g *gatherModel
	var why string
	switch {
	case lmo == nil:
		why = "κ corrects the LMO model's gather prediction, and the LMO parameters were not fitted (see lmo)"
	case f.GatherSizes == nil:
		why = "no gather sweep of the sweeps' root and processes to fit it on (see " + thresholdM1 + ")"
	default:
		var err error
		if g, err = newGatherModel(lmo, f.Root, f.Procs); err != nil {
			why = err.Error()
		}
	}
	gs, gt := f.GatherSizes, f.GatherTimes
	for _, kc := range []struct {
		param, of string // κ's name, its threshold's
		threshold int64
		lo, hi    int
		serial    bool
		into      **Param
	}{{thresholdKappa1, thresholdM1, f.M1, 0, k + 1, false, &f.Kappa1}, {thresholdKappa2, thresholdM2, f.M2, last + 1, len(gs), true, &f.Kappa2}} {
		switch {
		case why != "":
			missing(kc.param, "%s", why)
			continue
		case kc.threshold == 0:
			missing(kc.param, "its regime's threshold was not found (see %s)", kc.of)
			continue
		}
		slopeVar, sumVar, maxVar := g.variances()
		modelVar := maxVar
		if kc.serial {
			modelVar = sumVar
		}
		p, err := g.kappa(gs, gt, kc.lo, kc.hi, kc.serial, slopeVar, modelVar)
		if err != nil {
			missing(kc.param, "gather sizes %g–%g B: %v", gs[kc.lo], gs[kc.hi-1], err)
			continue
		}
		if r := unboundedReason(p); r != "" {
			missing(kc.param, "%s", r)
			continue
		}
		*kc.into = &p
	}
}

// gatherModel is the LMO model of a gather from root to the other LMO nodes, without κ:
// n(C_0 + t_0·M) + max_i(C_i + t_i·M + M/β_0i) for small messages, the same with a sum for
// large ones (serial).
type gatherModel struct {
	lmo  *LMOFit
	name string // the root's
	root int    // the root's index in lmo.Nodes
	n    float64
	inv  map[string]Param // 1/β by "i\x00j", both ways
}

// newGatherModel looks the root up among the LMO nodes (node 0 of the fit's order is not
// assumed) and wants the sweep's procs processes to be the LMO nodes.
func newGatherModel(lmo *LMOFit, root string, procs int64) (*gatherModel, error) {
	g := &gatherModel{lmo: lmo, name: root, root: -1, n: float64(len(lmo.Nodes) - 1), inv: map[string]Param{}}
	for i, nd := range lmo.Nodes {
		if nd.Name == root {
			g.root = i
		}
	}
	if g.root < 0 {
		return nil, fmt.Errorf("estimate: thresholds: root %s has no LMO parameters", root)
	}
	if int64(len(lmo.Nodes)) != procs {
		return nil, fmt.Errorf("estimate: thresholds: %d processes, but %d LMO nodes; κ needs the sweep to span the LMO nodes", procs, len(lmo.Nodes))
	}
	for _, l := range lmo.Links {
		g.inv[l.I+"\x00"+l.J], g.inv[l.J+"\x00"+l.I] = l.InverseRate, l.InverseRate
	}
	return g, nil
}

// at is the LMO prediction of the gather of m bytes without κ; serial picks the sum form.
func (g *gatherModel) at(m float64, serial bool) float64 {
	r := g.lmo.Nodes[g.root]
	t := g.n * (r.C.Value + r.T.Value*m)
	agg := 0.0
	for i, nd := range g.lmo.Nodes {
		if i == g.root {
			continue
		}
		leg := nd.C.Value + nd.T.Value*m + g.inv[g.name+"\x00"+nd.Name].Value*m
		if serial {
			agg += leg
		} else {
			agg = math.Max(agg, leg)
		}
	}
	return t + agg
}

// variances are those of the model's slope from the LMO parameters' intervals, as
// independent: the root's term (slopeVar), and the legs' summed (sumVar, the large-message
// form) or the largest (maxVar, the small-message form).
func (g *gatherModel) variances() (slopeVar, sumVar, maxVar float64) {
	r := g.lmo.Nodes[g.root]
	slopeVar = g.n * g.n * stdErr(r.T) * stdErr(r.T)
	for i, nd := range g.lmo.Nodes {
		if i == g.root {
			continue
		}
		b := g.inv[g.name+"\x00"+nd.Name]
		v := stdErr(nd.T)*stdErr(nd.T) + stdErr(b)*stdErr(b)
		sumVar += v
		maxVar = math.Max(maxVar, v)
	}
	return slopeVar, sumVar, maxVar
}

// kappa is the slope of what the model leaves unexplained: T(M) − model(M) regressed on M over
// the sizes gs[lo:hi] of a regime ("against the LMO parameters"), so that a change of the
// longest leg inside the regime does not bend the estimate. Its interval adds the regression's
// variance, slopeVar and modelVar.
func (g *gatherModel) kappa(gs, gt []float64, lo, hi int, serial bool, slopeVar, modelVar float64) (Param, error) {
	x := mat.NewDense(hi-lo, 2, nil)
	y := make([]float64, hi-lo)
	for i := lo; i < hi; i++ {
		x.Set(i-lo, 0, 1)
		x.Set(i-lo, 1, gs[i])
		y[i-lo] = gt[i] - g.at(gs[i], serial)
	}
	reg, err := LeastSquares(x, y, nil)
	if err != nil {
		return Param{}, err
	}
	sReg := (reg.CIHigh[1] - reg.CILow[1]) / (2 * 1.96)
	sd := math.Sqrt(sReg*sReg + slopeVar + modelVar)
	return Param{Value: reg.Coef[1], CILow: reg.Coef[1] - 1.96*sd, CIHigh: reg.Coef[1] + 1.96*sd, N: reg.N}, nil
}
