package simulate_test

import (
	"context"
	"fmt"
	"log"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/simulate"
)

// Generate draws every table of a truth; the default truth of a cluster holds Hockney sweeps,
// the LMO experiments, scatter and gather sweeps, the L benchmark and the contention
// catalogue's patterns. With two repetitions: 2 classes × 14 sizes sweeps, fairness
// Σ k for k ≤ 12 flows per design, bidirectional Σ (in + out) over 6 × 6, 28 pairs × 2 sizes
// of round trips, 8 roots × 21 pairs of one-to-two, 81 sizes × 2 operations, 4 × 11 L points.
func ExampleGenerate() {
	cl, err := cluster.LoadNamed("ccpe-testbed")
	if err != nil {
		log.Fatal(err)
	}
	tr := simulate.DefaultTruth(cl, 1)
	tr.Reps = 2
	g, err := simulate.Generate(context.Background(), cl, tr)
	if err != nil {
		log.Fatal(err)
	}
	perExperiment := map[string]int{}
	for _, row := range g.Transfers {
		perExperiment[row.Experiment]++
	}
	fmt.Println("transfers by experiment:", perExperiment)
	fmt.Println("round trips:", len(g.RoundTrips), "one-to-two:", len(g.OneToTwo), "collectives:", len(g.Collectives), "ping-pong pairs:", len(g.PingPongPairs))
	// Output:
	// transfers by experiment: map[bidir_backbone:504 bidir_nic:504 fair_inter:156 fair_intra:156 p2p_sweep:56 random:3600 static_sync:214]
	// round trips: 112 one-to-two: 336 collectives: 324 ping-pong pairs: 88
}
