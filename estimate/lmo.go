package estimate

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/commcal/commcal/datasets"
)

// LMOFit holds the heterogeneous point-to-point model of Lastovetsky, Rychkov and O'Flynn:
// a message of M bytes from i to j takes C_i + t_i·M + M/β_ij + C_j + t_j·M.
type LMOFit struct {
	Nodes []LMONodeFit `json:"nodes"`
	Links []LMOLinkFit `json:"links"`
	// MessageBytes are the message sizes of the experiments used for t and β.
	MessageBytes []int64 `json:"message_bytes"`
	// MinReps is the fewest repetitions behind any measurement; the intervals use Student t
	// with MinReps − 1 degrees of freedom.
	MinReps int `json:"min_reps"`
}

// LMONodeFit is one node's fixed delay C (s) and per-byte delay t (s/B).
type LMONodeFit struct {
	Name string `json:"name"`
	C    Param  `json:"c_s"`
	T    Param  `json:"t_s_per_byte"`
	// CTripletSD is the spread of C over the triplets containing the node (each triplet gives
	// (T_ij + T_ik − T_jk)/4); a large spread says the model does not fit the node.
	CTripletSD float64 `json:"c_triplet_sd"`
}

// LMOLinkFit is one link's transmission rate, the same both ways.
type LMOLinkFit struct {
	I string `json:"i"`
	J string `json:"j"`
	// RateBps is 8β_ij in bit/s where the fitted inverse rate is positive, +Inf where not
	// (NICBound).
	RateBps Param `json:"rate_bps"`
	// InverseRate is the fitted 1/β_ij (s/B), the value the model computes with.
	InverseRate Param `json:"inverse_rate_s_per_byte"`
	// NICBound is set when 1/β_ij ≤ 0. Where the senders' NICs, not the CPUs, bound the
	// transfers (any TCP network today), a one-to-two experiment takes about twice a round
	// trip with the message, so t_i comes out as the NIC's serialisation time 1/R, and the
	// round trip T_ij(M) ≈ M/R leaves 1/β_ij ≈ −1/R once t_i and t_j are taken off. The fit
	// still reproduces the round trips (that is what the model is fitted to), but β_ij is no
	// link rate there; the calibration says so instead of refusing the model.
	NICBound bool `json:"nic_bound,omitempty"`
}

// meanVar is a measurement's mean and the variance of that mean (s²/reps).
type meanVar struct {
	mean, v float64
	reps    int
}

// welford accumulates repetitions by Welford's update (stable for nearly equal values).
type welford struct {
	n        int
	mean, m2 float64
}

func (w *welford) add(x float64) {
	w.n++
	d := x - w.mean
	w.mean += d / float64(w.n)
	w.m2 += d * (x - w.mean)
}

func (w welford) meanVar() meanVar {
	mv := meanVar{mean: w.mean, reps: w.n}
	if w.n > 1 {
		mv.v = w.m2 / float64(w.n-1) / float64(w.n)
	}
	return mv
}

