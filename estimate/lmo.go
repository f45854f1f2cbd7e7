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
	b, err := newLMOBuilder(rts)
	if err != nil {
		return nil, err
	}
	b.fixedDelays()
	if err := b.oneToTwo(o2t); err != nil {
		return nil, err
	}
	if err := b.perByteDelays(); err != nil {
		return nil, err
	}
	b.nodeFits()
	if err := b.linkFits(); err != nil {
		return nil, err
	}
	return b.fit, nil
}

// lmoNodes numbers the nodes of an LMO fit in the order first met; it remembers the last
// name looked up, since the rows name the same nodes in runs.
type lmoNodes struct {
	idx      map[string]int
	names    []string
	lastName string
	lastIdx  int
}

// add is the number of node name, which it gives the next number when new.
func (ns *lmoNodes) add(name string) int {
	if name == ns.lastName && ns.lastIdx >= 0 {
		return ns.lastIdx
	}
	i, ok := ns.idx[name]
	if !ok {
		i = len(ns.names)
		ns.idx[name] = i
		ns.names = append(ns.names, name)
	}
	ns.lastName, ns.lastIdx = name, i
	return i
}

// lookup is the number of node name and whether it has one.
func (ns *lmoNodes) lookup(name string) (int, bool) {
	if name == ns.lastName && ns.lastIdx >= 0 {
		return ns.lastIdx, true
	}
	i, ok := ns.idx[name]
	if ok {
		ns.lastName, ns.lastIdx = name, i
	}
	return i, ok
}

// o2tKey is a one-to-two experiment: its root, its two receivers and the message size.
type o2tKey struct {
	root, j, k int
	m          int64
}

// lmoBuilder is FitLMO in progress: the n nodes of the empty round trips, the measurements
// averaged over their repetitions, and the estimates each step adds for the next.
type lmoBuilder struct {
	nodes lmoNodes
	n     int
	empty []welford           // empty round trips, upper triangle (at), i < j
	msgs  map[int64][]welford // message size → round trips with the message, upper triangle
	exps  map[o2tKey]*welford // one-to-two experiments
	fit   *LMOFit
	// Fixed delays: C_i and its variance, the row sums S_i of the empty round trips, and half
	// the sum of their squares over ordered pairs (tripletSD).
	c, cv, s []float64
	sumSq    float64
	// Per-byte delays: t_i's sum and number of experiments, the variance of its T_e and
	// T_ij(M) part, and per root, Σ 1/(E·M) over the experiments where j was the longer leg.
	tSum  []float64
	tN    []int
	aVar  []float64
	tVar  []float64
	count []map[int]float64
	sizes map[int64]bool
	tq    float64
	t     []float64
}

// at is the index of pair {i, j} in the upper triangles.
func (b *lmoBuilder) at(i, j int) int {
	if i > j {
		i, j = j, i
	}
	return i*b.n + j
}

// newLMOBuilder numbers the nodes of the empty round trips first, so that matrices can be
// dense, and averages every round trip between them over its repetitions: the empty ones per
// pair, the others per pair and message size (T(M, 0) = T(0, M) in the model: the message's
// direction does not matter). It needs at least 3 nodes and an empty round trip between every
// pair of them.
func newLMOBuilder(rts []datasets.RoundTrip) (*lmoBuilder, error) {
	b := &lmoBuilder{nodes: lmoNodes{idx: map[string]int{}, lastIdx: -1}, msgs: map[int64][]welford{}, fit: &LMOFit{MinReps: math.MaxInt}}
	for _, r := range rts {
		if r.BytesOut == 0 && r.BytesBack == 0 {
			b.nodes.add(r.I)
			b.nodes.add(r.J)
		}
	}
	n, names := len(b.nodes.names), b.nodes.names
	if n < 3 {
		have := "no empty round trips"
		if n > 0 {
			have = fmt.Sprintf("empty round trips between only %d nodes %v", n, names)
		}
		return nil, fmt.Errorf("estimate: LMO: %s; the model needs empty round trips (roundtrips rows with bytes_out = bytes_back = 0) between every pair of at least 3 nodes, and one-to-two experiments (one_to_two rows) among them", have)
	}
	b.n, b.empty = n, make([]welford, n*n)
	for _, r := range rts {
		i, ok1 := b.nodes.lookup(r.I)
		j, ok2 := b.nodes.lookup(r.J)
		switch {
		case r.BytesOut == 0 && r.BytesBack == 0:
			b.empty[b.at(i, j)].add(r.Seconds)
		case !ok1 || !ok2:
			continue // a pair outside the triplet design
		case r.BytesBack == 0 || r.BytesOut == 0:
			m := r.BytesOut + r.BytesBack
			w, ok := b.msgs[m]
			if !ok {
				w = make([]welford, n*n)
				b.msgs[m] = w
			}
			w[b.at(i, j)].add(r.Seconds)
		}
	}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			w := b.empty[b.at(i, j)]
			if w.n == 0 {
				return nil, fmt.Errorf("estimate: LMO: no empty round trip between %s and %s (every triplet needs all three)", names[i], names[j])
			}
			b.fit.MinReps = min(b.fit.MinReps, w.n)
		}
	}
	return b, nil
}

