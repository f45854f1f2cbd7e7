package estimate

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/experiments"
	"github.com/commcal/commcal/simulate"
)

func TestBackSolveFig3(t *testing.T) {
	// Euro-Par 2011, Fig. 3: six communications of 20 MB (2²⁰ B) ending at 0.0363749 s (a, b,
	// c), 0.0297984 s (d, e) and 0.016059 s (f); the later steps' penalties are those of the
	// smaller graphs: a, b, c 3.5 and d, e 2.33 in step 2, a, b, c 3 in step 3. The first
	// step's penalties come out as the figure prints them: 3.5, 3.33 and 1.5. The figure's α
	// has more digits than the printed 5.105e-10 (see the prediction test); 5.10502e-10 prints
	// the same.
	times := []float64{0.0363749, 0.0363749, 0.0363749, 0.0297984, 0.0297984, 0.016059}
	later := func(step int, active []int) []float64 {
		if step == 2 {
			return []float64{3.5, 3.5, 3.5, 7.0 / 3, 7.0 / 3}[:len(active)]
		}
		return []float64{3, 3, 3}
	}
	for _, alpha := range []float64{5.105e-10, 5.10502e-10} {
		rho, err := BackSolveSteps(20<<20, alpha, times, later)
		if err != nil {
			t.Fatal(err)
		}
		want := []float64{3.5, 3.5, 3.5, 3.33, 3.33, 1.5}
		for i := range rho {
			// Printed to two decimals (3.33 truncates 10/3); the times carry 6 digits.
			if math.Abs(rho[i]-want[i]) > 0.005+1e-3 {
				t.Errorf("α %g: communication %c: %.4f, figure %.2f", alpha, 'a'+i, rho[i], want[i])
			}
		}
	}
}

// staticSyncCampaign draws the static-synchronous graphs, with the given model as ground truth
// and no noise.
func staticSyncCampaign(t *testing.T, model string) (*cluster.Cluster, []datasets.Transfer) {
	cl, err := cluster.LoadNamed("ccpe-testbed")
	if err != nil {
		t.Fatal(err)
	}
	tr := &simulate.Truth{Cluster: cl.Name(), Seed: 5, Noise: 0, Reps: 1,
		Contention: &simulate.ContentionTruth{Model: model, Efficiency: contention.DefaultEfficiency, ContraFactor: 1,
			Designs: experiments.Designs{Bytes: 10_000_000, StaticSync: experiments.StaticSyncDesign{Graphs: 10, MaxEdges: 4}}}}
	g, err := simulate.Generate(context.Background(), cl, tr)
	if err != nil {
		t.Fatal(err)
	}
	return cl, g.Transfers
}

func TestBackSolveRecoversClosedForm(t *testing.T) {
	// With the penalty model as ground truth and no noise, back-solving gives back the closed
	// form's first-step penalties of every graph.
	cl, rows := staticSyncCampaign(t, "penalty")
	fit, err := BackSolvePenalties(cl, rows, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !scalar.EqualWithinRel(fit.Alpha, 8/(0.94e9), 1e-12) {
		t.Errorf("α measured %g, want 8/ceiling = %g", fit.Alpha, 8/0.94e9)
	}
	if len(fit.Unsolved) != 0 || len(fit.Solved) < 10 {
		t.Fatalf("%d solved, unsolved: %v", len(fit.Solved), fit.Unsolved)
	}
	pats, _ := datasets.MeasuredPatterns(rows, []string{"static_sync"})
	for i, s := range fit.Solved {
		edges := make([]contention.Edge, len(pats[i].Flows))
		for k, f := range pats[i].Flows {
			edges[k] = contention.Edge{Src: f.Src, Dst: f.Dst}
		}
		want := contention.ClosedFormPenalties(edges)
		for k := range want {
			if !scalar.EqualWithinRel(s.Penalties[k], want[k], 1e-9) {
				t.Errorf("graph %s: edge %d penalty %.6f, closed form %.6f", s.Graph, k, s.Penalties[k], want[k])
			}
		}
	}
}

func TestBackSolveReportsContradictions(t *testing.T) {
	cl, _ := cluster.LoadNamed("ccpe-testbed")
	// Two communications from X1: the one ending first cannot be faster than alone.
	rows := []datasets.Transfer{
		{Experiment: "static_sync", PatternID: "one", FlowID: 0, Src: "X1", Dst: "X2", Bytes: 1000, TStart: 0, TEnd: 1},
		{Experiment: "static_sync", PatternID: "two", FlowID: 0, Src: "X1", Dst: "X2", Bytes: 1000, TStart: 0, TEnd: 0.5},
		{Experiment: "static_sync", PatternID: "two", FlowID: 1, Src: "X1", Dst: "X3", Bytes: 1000, TStart: 0, TEnd: 2},
		{Experiment: "static_sync", PatternID: "apart", FlowID: 0, Src: "X1", Dst: "X2", Bytes: 1000, TStart: 0, TEnd: 1},
		{Experiment: "static_sync", PatternID: "apart", FlowID: 1, Src: "X4", Dst: "X5", Bytes: 1000, TStart: 0, TEnd: 1},
	}
	fit, err := BackSolvePenalties(cl, rows, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(fit.Unsolved) != 2 || fit.Unsolved[0].Pattern != "apart" || fit.Unsolved[1].Pattern != "two" {
		t.Fatalf("unsolved %+v", fit.Unsolved)
	}
}
