package validate

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/experiments"
)

// Within is the error band of the share column, ±10% as in CCPE 2014 §7.2.
const Within = 0.10

// HeldOut is a held-out transfer as predictions.parquet describes it: its pattern, nodes,
// size and setting, and its measured mean time over its repetitions.
type HeldOut struct {
	Experiment string  `col:"experiment" doc:"experiment of the pattern"`
	PatternID  string  `col:"pattern_id" doc:"pattern"`
	FlowID     int64   `col:"flow_id" unit:"1" doc:"transfer within the pattern"`
	Src        string  `col:"src_node" doc:"sending node"`
	Dst        string  `col:"dst_node" doc:"receiving node"`
	Bytes      int64   `col:"bytes" unit:"B" doc:"message size"`
	Setting    string  `col:"setting" doc:"setting (|N|, d) as N<n>-d<d>, an exchange or cycle of f transfers as <experiment>-F<f>, or all"`
	Asymmetric bool    `col:"asymmetric_pattern" doc:"true when the pattern has unequal traffic both ways on some link"`
	Reps       int64   `col:"reps" unit:"1" doc:"repetitions measured"`
	Measured   float64 `col:"measured_s" unit:"s" doc:"mean measured completion time"`
}

// Row is one model's prediction of one held-out transfer: the transfer, the model, its
// prediction and its signed relative error ε = (predicted − measured) / measured.
// predictions.parquet holds one row per transfer and model (long format), so that a new
// model adds rows, not columns.
type Row struct {
	HeldOut
	Model     string  `col:"model" doc:"contention model (contention.Registry)"`
	Predicted float64 `col:"predicted_s" unit:"s" doc:"the model's predicted completion time"`
	Err       float64 `col:"err" unit:"1" doc:"signed relative error (predicted − measured)/measured"`
}

// PredictionsTable is the schema of predictions.parquet.
var PredictionsTable = datasets.DefineTable[Row]("predictions")

// widePredictionsTable is the schema of predictions.parquet in the wide format. It is defined
// after PredictionsTable, which is the one a file's table name finds (datasets.ParquetTable).
var widePredictionsTable = datasets.DefineTable[wideRow]("predictions")

// ModelRows returns the rows of one model, in order.
func ModelRows(rows []Row, model string) []Row {
	var out []Row
	for _, r := range rows {
		if r.Model == model {
			out = append(out, r)
		}
	}
	return out
}

