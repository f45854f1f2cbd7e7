package selection

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/estimate"
	"github.com/commcal/commcal/internal/parallel"
	"github.com/commcal/commcal/rundir"
	"github.com/commcal/commcal/validate"
)

// LeaderboardFormat tags the leaderboard's JSON.
const LeaderboardFormat = "commcal-leaderboard/1"

// Leaderboard is every model on every dataset, setting by setting: each dataset calibrated on
// its own calibration experiments only and scored on its held-out transfers, beside the noise
// limit of those measurements.
type Leaderboard struct {
	Format  string   `json:"format"`
	HeldOut []string `json:"held_out"`
	// Entries are in dataset order, then the settings' order, then the models'.
	Entries []LeaderboardEntry `json:"entries"`
	// Ranking is every model's transfer-weighted share within ±10% and mean |ε| over every
	// dataset, best share first, and NoiseLimit the noise limit of the same transfers pooled
	// alike: over those with two repetitions or more (validate.NoiseLimit), each dataset's
	// weighted by their number.
	Ranking    []LeaderboardRank   `json:"ranking"`
	NoiseLimit validate.NoiseLimit `json:"noise_limit"`
	// CrossValidation is each dataset's cross-validation over its calibration experiments
	// (CrossValidate); Selected the model with the best transfer-weighted cross-validated
	// share within ±10% over every dataset: the choice made without held-out data.
	CrossValidation []DatasetCV `json:"cross_validation"`
	Selected        string      `json:"selected"`
}

// DatasetCV is one dataset's cross-validation.
type DatasetCV struct {
	Dataset string `json:"dataset"`
	*CrossValidation
}

// LeaderboardEntry is one model on one setting of one dataset.
type LeaderboardEntry struct {
	Dataset    string  `json:"dataset"`
	Cluster    string  `json:"cluster"`
	Setting    string  `json:"setting"`
	Model      string  `json:"model"`
	Transfers  int     `json:"transfers"`
	Within10   float64 `json:"within_10pct"`
	MeanAbsErr float64 `json:"mean_abs_err"`
	Bias       float64 `json:"bias"`
	// NoiseWithin10 and NoiseMeanAbsErr are the setting's noise limit (validate.NoiseLimit).
	NoiseWithin10   float64 `json:"noise_within_10pct"`
	NoiseMeanAbsErr float64 `json:"noise_mean_abs_err"`
	// NoiseTransfers are the setting's transfers with two repetitions or more, which the noise
	// limit is over.
	NoiseTransfers int `json:"noise_transfers"`
	// InSampleWithin10 and InSampleMeanAbsErr are the model's in-sample reach on the setting
	// (with --in-sample only).
	InSampleWithin10   *float64 `json:"in_sample_within_10pct,omitempty"`
	InSampleMeanAbsErr *float64 `json:"in_sample_mean_abs_err,omitempty"`
}

// LeaderboardRank is one model over every dataset.
type LeaderboardRank struct {
	Model      string  `json:"model"`
	Transfers  int     `json:"transfers"`
	Within10   float64 `json:"within_10pct"`
	MeanAbsErr float64 `json:"mean_abs_err"`
	// InSampleWithin10 and InSampleMeanAbsErr are the model's in-sample reach pooled alike
	// (with --in-sample only; InSample: a diagnostic, never an accuracy).
	InSampleWithin10   *float64 `json:"in_sample_within_10pct,omitempty"`
	InSampleMeanAbsErr *float64 `json:"in_sample_mean_abs_err,omitempty"`
}

