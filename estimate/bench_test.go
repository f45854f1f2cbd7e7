package estimate

import (
	"context"
	"testing"

	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/datasets/campaigns"
)

// BenchmarkCalibrateTCP is `commcal estimate` on a committed real-TCP development dataset
// (two-rack-1g-seed9-nometrics, whose catalogue has random calibration patterns):
// every estimator, of which the fits of the learned models through their predictions take
// nearly all the time. A nightly run pays this once, the cross-validation once per fold.
func BenchmarkCalibrateTCP(b *testing.B) {
	c, err := campaigns.CommittedCampaign("..", "two-rack-1g-seed9-nometrics")
	if err != nil {
		b.Fatal(err)
	}
	ds, err := datasets.Open(c.Path)
	if err != nil {
		b.Fatal(err)
	}
	rows, err := datasets.ReadAll[datasets.Transfer](context.Background(), ds, datasets.TransfersTable)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		c, err := Calibrate(context.Background(), ds.Cluster, Inputs{Transfers: rows}, contention.DefaultParams(), false)
		if err != nil {
			b.Fatal(err)
		}
		if len(c.Learned) != len(contention.LearnedModels()) {
			b.Fatalf("%d learned models fitted, want %d; skipped: %+v", len(c.Learned), len(contention.LearnedModels()), c.Skipped)
		}
	}
}
