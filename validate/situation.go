package validate

import (
	"fmt"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
)

// A transfer's situation is what else its pattern sends where it goes, the causes the residuals
// of the TCP datasets sort by (docs/journal/tcp-campaigns.md): which resources of its data path it shares
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
	Situation string `json:"situation"`
	GroupAccuracy
}
