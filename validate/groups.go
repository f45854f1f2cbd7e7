package validate

import (
	"cmp"
	"math"
	"slices"

	"github.com/commcal/commcal/contention"
)

// GroupAccuracy is every model's accuracy on a group of held-out transfers taken from all
// settings together (a situation, a size class), beside the group's noise limit.
type GroupAccuracy struct {
	Transfers  int          `json:"transfers"`
	Models     []GroupModel `json:"models"`
	NoiseLimit NoiseLimit   `json:"noise_limit"`
}

// GroupModel is one model's accuracy on a group's transfers: mean |ε|, bias (mean signed ε),
// the share with |ε| ≤ 10%, and the median of |predicted − measured| in seconds. The last
// tells a relative error from a delay: where it stays flat while transfers grow, what remains
// is a fixed time (a transient), not a share of the rate.
type GroupModel struct {
	Model         string  `json:"model"`
	MeanAbsErr    float64 `json:"mean_abs_err"`
	MeanErr       float64 `json:"mean_err"`
	Within10      float64 `json:"within_10pct"`
	MedianAbsErrS float64 `json:"median_abs_err_s"`
}

// Model is the named model's accuracy on the group, if it was scored.
func (g *GroupAccuracy) Model(name string) (GroupModel, bool) {
	for _, m := range g.Models {
		if m.Model == name {
			return m, true
		}
	}
	return GroupModel{}, false
}

// Best is the model with the largest share within ±10% on the group, the smaller mean |ε| on
// a tie, the first listed on both (BestFirst).
func (g *GroupAccuracy) Best() GroupModel {
	if len(g.Models) == 0 {
		return GroupModel{}
	}
	return slices.MinFunc(g.Models, func(a, b GroupModel) int {
		return BestFirst(a.Within10, a.MeanAbsErr, b.Within10, b.MeanAbsErr)
	})
}

// BestFirst orders scores by share within ±10%, larger first, then by mean |ε|, smaller
// first: how the groups' best model, the leaderboard and the cross-validation rank models.
func BestFirst(withinA, absA, withinB, absB float64) int {
	return cmp.Or(cmp.Compare(withinB, withinA), cmp.Compare(absA, absB))
}

// groupTally gathers a group's transfers as Validate scores them: per model (in model order)
// the signed relative errors and the absolute errors in seconds, and the noise terms.
type groupTally struct {
	errs, secs [][]float64
	noise      noiseTally
}

// add records model j's prediction of a transfer of the group.
func (g *groupTally) add(models, j int, predicted, measured float64) {
	if g.errs == nil {
		g.errs, g.secs = make([][]float64, models), make([][]float64, models)
	}
	g.errs[j] = append(g.errs[j], SignedError(predicted, measured))
	g.secs[j] = append(g.secs[j], math.Abs(predicted-measured))
}

// accuracy scores the group; ok is false when it has no transfer.
func (g *groupTally) accuracy(models []contention.Model) (ga GroupAccuracy, ok bool) {
	if len(g.errs) == 0 || len(g.errs[0]) == 0 {
		return GroupAccuracy{}, false
	}
	ga = GroupAccuracy{Transfers: len(g.errs[0]), NoiseLimit: g.noise.limit()}
	for j, m := range models {
		gm := GroupModel{Model: m.Name(), MedianAbsErrS: median(g.secs[j])}
		gm.MeanAbsErr, gm.MeanErr, gm.Within10 = SummarizeErrors(g.errs[j])
		ga.Models = append(ga.Models, gm)
	}
	return ga, true
}

// median is the middle value of x (the mean of the two middle ones for an even count), 0 for
// none; x is not changed.
func median(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	s := slices.Clone(x)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
