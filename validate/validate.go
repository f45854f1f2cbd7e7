package validate

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/experiments"
	"github.com/commcal/commcal/internal/parallel"
)

// Within is the error band of the share column, ±10% as in CCPE 2014 §7.2.
const Within = 0.10

// Row is one held-out transfer: its measured mean time and every model's prediction and
// signed relative error ε = (predicted − measured) / measured.
type Row struct {
	Experiment string  `col:"experiment" doc:"experiment of the pattern"`
	PatternID  string  `col:"pattern_id" doc:"pattern"`
	FlowID     int64   `col:"flow_id" unit:"1" doc:"transfer within the pattern"`
	Src        string  `col:"src_node" doc:"sending node"`
	Dst        string  `col:"dst_node" doc:"receiving node"`
	Bytes      int64   `col:"bytes" unit:"B" doc:"message size"`
	Setting    string  `col:"setting" doc:"setting (|N|, d) as N<n>-d<d>, or all"`
	Asymmetric bool    `col:"asymmetric_pattern" doc:"true when the pattern has unequal traffic both ways on some link"`
	Reps       int64   `col:"reps" unit:"1" doc:"repetitions measured"`
	Measured   float64 `col:"measured_s" unit:"s" doc:"mean measured completion time"`

	PredAsymmetric       float64 `col:"pred_asymmetric_s" unit:"s" doc:"asymmetric model"`
	ErrAsymmetric        float64 `col:"err_asymmetric" unit:"1" doc:"signed relative error of asymmetric"`
	PredAsymmetricFitted float64 `col:"pred_asymmetric_fitted_s" unit:"s" doc:"asymmetric-fitted model"`
	ErrAsymmetricFitted  float64 `col:"err_asymmetric_fitted" unit:"1" doc:"signed relative error of asymmetric-fitted"`
	PredFair             float64 `col:"pred_fair_s" unit:"s" doc:"fair model"`
	ErrFair              float64 `col:"err_fair" unit:"1" doc:"signed relative error of fair"`
	PredMaxMin           float64 `col:"pred_maxmin_s" unit:"s" doc:"maxmin model"`
	ErrMaxMin            float64 `col:"err_maxmin" unit:"1" doc:"signed relative error of maxmin"`
	PredPenalty          float64 `col:"pred_penalty_s" unit:"s" doc:"penalty model"`
	ErrPenalty           float64 `col:"err_penalty" unit:"1" doc:"signed relative error of penalty"`
	PredPenaltyTable     float64 `col:"pred_penalty_table_s" unit:"s" doc:"penalty-table model"`
	ErrPenaltyTable      float64 `col:"err_penalty_table" unit:"1" doc:"signed relative error of penalty-table"`
	PredHockney          float64 `col:"pred_hockney_s" unit:"s" doc:"hockney model"`
	ErrHockney           float64 `col:"err_hockney" unit:"1" doc:"signed relative error of hockney"`
	PredStochastic       float64 `col:"pred_stochastic_s" unit:"s" doc:"stochastic model"`
	ErrStochastic        float64 `col:"err_stochastic" unit:"1" doc:"signed relative error of stochastic"`
	PredSurface          float64 `col:"pred_surface_s" unit:"s" doc:"surface model"`
	ErrSurface           float64 `col:"err_surface" unit:"1" doc:"signed relative error of surface"`
	PredDuplex           float64 `col:"pred_duplex_s" unit:"s" doc:"duplex model"`
	ErrDuplex            float64 `col:"err_duplex" unit:"1" doc:"signed relative error of duplex"`
	PredAckPath          float64 `col:"pred_ackpath_s" unit:"s" doc:"ackpath model"`
	ErrAckPath           float64 `col:"err_ackpath" unit:"1" doc:"signed relative error of ackpath"`
	PredAckPathAlpha     float64 `col:"pred_ackpath_alpha_s" unit:"s" doc:"ackpath-alpha model"`
	ErrAckPathAlpha      float64 `col:"err_ackpath_alpha" unit:"1" doc:"signed relative error of ackpath-alpha"`
}

// PredictionsTable is the schema of predictions.parquet.
var PredictionsTable = datasets.DefineTable[Row]("predictions")