// FitLMO estimates the LMO parameters (Lastovetsky et al., §3) from round trips and one-to-two
// experiments, every measurement averaged over its repetitions first.
//
// Fixed delays: an empty round trip gives T_ij(0) = 2C_i + 2C_j, so each triplet i, j, k gives
// C_i = (T_ij + T_ik − T_jk)/4. C_i is the mean over the (n−1)(n−2)/2 triplets containing i,
// which has the closed form C_i = ((n−1)·S_i − S)/(2(n−1)(n−2)), S_i = Σ_j T_ij and S the sum
// over all pairs: O(n²) for all nodes instead of O(n³).
//
// Per-byte delays: a one-to-two experiment with root i sends M to j and k and gets empty
// replies: T_i(M) = 4C_i + 2t_i·M + max over r ∈ {j, k} of (2C_r + t_r·M + M/β_ir), so with j
// the receiver of the longer round trip T_ij(M) (M out, nothing back),
// t_i = (T_i(M) − T_ij(M) − 2C_i)/M, averaged over the node's experiments.
//
// Rates: 1/β_ij = (T_ij(M) − 2C_i − 2C_j)/M − t_i − t_j, averaged over the sizes measured.
//
// Intervals: every estimate is a linear combination of measurement means (given which
// receiver was the longer in each one-to-two experiment; the C terms cancel in 1/β), so its
// variance is Σ coefficient²·Var(mean), Var(mean) = s²/reps, with Student t at MinReps − 1
// degrees of freedom. The rate's interval is the inverse of 1/β's.
//
// Missing data is an error naming what is missing: a pair without an empty round trip, a node
// without one-to-two experiments, a pair without a round trip of the message size.
func FitLMO(rts []datasets.RoundTrip, o2t []datasets.OneToTwo) (*LMOFit, error) {
	idx := map[string]int{}
	var names []string
	lastName, lastIdx := "", -1
	node := func(n string) int {
		if n == lastName && lastIdx >= 0 {
			return lastIdx
		}
		i, ok := idx[n]
		if !ok {
			i = len(names)
			idx[n] = i
			names = append(names, n)
		}
		lastName, lastIdx = n, i
		return i
	}
	// Index the nodes of the empty round trips first, so that matrices can be dense.
	for _, r := range rts {
		if r.BytesOut == 0 && r.BytesBack == 0 {
			node(r.I)
			node(r.J)
		}
	}
	n := len(names)
	if n < 3 {
		have := "no empty round trips"
		if n > 0 {
			have = fmt.Sprintf("empty round trips between only %d nodes %v", n, names)
		}
		return nil, fmt.Errorf("estimate: LMO: %s; the model needs empty round trips (roundtrips rows with bytes_out = bytes_back = 0) between every pair of at least 3 nodes, and one-to-two experiments (one_to_two rows) among them", have)
	}
	lookup := func(name string) (int, bool) {
		if name == lastName && lastIdx >= 0 {
			return lastIdx, true
		}
		i, ok := idx[name]
		if ok {
			lastName, lastIdx = name, i
		}
		return i, ok
	}
	empty := make([]welford, n*n) // upper triangle, i < j
	msgs := map[int64][]welford{} // message size → upper triangle
	at := func(i, j int) int {
		if i > j {
			i, j = j, i
		}
		return i*n + j
	}
	for _, r := range rts {
		i, ok1 := lookup(r.I)
		j, ok2 := lookup(r.J)
		switch {
		case r.BytesOut == 0 && r.BytesBack == 0:
			empty[at(i, j)].add(r.Seconds)
		case !ok1 || !ok2:
			continue // a pair outside the triplet design
		case r.BytesBack == 0 || r.BytesOut == 0:
			// T(M, 0) = T(0, M) in the model: the message's direction does not matter.
			m := r.BytesOut + r.BytesBack
			w, ok := msgs[m]
			if !ok {
				w = make([]welford, n*n)
				msgs[m] = w
			}
			w[at(i, j)].add(r.Seconds)
		}
	}
	fit := &LMOFit{MinReps: math.MaxInt}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			w := empty[at(i, j)]
			if w.n == 0 {
				return nil, fmt.Errorf("estimate: LMO: no empty round trip between %s and %s (every triplet needs all three)", names[i], names[j])
			}
			fit.MinReps = min(fit.MinReps, w.n)
		}
	}
	t0 := func(i, j int) float64 { return empty[at(i, j)].mean } // mean empty round trip T_ij(0)
	// Fixed delays by the closed form, with the variance of the linear combination: pairs
	// containing i weigh 1/(2(n−1)), the others −1/(2(n−1)(n−2)).
	nf := float64(n)
	var total, totalV, sumSq float64
	s, sv := make([]float64, n), make([]float64, n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if j != i {
				mv := empty[at(i, j)].meanVar()
				s[i] += mv.mean
				sv[i] += mv.v
				sumSq += mv.mean * mv.mean / 2
			}
		}
		total += s[i] / 2
		totalV += sv[i] / 2
	}
	c, cv := make([]float64, n), make([]float64, n)
	for i := 0; i < n; i++ {
		c[i] = ((nf-1)*s[i] - total) / (2 * (nf - 1) * (nf - 2))
		a, b := 1/(2*(nf-1)), 1/(2*(nf-1)*(nf-2))
		cv[i] = a*a*sv[i] + b*b*(totalV-sv[i])
	}
	// One-to-two experiments, per root.
	type o2tKey struct {
		root, j, k int
		m          int64
	}
	exps := map[o2tKey]*welford{}
	for _, r := range o2t {
		ri, ok1 := lookup(r.Root)
		rj, ok2 := lookup(r.J)
		rk, ok3 := lookup(r.K)
		if !ok1 || !ok2 || !ok3 {
			return nil, fmt.Errorf("estimate: LMO: one-to-two experiment %s→%s,%s involves a node without empty round trips", r.Root, r.J, r.K)
		}
		if r.Bytes <= 0 {
			continue
		}
		k := o2tKey{ri, rj, rk, r.Bytes}
		w := exps[k]
		if w == nil {
			w = &welford{}
			exps[k] = w
		}
		w.add(r.Seconds)
	}
	msgMean := func(i, j int, m int64) (meanVar, error) {
		w := msgs[m]
		if w == nil || w[at(i, j)].n == 0 {
			return meanVar{}, fmt.Errorf("estimate: LMO: no round trip of %d B between %s and %s", m, names[i], names[j])
		}
		return w[at(i, j)].meanVar(), nil
	}
	// A_i = mean over i's experiments of (T_i(M) − T_ij(M))/M; t_i = A_i − 2C_i/M̄ where the
	// C term is carried per experiment. count[i][j] records how often j was the longer leg.
	tSum, tN := make([]float64, n), make([]int, n)
	aVar := make([]float64, n)          // variance of the T_e and T_ij(M) part of t_i
	count := make([]map[int]float64, n) // Σ over experiments of 1/(E·M) for each chosen j
	sizes := map[int64]bool{}
	perRoot := make([][]o2tKey, n)
	for k := range exps {
		perRoot[k.root] = append(perRoot[k.root], k)
	}
	tVar := make([]float64, n)
	for i := 0; i < n; i++ {
		keys := perRoot[i]
		if len(keys) == 0 {
			return nil, fmt.Errorf("estimate: LMO: node %s is the root of no one-to-two experiment; t and β need one", names[i])
		}
		slices.SortFunc(keys, func(a, b o2tKey) int {
			if a.j != b.j {
				return a.j - b.j
			}
			if a.k != b.k {
				return a.k - b.k
			}
			return int(a.m - b.m)
		})
		count[i] = map[int]float64{}
		e := float64(len(keys))
		var cTerm float64 // Σ over experiments of 2/(E·M), the coefficient of C_i
		selV := map[int]float64{}
		for _, k := range keys {
			te := exps[k].meanVar()
			fit.MinReps = min(fit.MinReps, te.reps)
			mj, err := msgMean(i, k.j, k.m)
			if err != nil {
				return nil, err
			}
			mk, err := msgMean(i, k.k, k.m)
			if err != nil {
				return nil, err
			}
			long, lj := mj, k.j
			if mk.mean > mj.mean {
				long, lj = mk, k.k
			}
			fm := float64(k.m)
			sizes[k.m] = true
			tSum[i] += (te.mean - long.mean - 2*c[i]) / fm
			tN[i]++
			aVar[i] += te.v / (e * e * fm * fm)
			count[i][lj] += 1 / (e * fm)
			selV[lj] = long.v
			cTerm += 2 / (e * fm)
		}
		// In node order, so that the sum's rounding is the same every run.
		chosen := make([]int, 0, len(count[i]))
		for j := range count[i] {
			chosen = append(chosen, j)
		}
		slices.Sort(chosen)
		for _, j := range chosen {
			w := count[i][j]
			aVar[i] += w * w * selV[j]
		}
		tVar[i] = aVar[i] + cTerm*cTerm*cv[i]
	}
	var tq float64
	if fit.MinReps > 1 {
		tq = distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(fit.MinReps - 1)}.Quantile(0.975)
	}
	t := make([]float64, n)
	for i := 0; i < n; i++ {
		t[i] = tSum[i] / float64(tN[i])
		half := tq * math.Sqrt(tVar[i])
		hc := tq * math.Sqrt(cv[i])
		fit.Nodes = append(fit.Nodes, LMONodeFit{Name: names[i],
			C:          Param{Value: c[i], CILow: c[i] - hc, CIHigh: c[i] + hc, N: n - 1},
			T:          Param{Value: t[i], CILow: t[i] - half, CIHigh: t[i] + half, N: tN[i]},
			CTripletSD: tripletSD(n, i, t0, c[i], s, sumSq)})
	}
	for m := range sizes {
		fit.MessageBytes = append(fit.MessageBytes, m)
	}
	slices.Sort(fit.MessageBytes)
	// Rates: 1/β_ij = T_ij(M)/M − A_i − A_j once the C terms cancel; averaged over sizes.
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			var inv, v float64
			k := 0
			for _, m := range fit.MessageBytes {
				mv, err := msgMean(i, j, m)
				if err != nil {
					return nil, err
				}
				fm := float64(m)
				inv += (mv.mean-2*c[i]-2*c[j])/fm - t[i] - t[j]
				// Coefficient of T_ij(M) in T_ij/M − A_i − A_j: 1/M plus what A_i and A_j
				// subtract for the experiments where j (resp. i) was the longer leg.
				coef := 1/fm + count[i][j] + count[j][i]
				v += coef*coef*mv.v + aVar[i] + aVar[j] - count[i][j]*count[i][j]*mv.v - count[j][i]*count[j][i]*mv.v
				k++
			}
			inv /= float64(k)
			v /= float64(k * k)
			half := tq * math.Sqrt(math.Max(v, 0))
			if math.IsNaN(inv) || math.IsInf(inv, 0) {
				return nil, fmt.Errorf("estimate: LMO: link %s–%s: 1/β = %g s/B", names[i], names[j], inv)
			}
			link := LMOLinkFit{I: names[i], J: names[j], InverseRate: Param{Value: inv, CILow: inv - half, CIHigh: inv + half, N: k},
				RateBps: Param{Value: math.Inf(1), CILow: math.Inf(1), CIHigh: math.Inf(1), N: k}, NICBound: !(inv > 0)}
			// The rate is 8/(1/β); an interval of 1/β reaching 0 or below leaves it unbounded.
			if inv > 0 {
				link.RateBps.Value = 8 / inv
			}
			if inv+half > 0 {
				link.RateBps.CILow = 8 / (inv + half)
			}
			if inv-half > 0 {
				link.RateBps.CIHigh = 8 / (inv - half)
			}
			fit.Links = append(fit.Links, link)
		}
	}
	return fit, nil
}

