package estimate

import (
	"strings"
	"testing"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
)

// What each design identifies, from its structure alone (ackDesign, alphaDesign,
// sendsAndReceives, loadOf), on one-switch-10g: the expected values follow from the
// definitions of ackpath's terms (contention/ackpath.go) and of α-fair sharing, worked by hand
// per transfer — the transfers into its sender and out of its receiver, and whether it crosses
// two shared resources carrying different transfers.
func TestLearnedDesignStructure(t *testing.T) {
	cl, err := cluster.Load("testdata/one-switch-10g.toml")
	if err != nil {
		t.Fatal(err)
	}
	flows := func(spec string) []contention.Flow {
		var out []contention.Flow
		for _, f := range strings.Fields(spec) {
			src, dst, _ := strings.Cut(f, ">")
			out = append(out, contention.Flow{Src: src, Dst: dst, Bytes: 4e6})
		}
		return out
	}
	for _, c := range []struct {
		name, flows string
		ack         [ackParams]bool // a, b, c, c₁, τ; ρ always false here
		alpha       bool
		duplex      bool
		load        patternLoad
	}{
		// Each transfer's reverse transfer leaves its receiver alone: c₁ and τ (count 2).
		{"exchange", "n1>n5 n5>n1", [ackParams]bool{ackC1: true, ackTau: true}, false, true, patternLoad{nic: 1}},
		// Each transfer's receiver sends one transfer, its sender receives one: the same.
		{"cycle", "n1>n5 n5>n2 n2>n6 n6>n1", [ackParams]bool{ackC1: true, ackTau: true}, false, true, patternLoad{nic: 1}},
		// k transfers from one node to another: nothing comes back; both NIC directions carry
		// the same three transfers, so α changes nothing.
		{"fair_intra k3", "n1>n2 n1>n2 n1>n2", [ackParams]bool{}, false, false, patternLoad{nic: 3}},
		{"disjoint pairs", "n1>n5 n2>n6 n3>n7", [ackParams]bool{}, false, false, patternLoad{nic: 1}},
		// bidir_nic in2-out1 at n1: n1→n4's sender receives two (a, c, τ); n2→n1's and
		// n3→n1's receiver sends one alone (c₁); no receiver sends two (b).
		{"bidir in2-out1", "n2>n1 n3>n1 n1>n4", [ackParams]bool{ackA: true, ackC: true, ackC1: true, ackTau: true}, false, true, patternLoad{nic: 2}},
		{"bidir in1-out2", "n2>n1 n1>n3 n1>n4", [ackParams]bool{ackB: true, ackC: true, ackC1: true, ackTau: true}, false, true, patternLoad{nic: 2}},
		// n1→n2 shares n1's outgoing direction with n1→n3 and n2's incoming one with n4→n2.
		{"chain", "n1>n2 n1>n3 n4>n2", [ackParams]bool{}, true, false, patternLoad{nic: 2}},
	} {
		obs := []learnedObs{{exp: "x", id: c.name, flows: flows(c.flows)}}
		if got := ackDesign(cl, obs); got != c.ack {
			t.Errorf("%s: a, b, c, c₁, τ, ρ identified %v, want %v", c.name, got, c.ack)
		}
		if got := alphaDesign(cl, obs); got != c.alpha {
			t.Errorf("%s: α identified %v, want %v", c.name, got, c.alpha)
		}
		if got := sendsAndReceives(obs[0]); got != c.duplex {
			t.Errorf("%s: a node sends and receives: %v, want %v", c.name, got, c.duplex)
		}
		if got := loadOf(cl, obs[0].flows); got != c.load {
			t.Errorf("%s: load %+v, want %+v", c.name, got, c.load)
		}
	}
}
