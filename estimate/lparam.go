package estimate

import (
	"cmp"
	"fmt"
	"slices"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/commcal/commcal/datasets"
)

// LFit is the L parameter of the ping-pong benchmark (thesis appendix §A.5): L(m) per pair count and
// the bilinear surface L(m, P) = a + b·m + c·P + d·m·P.
type LFit struct {
	Points []LPoint `json:"points"`
	A      Param    `json:"a_s"`
	B      Param    `json:"b_s_per_byte"`
	C      Param    `json:"c_s_per_pair"`
	D      Param    `json:"d_s_per_byte_pair"`
	R2     float64  `json:"r2"`
}

// LPoint is L(m) for P pairs: the mean over repetitions with its interval.
type LPoint struct {
	Pairs int64 `json:"pairs"`
	Bytes int64 `json:"bytes"`
	L     Param `json:"l_s"`
}

// FitL computes L = RTT/2 − Os − Or − Ur for every repetition (equation A.4), summarises it per
// (P, m), and fits the bilinear surface by weighted least squares over all repetitions: the
// noise of L grows with the round trip, so each repetition weighs 1/RTT̄², RTT̄ the mean round
// trip of its (P, m).
func FitL(rows []datasets.PingPongPairs) (*LFit, error) {
	type key struct{ p, m int64 }
	byKey := map[key][]float64{}
	rtt := map[key][]float64{}
	for _, r := range rows {
		k := key{r.Pairs, r.Bytes}
		byKey[k] = append(byKey[k], r.RTT/2-r.Os-r.Or-r.Ur)
		rtt[k] = append(rtt[k], r.RTT)
	}
	if len(byKey) < 5 {
		return nil, fmt.Errorf("estimate: L: %d (pairs, size) points in pingpong_pairs, need at least 5 for the 4 coefficients (say 2 pair counts × 3 message sizes)", len(byKey))
	}
	keys := make([]key, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int { return cmp.Or(cmp.Compare(a.p, b.p), cmp.Compare(a.m, b.m)) })
	fit := &LFit{}
	var xs, ys, ws []float64
	for _, k := range keys {
		fit.Points = append(fit.Points, LPoint{Pairs: k.p, Bytes: k.m, L: meanParam(byKey[k])})
		w := stat.Mean(rtt[k], nil)
		for _, l := range byKey[k] {
			fm, fp := float64(k.m), float64(k.p)
			xs = append(xs, 1, fm, fp, fm*fp)
			ys = append(ys, l)
			ws = append(ws, 1/(w*w))
		}
	}
	reg, err := LeastSquares(mat.NewDense(len(ys), 4, xs), ys, ws)
	if err != nil {
		return nil, fmt.Errorf("estimate: L surface: %w", err)
	}
	param := func(i int) Param {
		return Param{Value: reg.Coef[i], CILow: reg.CILow[i], CIHigh: reg.CIHigh[i], N: reg.N}
	}
	fit.A, fit.B, fit.C, fit.D, fit.R2 = param(0), param(1), param(2), param(3), reg.R2
	return fit, nil
}
