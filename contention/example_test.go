package contention_test

import (
	"context"
	"fmt"
	"log"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
)

// The registry lists every model with the parameters it reads; reports, flags and calibration
// files spell models by these names.
func ExampleRegistry() {
	for _, s := range contention.Registry() {
		fmt.Printf("%-18s %s\n", s.Name(), s.Params)
	}
	fmt.Println("default:", contention.DefaultModel)
	// Output:
	// asymmetric         network
	// asymmetric-fitted  contra-factor
	// fair               network
	// maxmin             network
	// penalty            penalty
	// penalty-table      penalty-table
	// hockney            hockney
	// stochastic         learned
	// surface            learned
	// duplex             learned
	// ackpath            learned
	// ackpath-alpha      learned
	// default: ackpath-alpha
}

// The application of Table I of Zhu et al. (CCPE 2014, §6.3) on two racks of three nodes with
// 940 Mbit/s NICs and backbone: the asymmetric model gives e1, e2 and e5 0.255 s and e3, e4
// 0.425 s (the paper truncates 0.4255), in two steps.
func ExampleAsymmetric_Predict() {
	cl, err := cluster.New(cluster.Description{Name: "table1", NICRateBps: 940e6,
		Backbone: &cluster.Backbone{Topology: cluster.TopologyCable, Kind: cluster.KindElectrical, RateBps: 940e6},
		Racks:    []cluster.Rack{{Name: "X", NodePrefix: "X", NodeFirst: 1, NodeCount: 3}, {Name: "Y", NodePrefix: "Y", NodeFirst: 1, NodeCount: 3}}})
	if err != nil {
		log.Fatal(err)
	}
	net := contention.NewNetwork(cl, 1) // the paper's rates are the nominal ones
	flows := []contention.Flow{{Src: "X1", Dst: "Y2", Bytes: 10e6}, {Src: "X1", Dst: "X2", Bytes: 20e6},
		{Src: "X2", Dst: "Y3", Bytes: 20e6}, {Src: "X3", Dst: "Y1", Bytes: 20e6}, {Src: "Y1", Dst: "Y3", Bytes: 20e6}}
	p, err := contention.Asymmetric{}.Predict(context.Background(), net, flows)
	if err != nil {
		log.Fatal(err)
	}
	for i, t := range p.Times {
		fmt.Printf("e%d %.1f Mbit/s, %.4f s\n", i+1, p.FirstRates[i]/1e6, t)
	}
	fmt.Println("steps:", p.Steps)
	// Output:
	// e1 313.3 Mbit/s, 0.2553 s
	// e2 626.7 Mbit/s, 0.2553 s
	// e3 313.3 Mbit/s, 0.4255 s
	// e4 313.3 Mbit/s, 0.4255 s
	// e5 626.7 Mbit/s, 0.2553 s
	// steps: 2
}
