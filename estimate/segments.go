package estimate

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/experiments"
)

// HockneySegment is T(m) = α + β·m fitted on the message sizes of one protocol regime.
type HockneySegment struct {
	FromBytes float64 `json:"from_bytes"` // smallest size of the segment
	ToBytes   float64 `json:"to_bytes"`   // largest size of the segment
	Alpha     Param   `json:"alpha_s"`
	Beta      Param   `json:"beta_s_per_byte"`
	R2        float64 `json:"r2"`
	// Flags names what is physically impossible in the fit (α < 0, β ≤ 0): such a segment
	// is reported, not used as a latency or a rate.
	Flags []string `json:"flags,omitempty"`
}

// SegmentedHockney is Hockney's model fitted piecewise, one segment per regime of the MPI or
// TCP stack (eager, rendezvous, …): a single line from 1 B to 1 MB leaves relative residuals
// of 1,581% on real ping-pong data.
type SegmentedHockney struct {
	Class cluster.PathClass `json:"class"`
	// Source is where the one-way times come from: "p2p_sweep" (transfers) or
	// "roundtrips/2" (half of ping-pong round trips with equal messages both ways).
	Source string `json:"source"`
	// Breaks are the sizes at which a new segment starts; BreaksFrom says how they were
	// found: "bai-perron" (count chosen by BIC, listed per count in BIC) or "given".
	Breaks     []float64        `json:"breaks_bytes"`
	BreaksFrom string           `json:"breaks_from"`
	BIC        []float64        `json:"bic,omitempty"`
	Segments   []HockneySegment `json:"segments"`
	// MaxAbsRelResidual is the largest |T − T̂|/T̂ over the per-size medians, with the
	// segments; SingleLineMaxAbsRelResidual the same for one line over every size.
	MaxAbsRelResidual           float64 `json:"max_abs_rel_residual"`
	SingleLineMaxAbsRelResidual float64 `json:"single_line_max_abs_rel_residual"`
}

// Segmentation settings of FitHockneySegments when the breaks are found: at least
// segmentMinSizes message sizes per segment (with fewer, a line through a regime is not
// determined well enough to tell it from the next, and on the real graphene sweep segments of
// 5 sizes fit noise: negative β), at most maxSegmentBreaks breaks (MPI stacks switch
// protocols 2–4 times).
const (
	segmentMinSizes  = 10
	maxSegmentBreaks = 6
)

// FitHockneySegments fits T = α + β·m piecewise to one-way times (m in bytes, t in seconds,
// one observation per repetition), on the median time of each size: real ping-pong data has
// outliers (CIs of 448% of the mean on graphene) that would otherwise place the breaks and
// tilt the lines. The breaks are given (sizes at which a segment starts) or, when given is
// nil, found by Bai–Perron least-squares segmentation (Breakpoints, count by BIC) of the
// medians against size, at least segmentMinSizes sizes a segment. Each segment's α and β
// come from least squares over its sizes' medians, with 95% intervals (LeastSquares); N is
// the number of sizes.
func FitHockneySegments(m, t []float64, given []float64) (*SegmentedHockney, error) {
	if len(m) != len(t) {
		panic("estimate: FitHockneySegments: m and t differ in length")
	}
	sizes, medians := perSizeMedians(m, t)
	sh := &SegmentedHockney{}
	switch {
	case given != nil:
		sh.Breaks, sh.BreaksFrom = slices.Clone(given), "given"
		slices.Sort(sh.Breaks)
	case len(sizes) < 2*segmentMinSizes:
		sh.BreaksFrom = "bai-perron"
	default:
		seg, err := Breakpoints(sizes, medians, segmentMinSizes, maxSegmentBreaks)
		if err != nil {
			return nil, err
		}
		sh.BreaksFrom, sh.BIC = "bai-perron", seg.BIC
		for _, b := range seg.Breaks {
			sh.Breaks = append(sh.Breaks, sizes[b+1])
		}
	}
	// Sizes by segment: segment k holds sizes in [Breaks[k-1], Breaks[k]).
	k := len(sh.Breaks) + 1
	segM, segT := make([][]float64, k), make([][]float64, k)
	for i := range sizes {
		s, _ := slices.BinarySearch(sh.Breaks, sizes[i])
		if s < len(sh.Breaks) && sh.Breaks[s] == sizes[i] {
			s++
		}
		segM[s], segT[s] = append(segM[s], sizes[i]), append(segT[s], medians[i])
	}
	for s := range k {
		if len(segM[s]) < 3 {
			return nil, fmt.Errorf("estimate: hockney segment %d: %d sizes, need at least 3 (breaks %v)", s+1, len(segM[s]), sh.Breaks)
		}
		reg, err := fitLine(segM[s], segT[s])
		if err != nil {
			return nil, fmt.Errorf("estimate: hockney segment %d: %w", s+1, err)
		}
		n := len(segM[s])
		hs := HockneySegment{FromBytes: slices.Min(segM[s]), ToBytes: slices.Max(segM[s]), R2: reg.R2,
			Alpha: Param{Value: reg.Coef[0], CILow: reg.CILow[0], CIHigh: reg.CIHigh[0], N: n},
			Beta:  Param{Value: reg.Coef[1], CILow: reg.CILow[1], CIHigh: reg.CIHigh[1], N: n}}
		if hs.Alpha.Value < 0 {
			hs.Flags = append(hs.Flags, fmt.Sprintf("α = %.3g s is negative: no latency can be", hs.Alpha.Value))
		}
		if !(hs.Beta.Value > 0) {
			hs.Flags = append(hs.Flags, fmt.Sprintf("β = %.3g s/B is not positive: no rate can be", hs.Beta.Value))
		}
		for i, res := range reg.Residuals {
			sh.MaxAbsRelResidual = max(sh.MaxAbsRelResidual, math.Abs(res/(segT[s][i]-res)))
		}
		sh.Segments = append(sh.Segments, hs)
	}
	if one, err := fitLine(sizes, medians); err == nil {
		for i, res := range one.Residuals {
			sh.SingleLineMaxAbsRelResidual = max(sh.SingleLineMaxAbsRelResidual, math.Abs(res/(medians[i]-res)))
		}
	}
	return sh, nil
}