// nicBoundWarning says, when some links came out NIC-bound, how many and what the per-byte
// delays t_i say instead; empty when none did.
func (f *LMOFit) nicBoundWarning() string {
	k := 0
	for _, l := range f.Links {
		if l.NICBound {
			k++
		}
	}
	if k == 0 {
		return ""
	}
	ts := make([]float64, len(f.Nodes))
	for i, n := range f.Nodes {
		ts[i] = n.T.Value
	}
	slices.Sort(ts)
	med := ts[len(ts)/2]
	return fmt.Sprintf("lmo: %d of %d links have 1/β ≤ 0: the one-to-two experiments put the senders' NIC serialisation into t_i (median %.4g ns/B, %.4g Mbit/s), so β_ij is no link rate there; the model keeps the fitted values, which reproduce the round trips",
		k, len(f.Links), med*1e9, 8/med/1e6)
}

// tripletSD is the standard deviation of x_jk = (T_ij + T_ik − T_jk)/4 over the pairs {j, k}
// of other nodes, around their mean ci, in O(n) from row sums: with a_j = T_ij and m = n − 1,
// Σ(a_j + a_k)² = (m−2)·Σa² + (Σa)², Σ(a_j + a_k)·T_jk = Σ_j a_j·(S_j − a_j), and Σ T_jk² is
// the sum over all pairs less the pairs containing i.
func tripletSD(n, i int, t0 func(i, j int) float64, ci float64, rowSum []float64, sumSq float64) float64 {
	m := float64(n - 1)
	var sa, saa, cross float64
	for j := 0; j < n; j++ {
		if j == i {
			continue
		}
		a := t0(i, j)
		sa += a
		saa += a * a
		cross += a * (rowSum[j] - a)
	}
	pairs := m * (m - 1) / 2
	if pairs < 2 {
		return 0
	}
	sumX2 := ((m-2)*saa + sa*sa - 2*cross + (sumSq - saa)) / 16
	v := (sumX2 - pairs*ci*ci) / (pairs - 1)
	return math.Sqrt(math.Max(v, 0))
}