// BuildLeaderboard calibrates each dataset on its own calibration experiments (starting from
// defaults) and scores every model on its held-out experiments, and with inSample also its
// in-sample reach (InSample); progress, if not nil, is told each time another dataset is done
// (one call at a time).
func BuildLeaderboard(ctx context.Context, dirs []string, open func(string) (*datasets.Dataset, error), defaults contention.Params, heldOut []string,
	inSample bool, progress func(done, total int)) (*Leaderboard, error) {
	lb := &Leaderboard{Format: LeaderboardFormat, HeldOut: heldOut}
	// The datasets are scored in parallel, each into its slot, and pooled in their order: a
	// fit's predictions keep only part of two cores busy (their patterns' costs are uneven,
	// and the search between them is serial), two datasets at once keep both.
	scored := make([]*datasetScore, len(dirs))
	var mu sync.Mutex // progress is called by one worker at a time, done counting up
	done := 0
	err := parallel.For(ctx, len(dirs), 0, func(i int) error {
		var err error
		if scored[i], err = scoreDataset(ctx, dirs[i], open, defaults, heldOut, inSample); err != nil {
			return err
		}
		if progress != nil {
			mu.Lock()
			done++
			progress(done, len(dirs))
			mu.Unlock()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	total, cvTotal, reach := pooled{}, pooled{}, pooled{}
	var noise pooledSums
	for _, d := range scored {
		lb.CrossValidation = append(lb.CrossValidation, DatasetCV{Dataset: d.name, CrossValidation: d.cv})
		for _, s := range d.cv.Scores {
			cvTotal.add(s.Model, s.Transfers, s.Within10, s.MeanAbsErr)
		}
		var ins []validate.SettingAccuracy
		if d.reach != nil {
			ins = validate.WithOverall(d.reach.Settings, d.reach.Overall)
			for _, m := range d.reach.Overall.Models {
				reach.add(m.Model, m.Transfers, m.Within10, m.MeanAbsErr)
			}
		}
		for _, s := range validate.WithOverall(d.acc.Settings, d.acc.Overall) {
			for _, m := range s.Models {
				e := LeaderboardEntry{Dataset: d.name, Cluster: d.cluster,
					Setting: s.Setting, Model: m.Model, Transfers: m.Transfers, Within10: m.Within10, MeanAbsErr: m.MeanAbsErr,
					Bias: m.MeanErr, NoiseWithin10: s.NoiseLimit.Within10, NoiseMeanAbsErr: s.NoiseLimit.MeanAbsErr,
					NoiseTransfers: s.NoiseLimit.Transfers}
				if r, ok := settingModel(ins, s.Setting, m.Model); ok {
					e.InSampleWithin10, e.InSampleMeanAbsErr = &r.Within10, &r.MeanAbsErr
				}
				lb.Entries = append(lb.Entries, e)
			}
		}
		for _, m := range d.acc.Overall.Models {
			total.add(m.Model, m.Transfers, m.Within10, m.MeanAbsErr)
		}
		nl := d.acc.Overall.NoiseLimit
		noise.n += nl.Transfers
		noise.within += nl.Within10 * float64(nl.Transfers)
		noise.abs += nl.MeanAbsErr * float64(nl.Transfers)
	}
	if noise.n > 0 {
		lb.NoiseLimit = validate.NoiseLimit{Transfers: noise.n, Within10: noise.within / float64(noise.n), MeanAbsErr: noise.abs / float64(noise.n)}
	}
	best := -1.0
	for _, m := range contention.Models() { // model order breaks ties
		if r, ok := total.rank(m.Name()); ok {
			lb.Ranking = append(lb.Ranking, r)
		}
		if r, ok := cvTotal.rank(m.Name()); ok && r.Within10 > best {
			best, lb.Selected = r.Within10, m.Name()
		}
	}
	slices.SortStableFunc(lb.Ranking, func(a, b LeaderboardRank) int {
		return validate.BestFirst(a.Within10, a.MeanAbsErr, b.Within10, b.MeanAbsErr)
	})
	for i, r := range lb.Ranking {
		if in, ok := reach.rank(r.Model); ok {
			lb.Ranking[i].InSampleWithin10, lb.Ranking[i].InSampleMeanAbsErr = &in.Within10, &in.MeanAbsErr
		}
	}
	return lb, nil
}

// settingModel is a model's accuracy on a setting of settings, if it is there.
func settingModel(settings []validate.SettingAccuracy, setting, model string) (validate.ModelAccuracy, bool) {
	i := slices.IndexFunc(settings, func(s validate.SettingAccuracy) bool { return s.Setting == setting })
	if i < 0 {
		return validate.ModelAccuracy{}, false
	}
	return settings[i].Model(model)
}

// datasetScore is one dataset's part of the leaderboard.
type datasetScore struct {
	name, cluster string
	cv            *CrossValidation
	acc           *validate.Accuracy
	reach         *validate.InSample // with inSample only
}

// scoreDataset calibrates the dataset in dir on its calibration experiments, cross-validates
// over them and scores every model on its held-out experiments, and with inSample finds every
// model's in-sample reach there.
func scoreDataset(ctx context.Context, dir string, open func(string) (*datasets.Dataset, error), defaults contention.Params, heldOut []string, inSample bool) (*datasetScore, error) {
	ds, err := open(dir)
	if err != nil {
		return nil, err
	}
	in, err := rundir.LoadTables(ctx, ds)
	if err != nil {
		return nil, err
	}
	in.HockneyBreaks = ds.Manifest.HockneyBreaks
	cal, err := estimate.Calibrate(ctx, ds.Cluster, in, defaults, false)
	if err != nil {
		return nil, err
	}
	cv, err := CrossValidate(ctx, ds.Cluster, in, defaults)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	_, acc, err := validate.Validate(ctx, ds.Cluster, in.Transfers, cal.Params, cal.PenaltyTable(), contention.Models(), heldOut)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	d := &datasetScore{name: filepath.Base(filepath.Clean(dir)), cluster: ds.Cluster.Name(), cv: cv, acc: acc}
	if inSample {
		if d.reach, err = InSample(ctx, ds.Cluster, in, defaults, heldOut, nil); err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
	}
	return d, nil
}

// pooled sums models' scores over datasets, each weighted by its transfers.
type pooled map[string]*pooledSums

// pooledSums are one model's transfers and transfer-weighted sums of share and mean |ε|.
type pooledSums struct {
	n           int
	within, abs float64
}

func (p pooled) add(model string, transfers int, within, meanAbs float64) {
	t := p[model]
	if t == nil {
		t = &pooledSums{}
		p[model] = t
	}
	t.n += transfers
	t.within += within * float64(transfers)
	t.abs += meanAbs * float64(transfers)
}

// rank is a model's pooled share within ±10% and mean |ε|; ok is false for a model never added.
func (p pooled) rank(model string) (r LeaderboardRank, ok bool) {
	t := p[model]
	if t == nil {
		return r, false
	}
	r = LeaderboardRank{Model: model, Transfers: t.n}
	if t.n > 0 {
		r.Within10, r.MeanAbsErr = t.within/float64(t.n), t.abs/float64(t.n)
	}
	return r, true
}

// WriteText prints the leaderboard: the ranking, the cross-validation with the selected
// model, then every dataset's settings with each model's distance to the noise limit.
func (lb *Leaderboard) WriteText(w io.Writer) error {
	return lb.write(w, func() table { return textTable{tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)} })
}

// WriteMarkdown prints the same tables as WriteText in Markdown (GitHub's pipe tables), for
// a document.
func (lb *Leaderboard) WriteMarkdown(w io.Writer) error {
	return lb.write(w, func() table { return &markdownTable{w: w} })
}

// table is one of the leaderboard's tables in an output format: a header row, then rows.
type table interface {
	row(cells ...string)
	flush() error
}

// textTable aligns the columns with a tabwriter.
type textTable struct{ tw *tabwriter.Writer }

func (t textTable) row(cells ...string) { fmt.Fprintln(t.tw, strings.Join(cells, "\t")) }
func (t textTable) flush() error        { return t.tw.Flush() }

// markdownTable writes a pipe table, the separator line after the header.
type markdownTable struct {
	w    io.Writer
	rows int
	err  error
}

func (t *markdownTable) row(cells ...string) {
	if t.err != nil {
		return
	}
	esc := make([]string, len(cells))
	for i, c := range cells {
		esc[i] = strings.ReplaceAll(c, "|", `\|`) // "|ε|" is not a cell border
	}
	_, t.err = fmt.Fprintf(t.w, "| %s |\n", strings.Join(esc, " | "))
	if t.rows == 0 && t.err == nil {
		_, t.err = fmt.Fprintf(t.w, "|%s\n", strings.Repeat("---|", len(cells)))
	}
	t.rows++
}

func (t *markdownTable) flush() error { return t.err }

func (lb *Leaderboard) write(w io.Writer, newTable func() table) error {
	pct := func(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) }
	err2 := func(v float64) string { return fmt.Sprintf("%.2f%%", 100*v) }
	in := slices.ContainsFunc(lb.Ranking, func(r LeaderboardRank) bool { return r.InSampleWithin10 != nil })
	// reach is a share and a mean |ε| in sample, or dashes where there is none.
	reach := func(within, abs *float64) []string {
		if within == nil || abs == nil {
			return []string{"—", "—"}
		}
		return []string{pct(*within), err2(*abs)}
	}
	t := newTable()
	head := []string{"rank", "model", "transfers", "|ε| ≤ 10%", "mean |ε|"}
	if in {
		head = append(head, "in sample ≤ 10%", "in sample |ε|")
	}
	t.row(head...)
	for i, r := range lb.Ranking {
		cells := []string{fmt.Sprint(i + 1), r.Model, fmt.Sprint(r.Transfers), pct(r.Within10), err2(r.MeanAbsErr)}
		if in {
			cells = append(cells, reach(r.InSampleWithin10, r.InSampleMeanAbsErr)...)
		}
		t.row(cells...)
	}
	if nl := lb.NoiseLimit; nl.Transfers > 0 {
		cells := []string{"", "(noise limit)", fmt.Sprint(nl.Transfers), pct(nl.Within10), err2(nl.MeanAbsErr)}
		if in {
			cells = append(cells, "", "")
		}
		t.row(cells...)
	}
	if err := t.flush(); err != nil { // its own columns, not the wider table's below
		return err
	}
	fmt.Fprintln(w)
	t = newTable()
	t.row(fmt.Sprintf("cross-validation on calibration experiments (%d folds)", CVFolds), "model", "transfers", "|ε| ≤ 10%", "mean |ε|", "bias")
	for _, d := range lb.CrossValidation {
		name := fmt.Sprintf("%s (%d patterns)", d.Dataset, d.Patterns)
		for _, s := range d.Scores {
			t.row(name, s.Model, fmt.Sprint(s.Transfers), pct(s.Within10), err2(s.MeanAbsErr), fmt.Sprintf("%+.2f%%", 100*s.Bias))
			name = ""
		}
	}
	if err := t.flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nselected by cross-validation: %s\n\n", lb.Selected)
	t = newTable()
	head = []string{"dataset", "setting", "model", "transfers", "|ε| ≤ 10%", "mean |ε|", "bias", "noise limit ≤ 10%", "noise limit |ε|"}
	if in {
		head = append(head, "in sample ≤ 10%", "in sample |ε|")
	}
	t.row(head...)
	var last string
	for _, e := range lb.Entries {
		ds, set := e.Dataset, e.Setting
		if ds+"\x00"+set == last {
			ds, set = "", ""
		}
		last = e.Dataset + "\x00" + e.Setting
		cells := []string{ds, set, e.Model, fmt.Sprint(e.Transfers), pct(e.Within10), err2(e.MeanAbsErr), fmt.Sprintf("%+.2f%%", 100*e.Bias),
			pct(e.NoiseWithin10), err2(e.NoiseMeanAbsErr)}
		if in {
			cells = append(cells, reach(e.InSampleWithin10, e.InSampleMeanAbsErr)...)
		}
		t.row(cells...)
	}
	return t.flush()
}
