package contention

// duplex: the two directions of a node's NIC share a joint budget, in + out ≤ (2 − κ)·C, C the
// capacity of the NIC's outgoing direction: κ = 0 is full duplex, κ = 1 half duplex. Real hosts
// process both directions with one CPU, one PCIe link and one interrupt path, so that a
// transfer out of a node can slow down when the node also receives.
//
// Parameters (LearnedParams): Coupling (κ in [0, 1]), fitted on the bidirectional
// experiments and kept where an F test says it lowers their error beyond chance; the fitted
// capacities.
//
// Source: commcal's own model, fitted by estimate.FitLearned. In the fill, every class crosses
// its two nodes' joint resources beside its route's (newWFill).
var Duplex = Learned{"duplex", LearnedVariant{Duplex: true}}

// jointCapacities sets each node's joint budget, (2 − κ) times its outgoing NIC direction's
// capacity, in the fill's resources beyond the network's; a fill without joint resources is
// left as it is.
func (f *wfill) jointCapacities(coupling float64) {
	e, net := f.e, f.e.net
	nr := len(net.Capacity)
	if len(f.capacity) <= nr {
		return
	}
	for c := range e.src {
		rt := &e.routes[c]
		f.capacity[nr+int(e.src[c])] = (2 - coupling) * net.Capacity[rt.res[0]]
		f.capacity[nr+int(e.dst[c])] = (2 - coupling) * net.Capacity[rt.rev[rt.n-1]]
	}
}
