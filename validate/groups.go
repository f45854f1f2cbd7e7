package validate

import (
	"cmp"
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
// is a fixed time (a transient), not a share of the rate. It is absent (nil) from an
// accuracy.json written by a commcal that did not compute it.
type GroupModel struct {
	Model         string   `json:"model"`
	MeanAbsErr    float64  `json:"mean_abs_err"`
	MeanErr       float64  `json:"mean_err"`
	Within10      float64  `json:"within_10pct"`
	MedianAbsErrS *float64 `json:"median_abs_err_s,omitempty"`
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

// GroupTable is a table of accuracy per group, as the text report and report.html print it:
// an anchor and a title, the name of the groups' column, what the groups are, the default
// model, and a row per group.
type GroupTable struct {
	ID, Title, Column, About, Default string
	Rows                              []GroupRow
}

// GroupRow is a group as the tables print it: its name and accuracy, the default model's
// accuracy (if it was scored) with its median error in milliseconds (if the file has it: an
// older accuracy.json has none), and the best model's (Best).
type GroupRow struct {
	Name string
	*GroupAccuracy
	DefaultModel, BestModel GroupModel
	HasDefault, HasMedian   bool
	MedianMs                float64
}

// newGroupRow is group g's row under name in a report whose default model is def.
func newGroupRow(name string, g *GroupAccuracy, def string) GroupRow {
	dm, ok := g.Model(def)
	row := GroupRow{Name: name, GroupAccuracy: g, DefaultModel: dm, HasDefault: ok, BestModel: g.Best()}
	if ok && dm.MedianAbsErrS != nil {
		row.HasMedian, row.MedianMs = true, 1e3**dm.MedianAbsErrS
	}
	return row
}

// GroupTables are the accuracy per situation and per size class, in accuracy.json's order; a
// table without groups is left out.
func (a *Accuracy) GroupTables() []GroupTable {
	sits := GroupTable{ID: "situations", Title: "Accuracy per situation", Column: "situation", Default: a.Default,
		About: "The held-out transfers of all settings by what else their pattern sends where they go: the parts of the data path shared with other transfers going the same way (sender: the sender's outgoing NIC direction; core: uplinks or backbone; receiver: the receiver's incoming NIC direction), or alone; ack-busy when the sender receives or the receiver sends another transfer (the acknowledgements queue behind that data). Sharing is by count, not by what a model calls saturated."}
	for i := range a.Situations {
		s := &a.Situations[i]
		sits.Rows = append(sits.Rows, newGroupRow(s.Situation, &s.GroupAccuracy, a.Default))
	}
	sizes := GroupTable{ID: "sizes", Title: "Accuracy per transfer size", Column: "size", Default: a.Default,
		About: "The held-out transfers of all settings by size, in powers of two. A median error in time that stays flat as transfers grow is a delay (slow start, the take-up of freed capacity), not a share of the rate."}
	for i := range a.Sizes {
		s := &a.Sizes[i]
		sizes.Rows = append(sizes.Rows, newGroupRow(s.Size, &s.GroupAccuracy, a.Default))
	}
	return slices.DeleteFunc([]GroupTable{sits, sizes}, func(t GroupTable) bool { return len(t.Rows) == 0 })
}

// groupTally gathers a group's transfers as Validate scores them: per model (in model order)
// the signed relative errors and the absolute errors in seconds, and the noise terms.
type groupTally struct {
	errs, secs [][]float64
	noise      noiseTally
}

// newGroupTally is an empty tally for that many models.
func newGroupTally(models int) *groupTally {
	return &groupTally{errs: make([][]float64, models), secs: make([][]float64, models)}
}

// add records model j's signed error e on a transfer of the group, and its absolute error in
// seconds.
func (g *groupTally) add(j int, e, secs float64) {
	g.errs[j] = append(g.errs[j], e)
	g.secs[j] = append(g.secs[j], secs)
}

// accuracy scores the group; ok is false when it has no transfer.
func (g *groupTally) accuracy(models []contention.Model) (ga GroupAccuracy, ok bool) {
	if len(g.errs) == 0 || len(g.errs[0]) == 0 {
		return GroupAccuracy{}, false
	}
	ga = GroupAccuracy{Transfers: len(g.errs[0]), NoiseLimit: g.noise.limit()}
	for j, m := range models {
		med := median(g.secs[j])
		gm := GroupModel{Model: m.Name(), MedianAbsErrS: &med}
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
