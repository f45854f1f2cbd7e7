package selection

import (
	"context"
	"slices"
	"testing"

	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/datasets/campaigns"
	"github.com/commcal/commcal/estimate"
	"github.com/commcal/commcal/experiments"
	"github.com/commcal/commcal/rundir"
	"github.com/commcal/commcal/validate"
)

// TestHeldOutAsCalibration turns exactly the held-out experiments' rows into random calibration
// patterns, under ids no calibration pattern has, and leaves its input alone.
func TestHeldOutAsCalibration(t *testing.T) {
	rows := []datasets.Transfer{
		{Experiment: "random", PatternID: "N6-d2-001", FlowID: 0},
		{Experiment: "random_calibration", PatternID: "N6-d2-001", FlowID: 0},
		{Experiment: "alltoallv", PatternID: "a2a-4", FlowID: 3},
		{Experiment: "bidir_nic", PatternID: "i1o2", FlowID: 1},
	}
	in := slices.Clone(rows)
	got := HeldOutAsCalibration(rows, []string{"random", "alltoallv"})
	want := []datasets.Transfer{
		{Experiment: "random_calibration", PatternID: "random/N6-d2-001", FlowID: 0},
		{Experiment: "random_calibration", PatternID: "N6-d2-001", FlowID: 0},
		{Experiment: "random_calibration", PatternID: "alltoallv/a2a-4", FlowID: 3},
		{Experiment: "bidir_nic", PatternID: "i1o2", FlowID: 1},
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if !slices.Equal(rows, in) {
		t.Errorf("the input changed: %+v", rows)
	}
}

// TestInSample fits a committed real-TCP dataset's models on its held-out random patterns too:
// the learned models' parameters move and ackpath-alpha's mean |ε| on those patterns falls
// (its fit minimises a robust loss of the log errors over the calibration patterns and these
// together, so it should lower their error: it does on 49 of the 50 TCP datasets, and on
// two-rack-1g-heldout27 stays within 3·10⁻⁵ of it), while the models whose parameters come
// from other experiments score exactly as held out, under the same noise limits. Not with
// -short (two calibrations).
func TestInSample(t *testing.T) {
	if testing.Short() {
		t.Skip("calibrates a TCP dataset twice; not with -short")
	}
	c, err := campaigns.CommittedCampaign("..", "two-rack-1g-heldout24")
	if err != nil {
		t.Fatal(err)
	}
	ds, err := datasets.Open(c.Path)
	if err != nil {
		t.Fatal(err)
	}
	in, err := rundir.LoadTables(context.Background(), ds)
	if err != nil {
		t.Fatal(err)
	}
	before := slices.Clone(in.Transfers)
	held := experiments.WithRole(experiments.HeldOut)
	cal, err := estimate.Calibrate(context.Background(), ds.Cluster, in, contention.DefaultParams(), false)
	if err != nil {
		t.Fatal(err)
	}
	rows, acc, err := validate.Validate(context.Background(), ds.Cluster, in.Transfers, cal.Params, cal.PenaltyTable(), contention.Models(), held)
	if err != nil {
		t.Fatal(err)
	}
	reach, err := InSample(context.Background(), ds.Cluster, in, contention.DefaultParams(), held, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(in.Transfers, before) {
		t.Error("InSample changed the dataset's rows")
	}
	if len(reach.Rows) != len(rows) {
		t.Errorf("%d predictions in sample, %d held out", len(reach.Rows), len(rows))
	}
	if len(reach.Settings) != len(acc.Settings) {
		t.Fatalf("%d settings in sample, %d held out", len(reach.Settings), len(acc.Settings))
	}
	model := func(s validate.SettingAccuracy, name string) validate.ModelAccuracy {
		m, ok := s.Model(name)
		if !ok {
			t.Fatalf("%s: no %s", s.Setting, name)
		}
		return m
	}
	for i, s := range validate.WithOverall(reach.Settings, reach.Overall) {
		h := acc.Overall
		if i < len(acc.Settings) {
			h = acc.Settings[i]
		}
		if s.Setting != h.Setting || s.NoiseLimit != h.NoiseLimit {
			t.Errorf("in sample %s, noise limit %+v; held out %s, %+v", s.Setting, s.NoiseLimit, h.Setting, h.NoiseLimit)
		}
		// Every model but ackpath's two: no random pattern calibrates them (surface, duplex and
		// stochastic are fitted on the fairness and bidirectional experiments alone).
		for _, name := range []string{"asymmetric", "asymmetric-fitted", "fair", "maxmin", "penalty", "penalty-table", "hockney", "stochastic", "surface", "duplex"} {
			if got, want := model(s, name), model(h, name); got != want {
				t.Errorf("%s, %s: in sample %+v, held out %+v (its parameters come from no random pattern)", s.Setting, name, got, want)
			}
		}
	}
	if reach.Params.Learned == nil || cal.Params.Learned == nil {
		t.Fatal("no learned parameters")
	}
	a, b := reach.Params.Learned[contention.DefaultModel], cal.Params.Learned[contention.DefaultModel]
	if a.AckIn == b.AckIn && a.AckOut == b.AckOut && a.Alpha == b.Alpha {
		t.Errorf("%s: the same slowdowns and α in sample as held out (%+v)", contention.DefaultModel, *a)
	}
	got, held0 := model(reach.Overall, contention.DefaultModel).MeanAbsErr, model(acc.Overall, contention.DefaultModel).MeanAbsErr
	if !(got < held0) {
		t.Errorf("%s: mean |ε| %.4f in sample, %.4f held out; a fit on the scored patterns should lower it", contention.DefaultModel, got, held0)
	}
	t.Logf("%s: mean |ε| %.2f%% held out, %.2f%% in sample", contention.DefaultModel, 100*held0, 100*got)
}