// columns gives the row's prediction and error fields for a model; every model commcal
// predicts with has a pair, so an unknown model is a programming error.
func (r *Row) columns(model string) (pred, err *float64) {
	switch model {
	case "asymmetric":
		return &r.PredAsymmetric, &r.ErrAsymmetric
	case "asymmetric-fitted":
		return &r.PredAsymmetricFitted, &r.ErrAsymmetricFitted
	case "fair":
		return &r.PredFair, &r.ErrFair
	case "maxmin":
		return &r.PredMaxMin, &r.ErrMaxMin
	case "penalty":
		return &r.PredPenalty, &r.ErrPenalty
	case "penalty-table":
		return &r.PredPenaltyTable, &r.ErrPenaltyTable
	case "hockney":
		return &r.PredHockney, &r.ErrHockney
	case "stochastic":
		return &r.PredStochastic, &r.ErrStochastic
	case "surface":
		return &r.PredSurface, &r.ErrSurface
	case "duplex":
		return &r.PredDuplex, &r.ErrDuplex
	case "ackpath":
		return &r.PredAckPath, &r.ErrAckPath
	case "ackpath-alpha":
		return &r.PredAckPathAlpha, &r.ErrAckPathAlpha
	}
	panic("validate: no column for model " + model)
}

// set stores a model's prediction and error in the row.
func (r *Row) set(model string, pred, err float64) {
	p, e := r.columns(model)
	*p, *e = pred, err
}

// Err returns the row's signed error for a model.
func (r Row) Err(model string) float64 {
	_, e := r.columns(model)
	return *e
}

// SummarizeErrors gives the mean |ε|, the mean signed ε (bias) and the share with |ε| ≤ Within
// of signed relative errors; all 0 when there are none.
func SummarizeErrors(errs []float64) (meanAbs, bias, within float64) {
	return summarize(absAll(errs), errs)
}

// summarize is SummarizeErrors with the |ε| already taken.
func summarize(abs, errs []float64) (meanAbs, bias, within float64) {
	for _, a := range abs {
		if a <= Within {
			within++
		}
	}
	if len(errs) > 0 {
		within /= float64(len(errs))
	}
	return mean(abs), mean(errs), within
}

// SignedError is ε = (predicted − measured)/measured.
func SignedError(predicted, measured float64) float64 { return (predicted - measured) / measured }

// absAll is |x| element by element.
func absAll(x []float64) []float64 {
	abs := make([]float64, len(x))
	for i, v := range x {
		abs[i] = math.Abs(v)
	}
	return abs
}

// PredictPatterns predicts every pattern with every model, on all cores: out[k][j] is
// pattern k's prediction by models[j]. Each pattern has its own slot, so the result does not
// depend on the scheduling. An error names the model and the pattern.
func PredictPatterns(ctx context.Context, net *contention.Network, pats []*datasets.MeasuredPattern, models []contention.Model) ([][]*contention.Prediction, error) {
	preds := make([][]*contention.Prediction, len(pats))
	err := parallel.For(ctx, len(pats), 0, func(k int) error {
		p := pats[k]
		preds[k] = make([]*contention.Prediction, len(models))
		for j, m := range models {
			pred, err := m.Predict(net, p.Flows)
			if err != nil {
				return fmt.Errorf("%s on %s/%s: %w", m.Name(), p.Experiment, p.ID, err)
			}
			preds[k][j] = pred
		}
		return nil
	})
	return preds, err
}

// ModelAccuracy is one model's line of the Table II of Zhu et al. (CCPE 2014) for one setting.
type ModelAccuracy struct {
	Model string `json:"model"`
	// Transfers scored and the mean number of Algorithm-2 steps over the setting's patterns.
	Transfers int     `json:"transfers"`
	MeanSteps float64 `json:"mean_steps"`
	// MeanAbsErr is the mean |ε|, SEAbsErr its standard error (π(ε) in the paper), MeanErr the
	// mean signed ε (bias), Within10 the share of transfers with |ε| ≤ 10%.
	MeanAbsErr float64 `json:"mean_abs_err"`
	SEAbsErr   float64 `json:"se_abs_err"`
	MeanErr    float64 `json:"mean_err"`
	Within10   float64 `json:"within_10pct"`
	// The same restricted to patterns with asymmetric traffic on a link (ε' of the paper for
	// asymmetric, ε'' for fair).
	AsymTransfers  int     `json:"asym_transfers"`
	AsymMeanAbsErr float64 `json:"asym_mean_abs_err"`
}

// SettingAccuracy is every model's accuracy on one setting (|N|, d).
type SettingAccuracy struct {
	Setting  string          `json:"setting"`
	Nodes    int             `json:"nodes,omitempty"`
	D        int             `json:"d,omitempty"`
	Patterns int             `json:"patterns"`
	Models   []ModelAccuracy `json:"models"`
	// NoiseLimit is what no model can beat on these measurements (NoiseLimit).
	NoiseLimit NoiseLimit `json:"noise_limit"`
}

