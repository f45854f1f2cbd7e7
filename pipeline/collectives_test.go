package pipeline

import (
	"context"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/rundir"
	"github.com/commcal/commcal/validate"
)

// The committed collectives campaign (data/collectives/two-rack-1g: 19 algorithms at 4 and 8
// ranks, measured as their rounds on the emulated two-rack cluster) calibrated and scored as
// run does: with the calibration's transfer spread, a round ending with its expected slowest
// transfer, at least 26 of the 38 collectives are predicted within ±10% by the default model
// and the mean |ε| is at most 6.5% (the journal records 28 and 5.6%, against 21 and 9.4%
// chained on the slowest predicted transfer, which the test logs). The bounds leave a
// collective's and a point's room for a fit that moves.
func TestCommittedCollectivesCampaign(t *testing.T) {
	if testing.Short() {
		t.Skip("calibrates a committed campaign; not with -short")
	}
	ctx := context.Background()
	ds, err := datasets.Open(filepath.Join("..", "data", "collectives", "two-rack-1g"))
	if err != nil {
		t.Fatal(err)
	}
	in, err := rundir.LoadTables(ctx, ds)
	if err != nil {
		t.Fatal(err)
	}
	cal, err := Estimate(ctx, ds.Cluster, in, contention.DefaultParams(), false, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	net, err := cal.Params.Network(ds.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	net.PenaltyTable = cal.PenaltyTable()
	def, _ := contention.ModelByName(contention.DefaultModel)
	score := func(spreads bool) (within int, meanAbs float64) {
		var sp []float64
		if spreads {
			sp = cal.Spread.Spread()
		}
		acc, err := validate.ScoreCollectives(ctx, ds.Cluster, nil, in.Schedules, net, []contention.Model{def}, sp, validate.DefaultAlgorithms)
		if err != nil {
			t.Fatal(err)
		}
		if len(acc) != 38 {
			t.Fatalf("%d collectives scored, want 38", len(acc))
		}
		for _, c := range acc {
			e := c.Models[0].Err
			if math.Abs(e) <= 0.1 {
				within++
			}
			meanAbs += math.Abs(e) / float64(len(acc))
			if c.Models[0].ExpectedMax != spreads {
				t.Errorf("%s %s: expected_max %t with spreads %t", c.Op, c.Algorithm, c.Models[0].ExpectedMax, spreads)
			}
		}
		return within, meanAbs
	}
	if n, e := score(true); n < 26 || e > 0.065 {
		t.Errorf("with the spread: %d of 38 within ±10%%, mean |ε| %.1f%%; want at least 26 and at most 6.5%%", n, 100*e)
	}
	n, e := score(false)
	t.Logf("chained on the slowest predicted transfer: %d of 38 within ±10%%, mean |ε| %.1f%%", n, 100*e)
}
