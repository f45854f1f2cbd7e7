package estimate

import (
	"context"
	"fmt"
	"math"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/experiments"
	"github.com/commcal/commcal/internal/parallel"
)

// ContraFit is the contra-flow factor φ of the asymmetric-fitted model, fitted on the
// bidirectional experiments of CCPE 2014 §5.2.
type ContraFit struct {
	Phi float64 `json:"phi"`
	// CILow and CIHigh bound the 95% percentile-bootstrap interval over patterns.
	CILow  float64 `json:"ci_low"`
	CIHigh float64 `json:"ci_high"`
	// Patterns and Transfers are the observations behind the fit.
	Patterns  int `json:"patterns"`
	Transfers int `json:"transfers"`
	// RMS of log(predicted/measured) time at the fit, under fair sharing (φ = 0) and under the
	// max(in, out) rule of the asymmetric property (φ = 1).
	RMSLogErr     float64 `json:"rms_log_err"`
	RMSLogErrFair float64 `json:"rms_log_err_fair"`
	RMSLogErrAsym float64 `json:"rms_log_err_asymmetric"`
	// FairAsymDiff is the largest relative difference |T(φ=1) − T(φ=0)|/T(φ=0) between the
	// times fair sharing and the asymmetric rule predict for a transfer of the patterns. At 0
	// (below contraTie) the patterns cannot tell the two apart, whatever was measured: one
	// flow each way of a pair, as osu_bibw and IMB PingPing run, loads no resource with more
	// flows one way than the other, and φ is not identified.
	FairAsymDiff float64          `json:"fair_asym_diff"`
	Residuals    []ContraResidual `json:"residuals"`
}

// contraTie is the relative difference of predicted times below which fair sharing and the
// asymmetric rule predict the same: the models compute with ratios of capacities and flow
// counts, so equal predictions differ by rounding, many orders below 1e-9, and any contra-flow
// effect the rule applies is a share of a rate, many orders above it.
const contraTie = 1e-9

// ContraExperiments are the experiments φ is fitted on: the bidirectional designs, and the
// exchanges and cycles in which nodes send and receive at once.
func ContraExperiments() []string {
	return append(experiments.Bidirectional(), experiments.Exchanges()...)
}

// ContraResidual is one transfer of a bidirectional pattern: measured rate against the rates
// of fair sharing, of the asymmetric rule and of the fit, in bits per second.
type ContraResidual struct {
	Experiment string `json:"experiment"`
	Pattern    string `json:"pattern"`
	// In and Out are the pattern's incoming and outgoing transfers on the shared resource (NIC
	// or backbone), read from its "in<i>-out<o>" ID (0 when the ID has another form).
	In         int     `json:"in"`
	Out        int     `json:"out"`
	Flow       int     `json:"flow"`
	Measured   float64 `json:"measured_bps"`
	Fair       float64 `json:"fair_bps"`
	Asymmetric float64 `json:"asymmetric_bps"`
	Fitted     float64 `json:"fitted_bps"`
}

// phiGrid is the resolution of the fit and of its bootstrap: φ = 0, 0.005, …, 1.
const phiGrid = 200

// bootstrapResamples is the number of pattern resamples behind the interval.
const bootstrapResamples = 400

