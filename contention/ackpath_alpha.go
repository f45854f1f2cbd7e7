package contention

// ackpath-alpha: ackpath's factors with α-fair sharing (alphafair.go) in place of the weighted
// fill. A transfer crossing two bottlenecks pays both prices, getting less than the smaller of
// its fair shares while the transfers it meets get more, as TCP transfers sharing a sender with
// one transfer and a receiver with another were measured to do. The queues are located by
// max-min's plain fill, as under ackpath (wfill.rates): α-fair sharing has no bottlenecks to
// locate them by. Where a cluster's exchanges and cycles show a host's sending and receiving
// slowing each other beyond what the queues explain, each node's two NIC directions also share
// duplex's joint budget (duplex.go); elsewhere κ = 0 and the nodes are full duplex.
//
// Parameters (LearnedParams): ackpath's, Alpha (α in [MinAlpha, MaxAlpha]; 0 is α = ∞,
// ackpath's weighted max-min), fitted after a, b, c and c₁ and alternating with their polish,
// and Coupling (duplex's κ), fitted after them under max-min and polished with them.
//
// Source: α-fair utility (Mo and Walrand, IEEE/ACM ToN 2000) on ackpath's factors; commcal's
// own model, fitted by estimate.FitLearned. It is the default model (DefaultModel).
var AckPathAlpha = Learned{"ackpath-alpha", LearnedVariant{AckPath: true, AlphaFair: true, Duplex: true}}