// Model is the named model's accuracy on the setting, if it was scored (as GroupAccuracy.Model).
func (s *SettingAccuracy) Model(name string) (ModelAccuracy, bool) {
	for _, m := range s.Models {
		if m.Model == name {
			return m, true
		}
	}
	return ModelAccuracy{}, false
}

// WithOverall is settings followed by overall: every row of a table per setting.
func WithOverall(settings []SettingAccuracy, overall SettingAccuracy) []SettingAccuracy {
	return append(slices.Clone(settings), overall)
}

// NoiseLimit is what a perfect predictor of every transfer's expected time would score
// against the measured means, given the spread of the repetitions (design §6): a transfer's
// mean over r repetitions misses its expectation μ by a normal error of standard deviation
// σ/√r, so the perfect prediction μ has |ε| = |μ − x̄|/x̄ with expectation √(2/π)·σ/(√r·x̄)
// and lies within ±10% with probability erf(0.1·x̄·√r/(σ√2)). σ is estimated by the sample
// standard deviation s over c4(r) (s underestimates σ: c4(3) = 0.886); averaged over the
// transfers with at least two repetitions. With three repetitions each transfer's s is rough
// (about ±50%), the average over a setting's transfers much less so.
type NoiseLimit struct {
	Transfers  int     `json:"transfers"`
	MeanAbsErr float64 `json:"mean_abs_err"`
	Within10   float64 `json:"within_10pct"`
}

// noiseTally gathers the noise terms of a setting's transfers.
type noiseTally struct{ abs, within []float64 }

func (n *noiseTally) limit() NoiseLimit {
	return NoiseLimit{Transfers: len(n.abs), MeanAbsErr: mean(n.abs), Within10: mean(n.within)}
}

// noiseTerms are one transfer's contributions to the noise limit: its expected |ε| and its
// probability of |ε| ≤ Within under a perfect predictor; ok is false below two repetitions.
func noiseTerms(mean, sd float64, reps int64) (absErr, within float64, ok bool) {
	rel, ok := relStdErr(mean, sd, reps)
	if !ok {
		return 0, 0, false
	}
	absErr, within = normalScore(rel)
	return absErr, within, true
}

// relStdErr is the standard deviation of a mean over reps repetitions relative to the mean,
// σ/(√reps·mean), σ estimated by sd/c4(reps); ok is false below two repetitions or for a mean
// that is not positive.
func relStdErr(mean, sd float64, reps int64) (rel float64, ok bool) {
	if reps < 2 || !(mean > 0) {
		return 0, false
	}
	n := float64(reps)
	return sd / c4(n) / math.Sqrt(n) / mean, true
}

// c4 is the correction factor of the sample standard deviation s of n normal draws,
// E[s] = c4(n)·σ:
// √(2/(n−1))·Γ(n/2)/Γ((n−1)/2), through log-gamma.
func c4(n float64) float64 {
	lg1, _ := math.Lgamma(n / 2)
	lg2, _ := math.Lgamma((n - 1) / 2)
	return math.Sqrt(2/(n-1)) * math.Exp(lg1-lg2)
}

// normalScore is the expected |ε| and the probability of |ε| ≤ Within of a relative error
// drawn from a normal distribution of mean 0 and standard deviation rel (rel = 0: 0 and 1, as
// erf(+∞) = 1).
func normalScore(rel float64) (absErr, within float64) {
	return rel * math.Sqrt(2/math.Pi), math.Erf(Within / (rel * math.Sqrt2))
}

// AccuracyFormat is the format tag of accuracy.json.
const AccuracyFormat = "commcal-accuracy/1"

// Accuracy is the content of accuracy.json.
type Accuracy struct {
	Format  string   `json:"format"`
	HeldOut []string `json:"held_out"`
	// Default is the model reports put forward (contention.DefaultModel).
	Default  string            `json:"default_model"`
	Params   contention.Params `json:"params"`
	Settings []SettingAccuracy `json:"settings"`
	Overall  SettingAccuracy   `json:"overall"`
	// Situations is the accuracy per situation (situation.go), the situations with held-out
	// transfers only.
	Situations []SituationAccuracy `json:"situations,omitempty"`
	// Sizes is the accuracy per size class (sizes.go), smallest first, the classes with
	// held-out transfers only.
	Sizes []SizeAccuracy `json:"sizes,omitempty"`
	// InSample, when asked for (validate --in-sample), is every model scored on the same
	// held-out transfers with parameters fitted on them too: the reach of its form, not an
	// accuracy.
	InSample *InSample `json:"in_sample,omitempty"`
	Warnings []string  `json:"warnings,omitempty"`
}