// t0 is the mean empty round trip T_ij(0).
func (b *lmoBuilder) t0(i, j int) float64 { return b.empty[b.at(i, j)].mean }

// fixedDelays computes C_i by the closed form (FitLMO), with the variance of the linear
// combination: pairs containing i weigh 1/(2(n−1)), the others −1/(2(n−1)(n−2)).
func (b *lmoBuilder) fixedDelays() {
	n := b.n
	nf := float64(n)
	var total, totalV float64
	b.s = make([]float64, n)
	sv := make([]float64, n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if j != i {
				mv := b.empty[b.at(i, j)].meanVar()
				b.s[i] += mv.mean
				sv[i] += mv.v
				b.sumSq += mv.mean * mv.mean / 2
			}
		}
		total += b.s[i] / 2
		totalV += sv[i] / 2
	}
	b.c, b.cv = make([]float64, n), make([]float64, n)
	for i := 0; i < n; i++ {
		b.c[i] = ((nf-1)*b.s[i] - total) / (2 * (nf - 1) * (nf - 2))
		a, bb := 1/(2*(nf-1)), 1/(2*(nf-1)*(nf-2))
		b.cv[i] = a*a*sv[i] + bb*bb*(totalV-sv[i])
	}
}

// oneToTwo averages the one-to-two experiments with a message over their repetitions; every
// node of one must have empty round trips.
func (b *lmoBuilder) oneToTwo(o2t []datasets.OneToTwo) error {
	b.exps = map[o2tKey]*welford{}
	for _, r := range o2t {
		ri, ok1 := b.nodes.lookup(r.Root)
		rj, ok2 := b.nodes.lookup(r.J)
		rk, ok3 := b.nodes.lookup(r.K)
		if !ok1 || !ok2 || !ok3 {
			return fmt.Errorf("estimate: LMO: one-to-two experiment %s→%s,%s involves a node without empty round trips", r.Root, r.J, r.K)
		}
		if r.Bytes <= 0 {
			continue
		}
		k := o2tKey{ri, rj, rk, r.Bytes}
		w := b.exps[k]
		if w == nil {
			w = &welford{}
			b.exps[k] = w
		}
		w.add(r.Seconds)
	}
	return nil
}

// msgMean is the mean round trip of m bytes between i and j, an error where there is none.
func (b *lmoBuilder) msgMean(i, j int, m int64) (meanVar, error) {
	w := b.msgs[m]
	if w == nil || w[b.at(i, j)].n == 0 {
		return meanVar{}, fmt.Errorf("estimate: LMO: no round trip of %d B between %s and %s", m, b.nodes.names[i], b.nodes.names[j])
	}
	return w[b.at(i, j)].meanVar(), nil
}

// perByteDelays computes every node's t_i from the one-to-two experiments it is the root of
// (rootDelay); every node must be the root of one.
func (b *lmoBuilder) perByteDelays() error {
	n := b.n
	b.tSum, b.tN = make([]float64, n), make([]int, n)
	b.aVar, b.tVar = make([]float64, n), make([]float64, n)
	b.count = make([]map[int]float64, n)
	b.sizes = map[int64]bool{}
	perRoot := make([][]o2tKey, n)
	for k := range b.exps {
		perRoot[k.root] = append(perRoot[k.root], k)
	}
	for i := 0; i < n; i++ {
		if len(perRoot[i]) == 0 {
			return fmt.Errorf("estimate: LMO: node %s is the root of no one-to-two experiment; t and β need one", b.nodes.names[i])
		}
		if err := b.rootDelay(i, perRoot[i]); err != nil {
			return err
		}
	}
	return nil
}

