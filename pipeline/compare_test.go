package pipeline

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/estimate"
	"github.com/commcal/commcal/simulate"
)

// simulatedRun simulates a cluster (seed 1, 1% noise, 10 repetitions) and runs the pipeline on
// it.
func simulatedRun(t *testing.T, cl *cluster.Cluster, dir string) string {
	t.Helper()
	sim := filepath.Join(dir, "sim")
	tr := simulate.DefaultTruth(cl, 1)
	tr.Noise = 0.01
	when := time.Unix(0, 0)
	if _, _, err := simulate.Run(context.Background(), simulate.Options{Cluster: cl, Truth: tr, Out: sim, Created: when}); err != nil {
		t.Fatal(err)
	}
	srcs, err := datasets.ExpandSources([]string{sim}, datasets.Source{})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	if _, err := Run(context.Background(), RunOptions{Cluster: cl, Sources: srcs, Out: out, Rule: estimate.DefaultStoppingRule,
		Created: when, Defaults: contention.DefaultParams(), Weighted: true}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCompareFlagsNICChange compares two simulated clusters whose true NIC rates differ by 10%
// (same seed, so the same noise draws): the NIC's capacity is flagged, and every flagged
// parameter is one that the NIC rate changes in the truth.
func TestCompareFlagsNICChange(t *testing.T) {
	base, _ := cluster.LoadNamed("ccpe-testbed")
	d := base.Description()
	d.NICRateBps *= 1.1
	faster, err := cluster.New(d)
	if err != nil {
		t.Fatal(err)
	}
	a := simulatedRun(t, base, filepath.Join(t.TempDir(), "a"))
	b := simulatedRun(t, faster, filepath.Join(t.TempDir(), "b"))
	cmp, err := Compare(context.Background(), []string{a, b}, filepath.Join(t.TempDir(), "cmp"))
	if err != nil {
		t.Fatal(err)
	}
	// What a NIC rate changes in the generator's truth: Hockney β (0.94 of the NIC rate), the
	// per-flow ceiling and the NIC capacity, the saturation point of the backbone (capacity
	// over ceiling), and the LMO link rates (drawn as a share of the NIC rate).
	changes := func(name string) bool {
		return strings.HasSuffix(name, "beta_s_per_byte") || strings.HasSuffix(name, "ceiling_bps") ||
			name == "fairness/fair_intra/capacity_bps" || name == "fairness/fair_inter/saturation_k" ||
			strings.HasPrefix(name, "lmo/link/")
	}
	if !slices.Contains(cmp.Drifted, "fairness/fair_intra/capacity_bps") {
		t.Errorf("the NIC capacity was not flagged; drifted: %v", cmp.Drifted)
	}
	for _, name := range cmp.Drifted {
		if !changes(name) {
			t.Errorf("%s flagged, but the truth did not change it", name)
		}
	}
	for _, p := range cmp.Params {
		if p.Name == "fairness/fair_intra/capacity_bps" && (p.RelChange[1] < 0.09 || p.RelChange[1] > 0.11) {
			t.Errorf("NIC capacity changed by %.3f, truth 0.10", p.RelChange[1])
		}
	}
	if len(cmp.Params) < 50 || len(cmp.Accuracy) != len(contention.Models()) {
		t.Errorf("%d parameters, %d models compared", len(cmp.Params), len(cmp.Accuracy))
	}
	t.Logf("drifted: %v", cmp.Drifted)
}
