package schedule_test

import (
	"context"
	"fmt"
	"log"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/schedule"
)

// An MPI_Alltoall of 4 MB blocks among 12 ranks of the CCPE 2014 testbed, as Open MPI and as
// MPICH run it by default, predicted round by round under max-min: Open MPI's tuned rules
// post all 132 transfers at once, MPICH's run 11 rounds of pairwise exchanges. The 12 ranks
// share one rack, so max-min bounds both by the NICs alone: 11 blocks of 4 MiB out of each
// at 940 Mbit/s, 0.3927 s. They part where transfers share a backbone, or under a model in
// which a NIC's two directions slow each other.
func ExampleParse() {
	cl, err := cluster.LoadNamed("ccpe-testbed")
	if err != nil {
		log.Fatal(err)
	}
	var nodes []string
	for _, nd := range cl.Nodes() {
		nodes = append(nodes, nd.Name)
	}
	net := contention.NewNetwork(cl, contention.DefaultEfficiency)
	for _, spec := range []string{"alltoall:4194304:ranks=12:alg=auto:openmpi", "alltoall:4194304:ranks=12:alg=auto:mpich"} {
		s, err := schedule.Parse(spec, nodes)
		if err != nil {
			log.Fatal(err)
		}
		res, err := schedule.Predict(context.Background(), net, contention.MaxMin{}, s, nil)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %d rounds of %d transfers, %.4f s\n", s.Algorithm, len(s.Rounds), s.Transfers(), res.Seconds)
		fmt.Println(" ", s.Rule)
	}
	// Output:
	// linear: 1 rounds of 132 transfers, 0.3927 s
	//   Open MPI 4.1.8 tuned fixed rule (coll_tuned_decision_fixed.c): alltoall among 12 ranks (8 ≤ n < 16), block of 4194304 bytes (size ≥ 262144) → linear (basic_linear, algorithm 1)
	// pairwise: 11 rounds of 132 transfers, 0.3927 s
	//   MPICH 4.3.2 default selection (maint/tuning/coll/mpir/generic.json): alltoall among 12 ranks (comm_size=any, avg_msg_size=any with avg_msg_size = 4194304) → pairwise (MPIR_Alltoall_intra_pairwise)
}