// Errors returns one model's signed errors, in row order; keep, when not nil, selects the
// rows.
func Errors(rows []Row, model string, keep func(Row) bool) []float64 {
	var out []float64
	for _, r := range rows {
		if r.Model == model && (keep == nil || keep(r)) {
			out = append(out, r.Err)
		}
	}
	return out
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
// depend on the scheduling. An error names the model and the pattern; when ctx is done, the
// predictions stop within a step and ctx's error is returned.
func PredictPatterns(ctx context.Context, net *contention.Network, pats []*datasets.MeasuredPattern, models []contention.Model) ([][]*contention.Prediction, error) {
	flows := make([][]contention.Flow, len(pats))
	for k, p := range pats {
		flows[k] = p.Flows
	}
	return contention.PredictAll(ctx, net, flows, models, func(k, j int, err error) error {
		return fmt.Errorf("%s on %s/%s: %w", models[j].Name(), pats[k].Experiment, pats[k].ID, err)
	})
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
// against the measured means, given the spread of the repetitions: a transfer's
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
	// Collectives are the measured collectives scored (ScoreCollectives), when the dataset
	// has some, and CollectiveAlgorithms how their algorithms were chosen.
	Collectives          []CollectiveAccuracy `json:"collectives,omitempty"`
	CollectiveAlgorithms string               `json:"collective_algorithms,omitempty"`
	Warnings             []string             `json:"warnings,omitempty"`
}

// InSample is every model's score on the held-out transfers with parameters fitted on the
// calibration experiments and those transfers together (selection.InSample), per setting and
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
// scoring a calibration experiment would score a model on what it was fitted on. The rows
// are one per transfer and model, transfers in pattern order, models in the given order. The
// predictions stop when ctx is done, with its error.
func Validate(ctx context.Context, cl *cluster.Cluster, rows []datasets.Transfer, params contention.Params, table *contention.PenaltyTable,
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
	// Patterns are independent: predict them on all cores, then score them in order, so that
	// the result is the serial one byte for byte.
	preds, err := PredictPatterns(ctx, net, pats, models)
	if err != nil {
		return nil, nil, fmt.Errorf("validate: %w", err)
	}
	sc := newScorer(models)
	var out []Row
	for k, p := range pats {
		if out, err = sc.pattern(cl, p, preds[k], out); err != nil {
			return nil, nil, err
		}
	}
	sc.finish(acc, len(pats))
	return out, acc, nil
}

// tally is one model's errors on one setting, those of the patterns with asymmetric traffic
// apart too, and the patterns' steps.
type tally struct {
	errs, asymErrs []float64
	steps          []float64
}

// scorer gathers Validate's errors and noise terms pattern by pattern: per setting and model,
// per situation and per size class.
type scorer struct {
	models       []contention.Model
	bySetting    map[string]map[string]*tally
	patterns     map[string]int
	noiseBy      map[string]*noiseTally
	overallNoise *noiseTally
	sits         []*groupTally
	sizes        map[int]*groupTally
}

func newScorer(models []contention.Model) *scorer {
	sc := &scorer{models: models, bySetting: map[string]map[string]*tally{}, patterns: map[string]int{},
		noiseBy: map[string]*noiseTally{}, overallNoise: &noiseTally{}, sits: make([]*groupTally, situationCount),
		sizes: map[int]*groupTally{}}
	for s := range sc.sits {
		sc.sits[s] = newGroupTally(len(models))
	}
	return sc
}

// settingOf is a pattern's setting: N<n>-d<d> for a random pattern, <experiment>-F<f> for an
// exchange or a cycle of f transfers (their accuracy changes with how many nodes send and
// receive at once), else "all".
func settingOf(p *datasets.MeasuredPattern) string {
	switch p.Experiment {
	case experiments.Random:
		if n, d, ok := experiments.RandomSetting(p.ID); ok {
			return fmt.Sprintf("N%d-d%d", n, d)
		}
	case experiments.Exchange, experiments.Cycle:
		return fmt.Sprintf("%s-F%d", p.Experiment, len(p.Flows))
	}
	return "all"
}

// pattern scores one pattern's predictions (one per model) and appends its rows to out.
func (sc *scorer) pattern(cl *cluster.Cluster, p *datasets.MeasuredPattern, preds []*contention.Prediction, out []Row) ([]Row, error) {
	setting := settingOf(p)
	sc.patterns[setting]++
	asym := asymmetricTraffic(cl, p.Flows)
	if sc.noiseBy[setting] == nil {
		sc.noiseBy[setting] = &noiseTally{}
	}
	sit, err := situationOf(cl, p.Flows)
	if err != nil {
		return nil, fmt.Errorf("validate: %s %s: %w", p.Experiment, p.ID, err)
	}
	size := sc.noise(p, setting, sit)
	if sc.bySetting[setting] == nil {
		sc.bySetting[setting] = map[string]*tally{}
	}
	// Each model's tally, then one pass over the transfers: every error is computed once, for
	// the tallies and the transfer's rows alike.
	tallies := make([]*tally, len(sc.models))
	for j, m := range sc.models {
		t := sc.bySetting[setting][m.Name()]
		if t == nil {
			t = &tally{}
			sc.bySetting[setting][m.Name()] = t
		}
		t.steps = append(t.steps, float64(preds[j].Steps))
		tallies[j] = t
	}
	for i, f := range p.Flows {
		held := HeldOut{Experiment: p.Experiment, PatternID: p.ID, FlowID: int64(i), Src: f.Src,
			Dst: f.Dst, Bytes: int64(f.Bytes), Setting: setting, Asymmetric: asym, Reps: p.Reps[i], Measured: p.Mean[i]}
		for j, m := range sc.models {
			t, pred := tallies[j], preds[j].Times[i]
			e := SignedError(pred, p.Mean[i])
			t.errs = append(t.errs, e)
			if asym {
				t.asymErrs = append(t.asymErrs, e)
			}
			secs := math.Abs(pred - p.Mean[i])
			sc.sits[sit[i]].add(j, e, secs)
			size[i].add(j, e, secs)
			out = append(out, Row{HeldOut: held, Model: m.Name(), Predicted: pred, Err: e})
		}
	}
	return out, nil
}

// noise adds the noise terms of a pattern's transfers to their setting, situation and size
// class, and returns each transfer's size class.
func (sc *scorer) noise(p *datasets.MeasuredPattern, setting string, sit []int) []*groupTally {
	size := make([]*groupTally, len(p.Flows))
	for i, f := range p.Flows {
		c := sizeClass(f.Bytes)
		if sc.sizes[c] == nil {
			sc.sizes[c] = newGroupTally(len(sc.models))
		}
		size[i] = sc.sizes[c]
		if a, w, ok := noiseTerms(p.Mean[i], p.SD[i], p.Reps[i]); ok {
			for _, nz := range []*noiseTally{sc.noiseBy[setting], sc.overallNoise, &sc.sits[sit[i]].noise, &size[i].noise} {
				nz.abs, nz.within = append(nz.abs, a), append(nz.within, w)
			}
		}
	}
	return size
}

// score is a model's accuracy from its tally.
func score(name string, t *tally) ModelAccuracy {
	ma := ModelAccuracy{Model: name, Transfers: len(t.errs), MeanSteps: mean(t.steps), AsymTransfers: len(t.asymErrs)}
	abs := absAll(t.errs)
	ma.MeanAbsErr, ma.MeanErr, ma.Within10 = summarize(abs, t.errs)
	ma.SEAbsErr = stdErr(abs)
	ma.AsymMeanAbsErr = mean(absAll(t.asymErrs))
	return ma
}

// finish writes the accuracy per setting (in CompareSettings order), over all, per situation
// and per size class into acc; patterns is the number of patterns scored.
func (sc *scorer) finish(acc *Accuracy, patterns int) {
	settings := slices.SortedFunc(maps.Keys(sc.bySetting), CompareSettings)
	overall := map[string]*tally{}
	for _, s := range settings {
		sa := SettingAccuracy{Setting: s, Patterns: sc.patterns[s], NoiseLimit: sc.noiseBy[s].limit()}
		if n, d, ok := experiments.RandomSetting(s); ok {
			sa.Nodes, sa.D = n, d
		}
		for _, m := range sc.models {
			t := sc.bySetting[s][m.Name()]
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
	acc.Overall = SettingAccuracy{Setting: "overall", Patterns: patterns, NoiseLimit: sc.overallNoise.limit()}
	for _, m := range sc.models {
		if t := overall[m.Name()]; t != nil {
			acc.Overall.Models = append(acc.Overall.Models, score(m.Name(), t))
		}
	}
	for s := range sc.sits {
		if ga, ok := sc.sits[s].accuracy(sc.models); ok {
			acc.Situations = append(acc.Situations, SituationAccuracy{Situation: situationName(s), GroupAccuracy: ga})
		}
	}
	for _, c := range slices.Sorted(maps.Keys(sc.sizes)) {
		if ga, ok := sc.sizes[c].accuracy(sc.models); ok {
			lo, hi := sizeBounds(c)
			acc.Sizes = append(acc.Sizes, SizeAccuracy{Size: sizeName(c), MinBytes: lo, MaxBytes: hi, GroupAccuracy: ga})
		}
	}
}

// CompareSettings orders N<n>-d<d> settings by d, then |N| (the paper's Table II order),
// then <experiment>-F<f> settings by experiment and f, with any other setting last.
func CompareSettings(a, b string) int {
	na, da, oka := experiments.RandomSetting(a)
	nb, db, okb := experiments.RandomSetting(b)
	switch {
	case oka && okb:
		return cmp.Or(cmp.Compare(da, db), cmp.Compare(na, nb))
	case oka:
		return -1
	case okb:
		return 1
	}
	ea, fa, oka := flowsSetting(a)
	eb, fb, okb := flowsSetting(b)
	switch {
	case oka && okb:
		return cmp.Or(cmp.Compare(ea, eb), cmp.Compare(fa, fb))
	case oka:
		return -1
	case okb:
		return 1
	}
	return cmp.Compare(a, b)
}

// flowsSetting reads an <experiment>-F<f> setting.
func flowsSetting(s string) (exp string, flows int, ok bool) {
	i := strings.LastIndex(s, "-F")
	if i <= 0 {
		return "", 0, false
	}
	f, err := strconv.Atoi(s[i+2:])
	if err != nil || f <= 0 {
		return "", 0, false
	}
	return s[:i], f, true
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