// rootDelay computes t_i from root i's experiments keys: A_i = mean over i's experiments of
// (T_i(M) − T_ij(M))/M; t_i = A_i − 2C_i/M̄ where the C term is carried per experiment.
// count[i][j] records how often j was the longer leg. The experiments are taken in order of
// receivers and size, so that the sums round the same every run.
func (b *lmoBuilder) rootDelay(i int, keys []o2tKey) error {
	slices.SortFunc(keys, func(x, y o2tKey) int {
		if x.j != y.j {
			return x.j - y.j
		}
		if x.k != y.k {
			return x.k - y.k
		}
		return int(x.m - y.m)
	})
	b.count[i] = map[int]float64{}
	e := float64(len(keys))
	var cTerm float64 // Σ over experiments of 2/(E·M), the coefficient of C_i
	selV := map[int]float64{}
	for _, k := range keys {
		te := b.exps[k].meanVar()
		b.fit.MinReps = min(b.fit.MinReps, te.reps)
		mj, err := b.msgMean(i, k.j, k.m)
		if err != nil {
			return err
		}
		mk, err := b.msgMean(i, k.k, k.m)
		if err != nil {
			return err
		}
		long, lj := mj, k.j
		if mk.mean > mj.mean {
			long, lj = mk, k.k
		}
		fm := float64(k.m)
		b.sizes[k.m] = true
		b.tSum[i] += (te.mean - long.mean - 2*b.c[i]) / fm
		b.tN[i]++
		b.aVar[i] += te.v / (e * e * fm * fm)
		b.count[i][lj] += 1 / (e * fm)
		selV[lj] = long.v
		cTerm += 2 / (e * fm)
	}
	// In node order, so that the sum's rounding is the same every run.
	chosen := make([]int, 0, len(b.count[i]))
	for j := range b.count[i] {
		chosen = append(chosen, j)
	}
	slices.Sort(chosen)
	for _, j := range chosen {
		w := b.count[i][j]
		b.aVar[i] += w * w * selV[j]
	}
	b.tVar[i] = b.aVar[i] + cTerm*cTerm*b.cv[i]
	return nil
}

// nodeFits reports every node's C and t with their intervals (Student t at MinReps − 1
// degrees of freedom) and C's spread over the triplets, and the message sizes measured.
func (b *lmoBuilder) nodeFits() {
	n, fit := b.n, b.fit
	if fit.MinReps > 1 {
		b.tq = distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(fit.MinReps - 1)}.Quantile(0.975)
	}
	b.t = make([]float64, n)
	for i := 0; i < n; i++ {
		c, t := b.c[i], &b.t[i]
		*t = b.tSum[i] / float64(b.tN[i])
		half := b.tq * math.Sqrt(b.tVar[i])
		hc := b.tq * math.Sqrt(b.cv[i])
		fit.Nodes = append(fit.Nodes, LMONodeFit{Name: b.nodes.names[i],
			C:          Param{Value: c, CILow: c - hc, CIHigh: c + hc, N: n - 1},
			T:          Param{Value: *t, CILow: *t - half, CIHigh: *t + half, N: b.tN[i]},
			CTripletSD: tripletSD(n, i, b.t0, c, b.s, b.sumSq)})
	}
	for m := range b.sizes {
		fit.MessageBytes = append(fit.MessageBytes, m)
	}
	slices.Sort(fit.MessageBytes)
}

// linkFits reports every link's 1/β_ij = T_ij(M)/M − A_i − A_j once the C terms cancel,
// averaged over the message sizes, with its interval, and the rate 8β_ij.
func (b *lmoBuilder) linkFits() error {
	for i := 0; i < b.n; i++ {
		for j := i + 1; j < b.n; j++ {
			link, err := b.linkFit(i, j)
			if err != nil {
				return err
			}
			b.fit.Links = append(b.fit.Links, link)
		}
	}
	return nil
}

// linkFit is link i–j's fit (linkFits).
func (b *lmoBuilder) linkFit(i, j int) (LMOLinkFit, error) {
	c, t, count, aVar := b.c, b.t, b.count, b.aVar
	var inv, v float64
	k := 0
	for _, m := range b.fit.MessageBytes {
		mv, err := b.msgMean(i, j, m)
		if err != nil {
			return LMOLinkFit{}, err
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
	half := b.tq * math.Sqrt(math.Max(v, 0))
	names := b.nodes.names
	if math.IsNaN(inv) || math.IsInf(inv, 0) {
		return LMOLinkFit{}, fmt.Errorf("estimate: LMO: link %s–%s: 1/β = %g s/B", names[i], names[j], inv)
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
	return link, nil
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
