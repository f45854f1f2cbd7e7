// Package experiments owns experiment design, in one place: the closed set of experiment
// names of the transfers table and which of them calibrate the models and which are held out
// to score them (experiments.go), so that no estimator can read a held-out experiment and no
// validation can score a calibration one; the designs of concurrent transfers that the
// simulator and a campaign share (designs.go) and the patterns they draw (patterns.go); a
// campaign's whole catalogue with the LMO, collective and ping-pong designs and its TOML form
// (catalogue.go); and the workloads predict generates (workloads.go).
package experiments

import (
	"fmt"
	"strings"
)

// Name is an experiment of the transfers table's experiment column.
type Name = string

// The experiments: every value the transfers table's experiment column may take.
const (
	P2PSweep      Name = "p2p_sweep"      // one transfer at a time, sizes swept: Hockney calibration
	FairIntra     Name = "fair_intra"     // k flows from one node to another in the same rack (fairness A)
	FairInter     Name = "fair_inter"     // k flows from distinct nodes of one rack to distinct nodes of another (fairness B)
	BidirNIC      Name = "bidir_nic"      // i flows into and o flows out of one NIC
	BidirBackbone Name = "bidir_backbone" // i flows in and o flows out across the backbone or an uplink
	StaticSync    Name = "static_sync"    // static-synchronous graphs (Euro-Par 2011): the penalty table
	// RandomCalibration are random patterns drawn like the validation ones but measured for
	// calibration: cross-validation selects models on them, and the learned models' fit reads
	// them with the other contention patterns (their slowdowns, ρ, α).
	RandomCalibration Name = "random_calibration"
	// ExchangeCalibration and Exchange are same-peer exchanges: every node of the pattern sends
	// to one peer and receives from that same peer at once (MPI_Sendrecv with one peer, OSU's
	// osu_bibw, IMB's PingPing), measured for calibration or held out.
	ExchangeCalibration Name = "exchange_calibration"
	Exchange            Name = "exchange"
	// CycleCalibration and Cycle are directed cycles: every node sends to one peer and receives
	// from another at once (MPI_Sendrecv around a ring, IMB's Sendrecv and Exchange on three
	// processes or more), measured for calibration or held out.
	CycleCalibration Name = "cycle_calibration"
	Cycle            Name = "cycle"
	// Incast and Outcast are k distinct nodes sending to one node at once (k → 1) and one
	// node sending to k distinct nodes (1 → k): the sharing of one NIC direction among peers
	// that differ, which fairness A (one pair) and B (disjoint pairs) do not load.
	Incast    Name = "incast"
	Outcast   Name = "outcast"
	Random    Name = "random"    // random validation patterns (CCPE 2014 §7.1)
	Alltoallv Name = "alltoallv" // an Alltoallv collective as point-to-point transfers
)

// Role says what an experiment is for.
type Role int

// The roles.
const (
	// Calibration experiments are the only ones estimators read.
	Calibration Role = iota
	// HeldOut experiments are the only ones validation scores; no parameter is fitted on them.
	HeldOut
)

var roles = []struct {
	name Name
	role Role
}{
	{P2PSweep, Calibration},
	{FairIntra, Calibration},
	{FairInter, Calibration},
	{BidirNIC, Calibration},
	{BidirBackbone, Calibration},
	{StaticSync, Calibration},
	{RandomCalibration, Calibration},
	{ExchangeCalibration, Calibration},
	{CycleCalibration, Calibration},
	{Incast, Calibration},
	{Outcast, Calibration},
	{Random, HeldOut},
	{Alltoallv, HeldOut},
	{Exchange, HeldOut},
	{Cycle, HeldOut},
}

// All lists every experiment, calibration experiments first, in a fixed order.
func All() []Name {
	out := make([]Name, len(roles))
	for i, r := range roles {
		out[i] = r.name
	}
	return out
}

// WithRole lists the experiments of one role, in the order of All.
func WithRole(role Role) []Name {
	var out []Name
	for _, r := range roles {
		if r.role == role {
			out = append(out, r.name)
		}
	}
	return out
}

// Fairness are the unidirectional fairness experiments (fairness A and B).
func Fairness() []Name { return []Name{FairIntra, FairInter} }

// Bidirectional are the experiments the asymmetry (contra-flow) parameters are fitted on.
func Bidirectional() []Name { return []Name{BidirNIC, BidirBackbone} }

// Exchanges are the calibration experiments in which nodes send and receive at once: same-peer
// exchanges and directed cycles.
func Exchanges() []Name { return []Name{ExchangeCalibration, CycleCalibration} }

// ContentionCalibration are the calibration experiments of concurrent transfers that the
// contention models are fitted and cross-validated on: the fairness and bidirectional designs,
// the static-synchronous graphs, the random calibration patterns, the exchanges and cycles,
// incast and outcast.
func ContentionCalibration() []Name {
	return append(append(append(append(Fairness(), Bidirectional()...), StaticSync, RandomCalibration), Exchanges()...), Incast, Outcast)
}

// twins pairs the calibration and held-out experiments of one design.
var twins = [][2]Name{{RandomCalibration, Random}, {ExchangeCalibration, Exchange}, {CycleCalibration, Cycle}}

// AsRole returns the experiment of the same design as name that has the given role: name
// itself when it has it, else its twin (random and random_calibration, exchange and
// exchange_calibration, cycle and cycle_calibration); ok is false for a design with no
// experiment of that role.
func AsRole(name Name, role Role) (Name, bool) {
	if r, ok := RoleOf(name); ok && r == role {
		return name, true
	}
	for _, t := range twins {
		if t[0] == name || t[1] == name {
			return t[role], true
		}
	}
	return "", false
}

// RoleOf returns an experiment's role; ok is false for a name outside the set.
func RoleOf(name string) (role Role, ok bool) {
	for _, r := range roles {
		if r.name == name {
			return r.role, true
		}
	}
	return 0, false
}

// CheckHeldOut checks a list of experiments to score: each must be a known held-out
// experiment, so that no model is scored on what it was fitted on.
func CheckHeldOut(names []string) error {
	if len(names) == 0 {
		return fmt.Errorf("no held-out experiment given; want some of %s", strings.Join(WithRole(HeldOut), ", "))
	}
	for _, n := range names {
		role, ok := RoleOf(n)
		switch {
		case !ok:
			return fmt.Errorf("%q is not an experiment; held-out experiments are %s", n, strings.Join(WithRole(HeldOut), ", "))
		case role != HeldOut:
			return fmt.Errorf("%s is a calibration experiment: scoring it would not be held out (held-out experiments are %s)",
				n, strings.Join(WithRole(HeldOut), ", "))
		}
	}
	return nil
}
