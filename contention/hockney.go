package contention

import (
	"context"

	"github.com/commcal/commcal/cluster"
)

// Hockney ignores contention: every transfer takes α + β·m, with α and β of its path class
// (the network's Latency and InverseBandwidth; β defaults to 8/ceiling seconds per byte).
// It is the floor every contention model must beat.
type Hockney struct{}

// Name implements Model.
func (Hockney) Name() string { return "hockney" }

// Predict implements Model. It has no loop to stop: one pass over the flows, which it does not
// start when ctx is already done.
func (Hockney) Predict(ctx context.Context, net *Network, flows []Flow) (*Prediction, error) {
	if err := stopped(ctx); err != nil {
		return nil, err
	}
	src, dst, err := nodePairs(net, flows)
	if err != nil {
		return nil, err
	}
	nodes := net.Cluster.Nodes()
	p := &Prediction{Times: make([]float64, len(flows)), FirstRates: make([]float64, len(flows)), Steps: 1}
	for i, f := range flows {
		class := cluster.InterRack
		if nodes[src[i]].RackIndex == nodes[dst[i]].RackIndex {
			class = cluster.IntraRack
		}
		beta, ok := net.InverseBandwidth[class]
		if !ok {
			beta = 8 / net.Ceiling
		}
		p.Times[i] = net.Latency[class] + beta*f.Bytes
		p.FirstRates[i] = 8 / beta
	}
	return p, nil
}
