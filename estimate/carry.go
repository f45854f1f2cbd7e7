package estimate

import (
	"fmt"
	"strings"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/internal/badinput"
)

// Carry is a calibration applied to another cluster, resource class by resource class: the
// parameters and penalty table the models use there, and what became of each class.
type Carry struct {
	// From is the calibration's cluster, To the cluster it is applied to.
	From string `json:"from"`
	To   string `json:"to"`
	// Classes say, class by class, which parameters were carried, which fell back to the
	// nominal rates and which were dropped (contention.Params.Carry).
	Classes      []contention.CarriedClass `json:"classes"`
	Params       contention.Params         `json:"-"`
	PenaltyTable *contention.PenaltyTable  `json:"-"`
}

// CarryTo applies the calibration to the cluster to, whose description differs from the one
// it was fitted on: its parameters are carried class by class against the nominal rates it
// records (contention.Params.Carry); the penalty table, whose penalties are ratios to a
// transfer's time alone on shapes of contention graphs that name no node, is carried with
// the factors; the LMO parameters, per node and per link of the calibration's cluster, are
// dropped (predict's models do not read them).
//
// It refuses, as bad input on one line, a calibration without its nominal rates (no
// params.nominal) and one that carries nothing but the efficiency: no fitted parameter
// applies to any class of to.
func (c *Calibration) CarryTo(to *cluster.Cluster) (*Carry, error) {
	if c.Params.Nominal == nil {
		return nil, badinput.Errorf("", "estimate: a calibration of cluster %s without the nominal rates it was fitted for (params.nominal); estimate it again to apply it to cluster %s",
			c.Cluster, to.Name())
	}
	params, classes := c.Params.Carry(c.Params.Nominal, to)
	table := c.PenaltyTable()
	if table != nil && len(table.Entries) > 0 {
		for i := range classes {
			if classes[i].Class == contention.ClassFactors {
				classes[i].Parameters = append(classes[i].Parameters, "penalties.table")
			}
		}
	}
	if l := c.LMO; l != nil {
		classes = append(classes, contention.CarriedClass{Class: contention.ClassPerNode, Outcome: contention.Dropped, Parameters: []string{"lmo"},
			Note: fmt.Sprintf("C and t of %d nodes and β of %d links of cluster %s name its nodes; predict's models do not read them", len(l.Nodes), len(l.Links), c.Cluster)})
	}
	if !contention.CarriesAny(classes) {
		var why []string
		for _, cc := range classes {
			if cc.Outcome != contention.Carried && len(cc.Parameters) > 0 {
				why = append(why, cc.Class+": "+cc.Note)
			}
		}
		if len(why) == 0 {
			why = append(why, "it fits no parameter")
		}
		return nil, badinput.Errorf("", "estimate: a calibration of cluster %s applies to no resource class of cluster %s (%s)", c.Cluster, to.Name(), strings.Join(why, "; "))
	}
	return &Carry{From: c.Cluster, To: to.Name(), Classes: classes, Params: params, PenaltyTable: table}, nil
}
