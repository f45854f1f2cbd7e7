package estimate_test

import (
	"context"
	"fmt"
	"log"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/estimate"
	"github.com/commcal/commcal/experiments"
	"github.com/commcal/commcal/simulate"
)

// FitHockney fits Hockney's α and β per path class on the point-to-point sweeps, and
// FitFairness the per-flow ceiling and a NIC's capacity on the fairness experiments; here on
// a dataset simulated on the CCPE testbed from a known truth (1 Gbit/s NICs at 94%: 940
// Mbit/s) with 2% noise per repetition. α, tens of microseconds beside transfers of up to
// 8 MiB, is not printed: its interval spans zero here. β stands on the repetitions at or above
// the half-performance length n½ = α/β: inter-rack (α 71 µs, n½ 8.3 kB) the 12 repetitions of
// 1–8 KiB are left out as small messages; intra-rack (α 4 µs, n½ 492 B) none is.
func ExampleFitHockney() {
	cl, err := cluster.LoadNamed("ccpe-testbed")
	if err != nil {
		log.Fatal(err)
	}
	tr := simulate.DefaultTruth(cl, 1)
	tr.Reps = 3
	g, err := simulate.Generate(context.Background(), cl, tr)
	if err != nil {
		log.Fatal(err)
	}
	fits, err := estimate.FitHockney(cl, g.Transfers, false)
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range fits {
		fmt.Printf("%s: 1/β %.0f Mbit/s from %d repetitions\n", h.Class, 8/h.Beta.Value/1e6, h.Beta.N)
	}
	f, err := estimate.FitFairness(g.Transfers, experiments.FairIntra)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("fair_intra: ceiling %.0f Mbit/s, NIC %.0f Mbit/s\n", f.Ceiling.Value/1e6, f.Capacity.Value/1e6)
	// Output:
	// intra-rack: 1/β 935 Mbit/s from 42 repetitions
	// inter-rack: 1/β 938 Mbit/s from 30 repetitions
	// fair_intra: ceiling 916 Mbit/s, NIC 940 Mbit/s
}
