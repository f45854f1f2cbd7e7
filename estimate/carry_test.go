package estimate

import (
	"slices"
	"strings"
	"testing"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/internal/badinput"
)

// carryCluster is a cluster of two racks of n nodes, NICs of nic bit/s and a backbone
// cable of backbone bit/s.
func carryCluster(t *testing.T, name string, n int, nic, backbone float64) *cluster.Cluster {
	t.Helper()
	cl, err := cluster.New(cluster.Description{Name: name, NICRateBps: nic,
		Backbone: &cluster.Backbone{Topology: cluster.TopologyCable, Kind: cluster.KindOptical, RateBps: backbone},
		Racks:    []cluster.Rack{{Name: "X", NodePrefix: "x", NodeCount: n}, {Name: "Y", NodePrefix: "y", NodeCount: n}}})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// TestCarryTo applies a calibration with a penalty table and LMO parameters to a larger
// cluster of the same classes: the table is carried with the factors, the LMO parameters
// are dropped with a note naming the calibration's cluster, and the parameters carried.
func TestCarryTo(t *testing.T) {
	from := carryCluster(t, "small", 5, 1e9, 10e9)
	table := contention.NewPenaltyTable()
	table.Entries["2:ab"] = map[string]float64{"a": 1.6}
	table.Graphs["2:ab"] = "x0->y0 x1->y0"
	cal := &Calibration{Format: CalibrationFormat, Cluster: from.Name(),
		Params:    contention.Params{Efficiency: 0.94, ContraFactor: 1, NICBps: 9.3e8, Nominal: contention.NominalOf(from)},
		Penalties: &PenaltyFit{Table: table},
		LMO:       &LMOFit{Nodes: make([]LMONodeFit, 10), Links: make([]LMOLinkFit, 45)}}
	carry, err := cal.CarryTo(carryCluster(t, "big", 32, 1e9, 10e9))
	if err != nil {
		t.Fatal(err)
	}
	if carry.From != "small" || carry.To != "big" || carry.Params.NICBps != 9.3e8 || carry.PenaltyTable != table {
		t.Errorf("carry %s → %s, NIC %g, table %p", carry.From, carry.To, carry.Params.NICBps, carry.PenaltyTable)
	}
	var factors, perNode *contention.CarriedClass
	for i, c := range carry.Classes {
		switch c.Class {
		case contention.ClassFactors:
			factors = &carry.Classes[i]
		case contention.ClassPerNode:
			perNode = &carry.Classes[i]
		}
	}
	if factors == nil || !slices.Contains(factors.Parameters, "penalties.table") {
		t.Errorf("the penalty table is not carried with the factors: %+v", factors)
	}
	if perNode == nil || perNode.Outcome != contention.Dropped || !slices.Equal(perNode.Parameters, []string{"lmo"}) ||
		perNode.Note != "C and t of 10 nodes and β of 45 links of cluster small name its nodes; predict's models do not read them" {
		t.Errorf("LMO: %+v", perNode)
	}
}

// TestCarryToRefuses refuses, as bad input on one line, a calibration without its nominal
// rates and one of which nothing applies: fitted for 10 Gbit/s NICs only, applied to a
// cluster of 1 Gbit/s NICs.
func TestCarryToRefuses(t *testing.T) {
	to := carryCluster(t, "lab", 5, 1e9, 10e9)
	tenGig := carryCluster(t, "ten-gig", 4, 10e9, 40e9)
	cases := []struct {
		name string
		cal  *Calibration
		want []string
	}{
		{"no nominal rates", &Calibration{Cluster: "old", Params: contention.Params{Efficiency: 0.94, NICBps: 9e8}},
			[]string{"a calibration of cluster old without the nominal rates it was fitted for (params.nominal)", "to apply it to cluster lab"}},
		{"nothing applies", &Calibration{Cluster: "ten-gig", Params: contention.Params{Efficiency: 0.94, ContraFactor: 1, NICBps: 9.4e9, CeilingBps: 9.3e9,
			Nominal: contention.NominalOf(tenGig)}},
			[]string{"a calibration of cluster ten-gig applies to no resource class of cluster lab", "nic: fitted for NICs of 10 Gbit/s; the cluster has NICs of 1 Gbit/s"}},
		{"nothing fitted", &Calibration{Cluster: "ten-gig", Params: contention.Params{Efficiency: 0.94, ContraFactor: 1, Nominal: contention.NominalOf(tenGig)}},
			[]string{"applies to no resource class of cluster lab (it fits no parameter)"}},
	}
	for _, c := range cases {
		_, err := c.cal.CarryTo(to)
		if err == nil || !badinput.Is(err) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line of bad input", c.name, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", c.name, err, w)
			}
		}
	}
}
