package validate

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
)

// A transfer's situation is what else its pattern sends where it goes, the causes the residuals
// of the TCP datasets sort by (data/tcp/README.md): which resources of its data path it shares
// with other transfers of the pattern going the same way — its sender's outgoing NIC direction,
// the core (uplinks or backbone, between racks), its receiver's incoming NIC direction — and
// whether its acknowledgements' path is busy: its sender receives, or its receiver sends, other
// transfers of the pattern, whose data its acknowledgements queue behind (the NIC ends only:
// traffic on the reverse core does not make it busy). Sharing is by count,
// not by what a model says is saturated: on a backbone ten times a NIC's rate "core" costs
// nothing, which the accuracy of those transfers shows. Accuracy per situation says which cause
// the error that remains comes from, beside the noise limit of the same transfers.

// dataPaths name the shared parts of a data path, indexed by sender + 2·receiver + 4·core.
var dataPaths = []string{"alone", "sender", "receiver", "sender+receiver", "core", "sender+core", "core+receiver", "sender+core+receiver"}

// situationCount is the number of situations: each data path, acknowledgements quiet or busy.
var situationCount = 2 * len(dataPaths)

// situationName is situation i's name, "<data path>/ack-quiet" or "<data path>/ack-busy".
func situationName(i int) string {
	ack := "ack-quiet"
	if i%2 == 1 {
		ack = "ack-busy"
	}
	return dataPaths[i/2] + "/" + ack
}

// situationOf is the situation of each flow of a pattern on cluster cl. Two transfers between
// the same pair share their whole path.
func situationOf(cl *cluster.Cluster, flows []contention.Flow) ([]int, error) {
	count := contention.ResourceCounts(cl, flows)
	res := cl.Resources()
	idx := make([]int, len(flows))
	for i, f := range flows {
		path, err := cl.Path(f.Src, f.Dst)
		if err != nil {
			return nil, err
		}
		if len(path) == 0 {
			return nil, fmt.Errorf("validate: transfer %s→%s crosses no resource", f.Src, f.Dst)
		}
		first, last := path[0], path[len(path)-1]
		data := 0
		if count[first] > 1 {
			data++
		}
		if count[last] > 1 {
			data += 2
		}
		for _, r := range path[1 : len(path)-1] {
			if count[r] > 1 {
				data += 4
				break
			}
		}
		ack := 0
		if count[res[first].Reverse] > 0 || count[res[last].Reverse] > 0 {
			ack = 1
		}
		idx[i] = 2*data + ack
	}
	return idx, nil
}

// SituationAccuracy is every model's accuracy on the held-out transfers of one situation,
// all settings together.
type SituationAccuracy struct {
	// Situation is "<data path>/<acknowledgements' path>": alone, or the shared parts among
	// sender, core and receiver joined by "+"; ack-quiet or ack-busy.
	Situation  string           `json:"situation"`
	Transfers  int              `json:"transfers"`
	Models     []SituationModel `json:"models"`
	NoiseLimit NoiseLimit       `json:"noise_limit"`
}

// SituationModel is one model's accuracy on a situation's transfers: mean |ε|, bias (mean
// signed ε) and the share with |ε| ≤ 10%.
type SituationModel struct {
	Model      string  `json:"model"`
	MeanAbsErr float64 `json:"mean_abs_err"`
	MeanErr    float64 `json:"mean_err"`
	Within10   float64 `json:"within_10pct"`
}

// Model is the named model's accuracy on the situation, if it was scored.
func (s *SituationAccuracy) Model(name string) (SituationModel, bool) {
	for _, m := range s.Models {
		if m.Model == name {
			return m, true
		}
	}
	return SituationModel{}, false
}

// Best is the model with the largest share within ±10% on the situation, the smaller mean |ε|
// on a tie, the first listed on both (BestFirst).
func (s *SituationAccuracy) Best() SituationModel {
	if len(s.Models) == 0 {
		return SituationModel{}
	}
	return slices.MinFunc(s.Models, func(a, b SituationModel) int {
		return BestFirst(a.Within10, a.MeanAbsErr, b.Within10, b.MeanAbsErr)
	})
}

// BestFirst orders scores by share within ±10%, larger first, then by mean |ε|, smaller
// first: how the situations' best model, the leaderboard and the cross-validation rank models.
func BestFirst(withinA, absA, withinB, absB float64) int {
	return cmp.Or(cmp.Compare(withinB, withinA), cmp.Compare(absA, absB))
}