// FitContraFactor fits φ of asymmetric-fitted on the bidirectional and exchange experiments
// of rows (ContraExperiments): it minimises Σ log²(T_pred(φ)/T_meas) over their transfers,
// T_meas being each transfer's mean over its repetitions and T_pred the model's completion
// time with the other parameters from params. Each pattern's error is tabulated on a grid of φ
// (step 1/200), the best grid point is refined by golden-section search, and the interval
// comes from a seeded bootstrap over patterns on the grid (so it is resolved to 0.005). It
// stops with ctx's error (wrapped) when ctx is done.
func FitContraFactor(ctx context.Context, cl *cluster.Cluster, rows []datasets.Transfer, params contention.Params, seed uint64) (*ContraFit, error) {
	pats, err := datasets.MeasuredPatterns(rows, ContraExperiments())
	if err != nil {
		return nil, err
	}
	if len(pats) < 2 {
		return nil, fmt.Errorf("estimate: contra-flow factor: %d bidirectional or exchange patterns (%v), need at least 2", len(pats), ContraExperiments())
	}
	net, err := params.Network(cl)
	if err != nil {
		return nil, err
	}
	// sseOn(n, p, φ) is pattern p's Σ log² error at φ, predicted on n (whose ContraFactor
	// it sets: each worker has its own copy of the network); sse does it on net.
	sseOn := func(n *contention.Network, p *datasets.MeasuredPattern, phi float64) (float64, *contention.Prediction, error) {
		n.ContraFactor = phi
		pred, err := contention.AsymmetricFitted{}.Predict(ctx, n, p.Flows)
		if err != nil {
			return 0, nil, err
		}
		s := 0.0
		for i, t := range pred.Times {
			d := math.Log(t / p.Mean[i])
			s += d * d
		}
		return s, pred, nil
	}
	sse := func(p *datasets.MeasuredPattern, phi float64) (float64, *contention.Prediction, error) {
		return sseOn(net, p, phi)
	}
	// The table of every pattern's error on the grid is most of the work; patterns are
	// independent, so their rows are filled on all cores.
	table := make(gridProfile, len(pats))
	diff := make([]float64, len(pats)) // per pattern, the largest fair–asymmetric difference
	transfers := 0
	for _, p := range pats {
		transfers += len(p.Flows)
	}
	err = parallel.For(ctx, len(pats), 0, func(i int) error {
		local := *net
		table[i] = make([]float64, phiGrid+1)
		var fair, asym *contention.Prediction
		for g := range table[i] {
			var err error
			var pred *contention.Prediction
			if table[i][g], pred, err = sseOn(&local, pats[i], float64(g)/phiGrid); err != nil {
				return fmt.Errorf("estimate: pattern %s/%s: %w", pats[i].Experiment, pats[i].ID, err)
			}
			switch g {
			case 0:
				fair = pred
			case phiGrid:
				asym = pred
			}
		}
		for k, t := range fair.Times {
			diff[i] = max(diff[i], math.Abs(asym.Times[k]-t)/t)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// total is the Σ log² error over all patterns at any φ. The table's patterns predicted
	// once already, so only ctx can make a prediction fail here: serr keeps the first error.
	var serr error
	total := func(phi float64) float64 {
		s := 0.0
		for _, p := range pats {
			v, _, err := sse(p, phi)
			if err != nil && serr == nil {
				serr = err
			}
			s += v
		}
		return s
	}
	g := table.best()
	lo, hi := math.Max(0, float64(g-1)/phiGrid), math.Min(1, float64(g+1)/phiGrid)
	phi := goldenSection(total, lo, hi, 1e-6)
	best := total(phi)
	if serr != nil {
		return nil, serr
	}
	if v := table.column(g); v < best {
		phi, best = float64(g)/phiGrid, v
	}
	glo, ghi := table.bootstrap(seed, 0x70686900)
	fit := &ContraFit{Phi: phi, CILow: float64(glo) / phiGrid, CIHigh: float64(ghi) / phiGrid,
		Patterns: len(pats), Transfers: transfers}
	// The interval contains the estimate by construction of a fit on the full sample.
	fit.CILow, fit.CIHigh = math.Min(fit.CILow, phi), math.Max(fit.CIHigh, phi)
	rms := func(s float64) float64 { return math.Sqrt(s / float64(transfers)) }
	fit.RMSLogErr, fit.RMSLogErrFair, fit.RMSLogErrAsym = rms(best), rms(table.column(0)), rms(table.column(phiGrid))
	for _, d := range diff {
		fit.FairAsymDiff = max(fit.FairAsymDiff, d)
	}
	if fit.Residuals, err = contraResiduals(pats, phi, sse); err != nil {
		return nil, err
	}
	return fit, nil
}

// contraResiduals are the transfers of the patterns with their measured rates and those
// predicted (sse) under fair sharing, the asymmetric rule and the fitted φ.
func contraResiduals(pats []*datasets.MeasuredPattern, phi float64, sse func(*datasets.MeasuredPattern, float64) (float64, *contention.Prediction, error)) ([]ContraResidual, error) {
	var out []ContraResidual
	for _, p := range pats {
		var in, outgoing int
		fmt.Sscanf(p.ID, "in%d-out%d", &in, &outgoing)
		var pred [3]*contention.Prediction // fair, asymmetric, fitted
		for k, at := range []float64{0, 1, phi} {
			var err error
			if _, pred[k], err = sse(p, at); err != nil {
				return nil, err
			}
		}
		for i, f := range p.Flows {
			rate := func(t float64) float64 { return f.Bytes * 8 / t }
			out = append(out, ContraResidual{Experiment: p.Experiment, Pattern: p.ID, In: in, Out: outgoing, Flow: i,
				Measured: rate(p.Mean[i]), Fair: rate(pred[0].Times[i]), Asymmetric: rate(pred[1].Times[i]), Fitted: rate(pred[2].Times[i])})
		}
	}
	return out, nil
}

// goldenSection minimises a unimodal f on [a, b] to within tol.
func goldenSection(f func(float64) float64, a, b, tol float64) float64 {
	const invPhi = 0.6180339887498949
	c, d := b-invPhi*(b-a), a+invPhi*(b-a)
	fc, fd := f(c), f(d)
	for b-a > tol {
		if fc < fd {
			b, d, fd = d, c, fc
			c = b - invPhi*(b-a)
			fc = f(c)
		} else {
			a, c, fc = c, d, fd
			d = a + invPhi*(b-a)
			fd = f(d)
		}
	}
	return (a + b) / 2
}