// fitLine is the least-squares line t = a + b·m.
func fitLine(m, t []float64) (*Regression, error) {
	x := mat.NewDense(len(m), 2, nil)
	for i := range m {
		x.Set(i, 0, 1)
		x.Set(i, 1, m[i])
	}
	return LeastSquares(x, t, nil)
}

// perSizeMedians returns the distinct sizes in ascending order and the median time of each.
func perSizeMedians(m, t []float64) (sizes, medians []float64) {
	by := map[float64][]float64{}
	for i := range m {
		by[m[i]] = append(by[m[i]], t[i])
	}
	for s := range by {
		sizes = append(sizes, s)
	}
	slices.Sort(sizes)
	for _, s := range sizes {
		v := by[s]
		slices.Sort(v)
		med := v[len(v)/2]
		if len(v)%2 == 0 {
			med = (v[len(v)/2-1] + v[len(v)/2]) / 2
		}
		medians = append(medians, med)
	}
	return sizes, medians
}

// FitHockneySegmentsAll fits the segmented model for every path class that has a sweep:
// from p2p_sweep transfers, and from round trips with the same message both ways (one-way
// time = half the round trip) for classes the transfers do not cover. Classes with fewer than
// 2·segmentMinSizes sizes are fitted as one segment; a p2p_sweep class left with one segment
// is not returned, since FitHockney's line is its fit already. No sweep at all is an error.
func FitHockneySegmentsAll(cl *cluster.Cluster, transfers []datasets.Transfer, rts []datasets.RoundTrip, given []float64) ([]SegmentedHockney, error) {
	type obs struct{ m, t []float64 }
	sweep, half := map[cluster.PathClass]*obs{}, map[cluster.PathClass]*obs{}
	add := func(into map[cluster.PathClass]*obs, src, dst string, m, t float64) error {
		c, err := cl.Class(src, dst)
		if err != nil {
			return fmt.Errorf("estimate: %w", err)
		}
		if into[c] == nil {
			into[c] = &obs{}
		}
		into[c].m, into[c].t = append(into[c].m, m), append(into[c].t, t)
		return nil
	}
	for _, r := range transfers {
		if r.Experiment == experiments.P2PSweep {
			if err := add(sweep, r.Src, r.Dst, float64(r.Bytes), r.Seconds()); err != nil {
				return nil, err
			}
		}
	}
	for _, r := range rts {
		if r.BytesOut == r.BytesBack && r.BytesOut > 0 {
			if err := add(half, r.I, r.J, float64(r.BytesOut), r.Seconds/2); err != nil {
				return nil, err
			}
		}
	}
	var out []SegmentedHockney
	swept := false
	for _, c := range []cluster.PathClass{cluster.IntraRack, cluster.InterRack} {
		o, source := sweep[c], experiments.P2PSweep
		if o == nil || (half[c] != nil && distinct(half[c].m) > distinct(o.m)) {
			o, source = half[c], "roundtrips/2"
		}
		if o == nil || distinct(o.m) < 2 {
			continue
		}
		swept = true
		sh, err := FitHockneySegments(o.m, o.t, given)
		if err != nil {
			if given != nil {
				return nil, fmt.Errorf("estimate: hockney segments %s (sizes %g–%g B): %w; give breaks inside the sweep, each segment with 3 sizes or more (--hockney-breaks)",
					c, slices.Min(o.m), slices.Max(o.m), err)
			}
			return nil, fmt.Errorf("estimate: hockney segments %s: %w", c, err)
		}
		if source == experiments.P2PSweep && len(sh.Segments) == 1 {
			continue
		}
		sh.Class, sh.Source = c, source
		out = append(out, *sh)
	}
	if !swept {
		return nil, fmt.Errorf("estimate: hockney segments: no sweep (p2p_sweep transfers, or round trips with the same message both ways, over several sizes)")
	}
	return out, nil
}
