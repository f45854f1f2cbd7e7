package validate

import (
	"context"
	"math"
	"testing"

	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	index "github.com/commcal/commcal/datasets/campaigns"
	"github.com/commcal/commcal/experiments"
)

// TestNoiseLimitAcrossCampaigns checks the noise limit's premise on real measurements: that a
// transfer's expected time is what its repetitions scatter around, with nothing of the campaign
// in it that the repetitions do not show. Three campaigns of data/tcp measured the same
// catalogue on the same cluster shape (seed 9; the second and third with TCP's metrics cache
// off); each one's means, taken as predictions of another's, should then score what the
// repetitions' spread says two independent means do: for a transfer with means x̄_A, x̄_B
// over r_A, r_B repetitions of standard deviations s_A, s_B, an error (x̄_B − x̄_A)/x̄_A that
// is normal of standard deviation √(σ_A²/r_A + σ_B²/r_B)/x̄_A, σ estimated by s/c4(r) as
// NoiseLimit does. Were the campaigns to differ more than their repetitions (a campaign's own
// state: caches, placement, the machine), the noise limit would flatter every model.
func TestNoiseLimitAcrossCampaigns(t *testing.T) {
	dirs := []string{"two-rack-1g-seed9", "two-rack-1g-seed9-nometrics", "two-rack-1g-seed9-nometrics2"}
	type key struct {
		id   string
		flow int
	}
	type stats struct {
		flow      contention.Flow
		mean, rel float64 // mean, and its standard deviation over the mean (relStdErr)
		d         int
	}
	campaigns := make([]map[key]stats, len(dirs))
	for i, dir := range dirs {
		c, err := index.CommittedCampaign("..", dir)
		if err != nil {
			t.Fatal(err)
		}
		ds, err := datasets.Open(c.Path)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := datasets.ReadAll[datasets.Transfer](context.Background(), ds, datasets.TransfersTable)
		if err != nil {
			t.Fatal(err)
		}
		pats, err := datasets.MeasuredPatterns(rows, []string{experiments.Random})
		if err != nil {
			t.Fatal(err)
		}
		campaigns[i] = map[key]stats{}
		for _, p := range pats {
			_, d, ok := experiments.RandomSetting(p.ID)
			if !ok {
				t.Fatalf("%s: random pattern %s has no setting", dir, p.ID)
			}
			for f := range p.Flows {
				if rel, ok := relStdErr(p.Mean[f], p.SD[f], p.Reps[f]); ok {
					campaigns[i][key{p.ID, f}] = stats{flow: p.Flows[f], mean: p.Mean[f], rel: rel, d: d}
				}
			}
		}
	}
	// Per group (d = 1, d ≥ 2), over the three pairs of campaigns: the distinct transfers, and
	// the pairs' observed and expected mean |ε| and share within ±10%.
	type tally struct {
		transfers                       map[key]bool
		n, absObs, absExp, inObs, inExp float64
	}
	groups := map[string]*tally{"d = 1": {transfers: map[key]bool{}}, "d ≥ 2": {transfers: map[key]bool{}}}
	for a := range campaigns {
		for b := a + 1; b < len(campaigns); b++ {
			for k, sa := range campaigns[a] {
				sb, ok := campaigns[b][k]
				if !ok {
					continue
				}
				if sa.flow != sb.flow {
					t.Fatalf("%s transfer %d is %+v in %s and %+v in %s: not one catalogue", k.id, k.flow, sa.flow, dirs[a], sb.flow, dirs[b])
				}
				g := groups["d ≥ 2"]
				if sa.d == 1 {
					g = groups["d = 1"]
				}
				e := math.Abs(SignedError(sb.mean, sa.mean))
				// x̄_B − x̄_A over x̄_A: both means' errors, B's scaled to A's mean.
				r := sb.rel * sb.mean / sa.mean
				absExp, inExp := normalScore(math.Sqrt(sa.rel*sa.rel + r*r))
				g.transfers[k] = true
				g.n++
				g.absObs += e
				g.absExp += absExp
				g.inExp += inExp
				if e <= Within {
					g.inObs++
				}
			}
		}
	}
	for name, g := range groups {
		if len(g.transfers) < 100 {
			t.Fatalf("%s: %d transfers measured in two campaigns, want the catalogue's hundreds", name, len(g.transfers))
		}
		absObs, absExp, inObs, inExp := g.absObs/g.n, g.absExp/g.n, g.inObs/g.n, g.inExp/g.n
		t.Logf("%s: %d transfers, %g pairs of means: mean |ε| %.2f%% observed, %.2f%% expected; within ±10%% %.1f%% observed, %.1f%% expected",
			name, len(g.transfers), g.n, 100*absObs, 100*absExp, 100*inObs, 100*inExp)
		// The bands: about 150 transfers at d = 1 and 800 at d ≥ 2 give a share within ±10% a
		// sampling error of about two points and 1.3, hence three points; a campaign effect of
		// standard deviation 0.57 times a mean's own would raise the mean |ε| by 15%
		// (√(1 + 0.57²)). Measured on the committed campaigns: d = 1 95.5% against 93.8%, 2.30% against 2.49%;
		// d ≥ 2 83.5% against 83.8%, 5.36% against 5.31%.
		if math.Abs(inObs-inExp) > 0.03 || math.Abs(absObs/absExp-1) > 0.15 {
			t.Errorf("%s: the campaigns agree as %.1f%% within ±10%% (mean |ε| %.2f%%); their repetitions' spread says %.1f%% (%.2f%%)",
				name, 100*inObs, 100*absObs, 100*inExp, 100*absExp)
		}
	}
}
