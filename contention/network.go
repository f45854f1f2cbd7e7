package contention

import (
	"context"
	"fmt"
	"math"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/internal/badinput"
)

// DefaultEfficiency is the share of a link's nominal rate that TCP over Ethernet delivers as
// goodput: 940 Mbit/s on 1 Gbit/s links (CCPE 2014, §5.1, β_E⁻¹ = 940 Mbit/s and the optical
// backbone's measured β_O⁻¹ = 9.4 Gbit/s).
const DefaultEfficiency = 0.94

// Network is what the models know of a cluster: each directed resource's capacity, the most
// one transfer can get (the per-flow ceiling, β_E⁻¹ in the papers), and optional latencies.
type Network struct {
	Cluster *cluster.Cluster
	// Capacity of each directed resource, in bits per second, indexed by resource ID.
	Capacity []float64
	// Ceiling is the rate a transfer reaches alone on an idle path, in bits per second.
	Ceiling float64
	// Latency, when set, is added to every predicted time, by path class (Hockney α).
	Latency map[cluster.PathClass]float64
	// InverseBandwidth is Hockney's β (seconds per byte) per path class, for the hockney
	// model; a class without one uses 8/Ceiling.
	InverseBandwidth map[cluster.PathClass]float64
	// Penalty holds the parameters of the penalty models.
	Penalty PenaltyParams
	// PenaltyTable holds back-solved penalties for penalty-table; nil means none.
	PenaltyTable *PenaltyTable
	// ContraFactor is φ of asymmetric-fitted: 1 applies the contra-flow rule fully, 0 not at all.
	ContraFactor float64
	// Learned holds the learned models' parameters by model name (Params.Learned).
	Learned map[string]*LearnedParams

	rev []int // reverse direction of each resource, built on first use
}

// reverse returns the reverse direction of every resource.
func (n *Network) reverse() []int {
	if n.rev == nil {
		res := n.Cluster.Resources()
		n.rev = make([]int, len(res))
		for i, r := range res {
			n.rev[i] = r.Reverse
		}
	}
	return n.rev
}

// NewNetwork derives a network from a cluster's nominal rates: every capacity is the nominal
// rate times efficiency, and the ceiling is the slowest NIC's capacity.
func NewNetwork(cl *cluster.Cluster, efficiency float64) *Network {
	if !(efficiency > 0 && efficiency <= 1) {
		panic(fmt.Sprintf("contention: efficiency %g outside (0, 1]", efficiency))
	}
	n := &Network{Cluster: cl, Capacity: make([]float64, len(cl.Resources())), Ceiling: math.Inf(1), ContraFactor: 1}
	for i, r := range cl.Resources() {
		n.Capacity[i] = r.RateBps * efficiency
	}
	for _, nd := range cl.Nodes() {
		n.Ceiling = math.Min(n.Ceiling, nd.NICRateBps*efficiency)
	}
	n.reverse()
	return n
}

// Flow is one transfer of a pattern.
type Flow struct {
	Src, Dst string
	Bytes    float64
}

// Prediction is a model's answer for one pattern.
type Prediction struct {
	// Times holds each flow's predicted completion time in seconds, in input order.
	Times []float64
	// Steps is the number of steps of Algorithm 2 (1 for models without steps).
	Steps int
	// FirstRates holds each flow's rate in bits per second during the first step.
	FirstRates []float64
}

// Model is one named prediction variant. Predict stops when ctx is done, within a step of the
// step loop (or an iteration of α-fair sharing), with an error that wraps ctx.Err(): a
// prediction of 10⁵ transfers can run for minutes, and an interrupted command must not wait
// for it.
type Model interface {
	Name() string
	Predict(ctx context.Context, net *Network, flows []Flow) (*Prediction, error)
}

// ResourceCounts is the number of flows crossing each directed resource of cl, by resource
// ID; a flow the cluster has no path for counts nowhere.
func ResourceCounts(cl *cluster.Cluster, flows []Flow) []int {
	count := make([]int, len(cl.Resources()))
	for _, f := range flows {
		path, _ := cl.Path(f.Src, f.Dst)
		for _, r := range path {
			count[r]++
		}
	}
	return count
}

// finishTol is the relative tolerance of the step loop: a flow whose remaining time is within
// this fraction of the step's length finishes in that step. The models' rates are ratios of
// capacities and counts, so flows that finish together in exact arithmetic differ here by a
// few ulps; 1e-9 is far above that and far below any measurable time difference.
const finishTol = 1e-9

// checkFlow says what is wrong with transfer i of a pattern on cl, as bad input.
func checkFlow(cl *cluster.Cluster, i int, f Flow) error {
	bad := func(format string, a ...any) error {
		return badinput.Errorf("", "contention: transfer %d (%q → %q): %s", i, f.Src, f.Dst, fmt.Sprintf(format, a...))
	}
	if _, ok := cl.Node(f.Src); !ok {
		return bad("source %q is not a node of cluster %s", f.Src, cl.Name())
	}
	if _, ok := cl.Node(f.Dst); !ok {
		return bad("destination %q is not a node of cluster %s", f.Dst, cl.Name())
	}
	if f.Src == f.Dst {
		return bad("source and destination are the same node")
	}
	if !(f.Bytes > 0) || math.IsInf(f.Bytes, 0) {
		return bad("size %g bytes, want a positive finite number of bytes", f.Bytes)
	}
	return nil
}