// InSample is every model's score on the held-out transfers with parameters fitted on the
// calibration experiments and those transfers together (pipeline.InSample), per setting and
// over all, with the noise limits of Settings and Overall.
type InSample struct {
	Params   contention.Params `json:"params"`
	Settings []SettingAccuracy `json:"settings"`
	Overall  SettingAccuracy   `json:"overall"`
	// Rows are the held-out transfers' predictions with those parameters, as Validate's
	// (validate --in-sample writes them to predictions_in_sample.parquet).
	Rows []Row `json:"-"`
}

// asymmetricTraffic says whether some link carries transfers both ways in unequal numbers,
// the situation in which the asymmetric property acts.
func asymmetricTraffic(cl *cluster.Cluster, flows []contention.Flow) bool {
	count := contention.ResourceCounts(cl, flows)
	for r, res := range cl.Resources() {
		c, back := count[r], count[res.Reverse]
		if c > 0 && back > 0 && c != back {
			return true
		}
	}
	return false
}

// Validate predicts every held-out transfer of the dataset's rows with every model and scores
// the predictions. heldOut must name held-out experiments only (experiments.CheckHeldOut):
// scoring a calibration experiment would score a model on what it was fitted on.
func Validate(cl *cluster.Cluster, rows []datasets.Transfer, params contention.Params, table *contention.PenaltyTable,
	models []contention.Model, heldOut []string) ([]Row, *Accuracy, error) {
	if err := experiments.CheckHeldOut(heldOut); err != nil {
		return nil, nil, fmt.Errorf("validate: %w", err)
	}
	net, err := params.Network(cl)
	if err != nil {
		return nil, nil, err
	}
	net.PenaltyTable = table
	pats, err := datasets.MeasuredPatterns(rows, heldOut)
	if err != nil {
		return nil, nil, err
	}
	acc := &Accuracy{Format: AccuracyFormat, HeldOut: heldOut, Default: contention.DefaultModel, Params: params}
	if len(pats) == 0 {
		acc.Warnings = append(acc.Warnings, fmt.Sprintf("no transfers of the held-out experiments (%v): nothing to score", heldOut))
	}
	type tally struct {
		errs, asymErrs []float64
		steps          []float64
	}
	noiseBy := map[string]*noiseTally{}
	overallNoise := &noiseTally{}
	// Patterns are independent: predict them on all cores, then score them in order, so that
	// the result is the serial one byte for byte.
	preds, err := PredictPatterns(context.Background(), net, pats, models)
	if err != nil {
		return nil, nil, fmt.Errorf("validate: %w", err)
	}
	bySetting := map[string]map[string]*tally{}
	patterns := map[string]int{}
	// Per situation and per size class: each model's errors and the noise terms.
	sits := make([]*groupTally, situationCount)
	for s := range sits {
		sits[s] = newGroupTally(len(models))
	}
	sizes := map[int]*groupTally{}
	var out []Row
	for k, p := range pats {
		setting := "all"
		if p.Experiment == experiments.Random {
			if n, d, ok := contention.RandomSetting(p.ID); ok {
				setting = fmt.Sprintf("N%d-d%d", n, d)
			}
		}
		patterns[setting]++
		asym := asymmetricTraffic(cl, p.Flows)
		if noiseBy[setting] == nil {
			noiseBy[setting] = &noiseTally{}
		}
		sit, err := situationOf(cl, p.Flows)
		if err != nil {
			return nil, nil, fmt.Errorf("validate: %s %s: %w", p.Experiment, p.ID, err)
		}
		size := make([]*groupTally, len(p.Flows))
		for i, f := range p.Flows {
			c := sizeClass(f.Bytes)
			if sizes[c] == nil {
				sizes[c] = newGroupTally(len(models))
			}
			size[i] = sizes[c]
			if a, w, ok := noiseTerms(p.Mean[i], p.SD[i], p.Reps[i]); ok {
				for _, nz := range []*noiseTally{noiseBy[setting], overallNoise, &sits[sit[i]].noise, &size[i].noise} {
					nz.abs, nz.within = append(nz.abs, a), append(nz.within, w)
				}
			}
		}
		base := len(out)
		for i, f := range p.Flows {
			out = append(out, Row{Experiment: p.Experiment, PatternID: p.ID, FlowID: int64(i), Src: f.Src, Dst: f.Dst,
				Bytes: int64(f.Bytes), Setting: setting, Asymmetric: asym, Reps: p.Reps[i], Measured: p.Mean[i]})
		}
		for j, m := range models {
			pred := preds[k][j]
			if bySetting[setting] == nil {
				bySetting[setting] = map[string]*tally{}
			}
			t := bySetting[setting][m.Name()]
			if t == nil {
				t = &tally{}
				bySetting[setting][m.Name()] = t
			}
			t.steps = append(t.steps, float64(pred.Steps))
			for i := range p.Flows {
				e := SignedError(pred.Times[i], p.Mean[i])
				out[base+i].set(m.Name(), pred.Times[i], e)
				t.errs = append(t.errs, e)
				secs := math.Abs(pred.Times[i] - p.Mean[i])
				sits[sit[i]].add(j, e, secs)
				size[i].add(j, e, secs)
				if asym {
					t.asymErrs = append(t.asymErrs, e)
				}
			}
		}
	}
	score := func(name string, t *tally) ModelAccuracy {
		ma := ModelAccuracy{Model: name, Transfers: len(t.errs), MeanSteps: mean(t.steps), AsymTransfers: len(t.asymErrs)}
		abs := absAll(t.errs)
		ma.MeanAbsErr, ma.MeanErr, ma.Within10 = summarize(abs, t.errs)
		ma.SEAbsErr = stdErr(abs)
		ma.AsymMeanAbsErr = mean(absAll(t.asymErrs))
		return ma
	}
	settings := make([]string, 0, len(bySetting))
	for s := range bySetting {
		settings = append(settings, s)
	}
	slices.SortFunc(settings, CompareSettings)
	overall := map[string]*tally{}
	for _, s := range settings {
		sa := SettingAccuracy{Setting: s, Patterns: patterns[s], NoiseLimit: noiseBy[s].limit()}
		if n, d, ok := contention.RandomSetting(s); ok {
			sa.Nodes, sa.D = n, d
		}
		for _, m := range models {
			t := bySetting[s][m.Name()]
			sa.Models = append(sa.Models, score(m.Name(), t))
			o := overall[m.Name()]
			if o == nil {
				o = &tally{}
				overall[m.Name()] = o
			}
			o.errs = append(o.errs, t.errs...)
			o.asymErrs = append(o.asymErrs, t.asymErrs...)
			o.steps = append(o.steps, t.steps...)
		}
		acc.Settings = append(acc.Settings, sa)
	}
	acc.Overall = SettingAccuracy{Setting: "overall", Patterns: len(pats), NoiseLimit: overallNoise.limit()}
	for _, m := range models {
		if t := overall[m.Name()]; t != nil {
			acc.Overall.Models = append(acc.Overall.Models, score(m.Name(), t))
		}
	}
	for s := range sits {
		if ga, ok := sits[s].accuracy(models); ok {
			acc.Situations = append(acc.Situations, SituationAccuracy{Situation: situationName(s), GroupAccuracy: ga})
		}
	}
	for _, c := range slices.Sorted(maps.Keys(sizes)) {
		if ga, ok := sizes[c].accuracy(models); ok {
			lo, hi := sizeBounds(c)
			acc.Sizes = append(acc.Sizes, SizeAccuracy{Size: sizeName(c), MinBytes: lo, MaxBytes: hi, GroupAccuracy: ga})
		}
	}
	return out, acc, nil
}

// CompareSettings orders N<n>-d<d> settings by d, then |N| (the paper's Table II order),
// with any other setting last.
func CompareSettings(a, b string) int {
	na, da, oka := contention.RandomSetting(a)
	nb, db, okb := contention.RandomSetting(b)
	switch {
	case oka && okb:
		return cmp.Or(cmp.Compare(da, db), cmp.Compare(na, nb))
	case oka:
		return -1
	case okb:
		return 1
	}
	return cmp.Compare(a, b)
}

// mean is the arithmetic mean, 0 for no values.
func mean(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	return stat.Mean(x, nil)
}

// stdErr is the standard error of the mean, s/√n (0 below two values).
func stdErr(x []float64) float64 {
	if len(x) < 2 {
		return 0
	}
	return stat.StdErr(stat.StdDev(x, nil), float64(len(x)))
}
