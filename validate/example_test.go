package validate_test

import (
	"context"
	"fmt"
	"log"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/experiments"
	"github.com/commcal/commcal/simulate"
	"github.com/commcal/commcal/validate"
)

// Validate scores models on the held-out transfers of a dataset: here one simulated on the CCPE
// testbed with the asymmetric model as its truth and 2% noise per repetition. The truth
// itself would score at the noise level; maxmin, which ignores the asymmetric property,
// misses some transfers by more than 10%, and hockney, which ignores contention, most.
func ExampleValidate() {
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
	var models []contention.Model
	for _, name := range []string{"asymmetric", "maxmin", "hockney"} {
		m, _ := contention.ModelByName(name)
		models = append(models, m)
	}
	rows, acc, err := validate.Validate(context.Background(), cl, g.Transfers, contention.DefaultParams(), nil, models, experiments.WithRole(experiments.HeldOut))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("rows:", len(rows), "(one per transfer and model)")
	for _, ma := range acc.Overall.Models {
		fmt.Printf("%-10s %d transfers, %.0f%% within ±10%%\n", ma.Model, ma.Transfers, 100*ma.Within10)
	}
	// Output:
	// rows: 5400 (one per transfer and model)
	// asymmetric 1800 transfers, 100% within ±10%
	// maxmin     1800 transfers, 85% within ±10%
	// hockney    1800 transfers, 18% within ±10%
}
