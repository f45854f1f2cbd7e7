package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"text/tabwriter"

	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/estimate"
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
	// dataset, best share first.
	Ranking []LeaderboardRank `json:"ranking"`
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
}

// LeaderboardRank is one model over every dataset.
type LeaderboardRank struct {
	Model      string  `json:"model"`
	Transfers  int     `json:"transfers"`
	Within10   float64 `json:"within_10pct"`
	MeanAbsErr float64 `json:"mean_abs_err"`
}

// BuildLeaderboard calibrates each dataset on its own calibration experiments (starting from
// defaults) and scores every model on its held-out experiments.
func BuildLeaderboard(ctx context.Context, dirs []string, open func(string) (*datasets.Dataset, error), defaults contention.Params, heldOut []string) (*Leaderboard, error) {
	lb := &Leaderboard{Format: LeaderboardFormat, HeldOut: heldOut}
	type sum struct {
		n           int
		within, abs float64
	}
	total := map[string]*sum{}
	var order []string
	for _, dir := range dirs {
		ds, err := open(dir)
		if err != nil {
			return nil, err
		}
		in, err := LoadTables(ctx, ds)
		if err != nil {
			return nil, err
		}
		in.HockneyBreaks = ds.Manifest.HockneyBreaks
		cal := estimate.Calibrate(ds.Cluster, in, defaults, false)
		cv, err := CrossValidate(ds.Cluster, in, defaults)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		lb.CrossValidation = append(lb.CrossValidation, DatasetCV{Dataset: filepath.Base(filepath.Clean(dir)), CrossValidation: cv})
		_, acc, err := validate.Validate(ds.Cluster, in.Transfers, cal.Params, cal.PenaltyTable(), contention.Models(), heldOut)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		for _, s := range append(slices.Clone(acc.Settings), acc.Overall) {
			for _, m := range s.Models {
				lb.Entries = append(lb.Entries, LeaderboardEntry{Dataset: filepath.Base(filepath.Clean(dir)), Cluster: ds.Cluster.Name(),
					Setting: s.Setting, Model: m.Model, Transfers: m.Transfers, Within10: m.Within10, MeanAbsErr: m.MeanAbsErr,
					Bias: m.MeanErr, NoiseWithin10: s.NoiseLimit.Within10, NoiseMeanAbsErr: s.NoiseLimit.MeanAbsErr})
			}
		}
		for _, m := range acc.Overall.Models {
			t := total[m.Model]
			if t == nil {
				t = &sum{}
				total[m.Model] = t
				order = append(order, m.Model)
			}
			t.n += m.Transfers
			t.within += m.Within10 * float64(m.Transfers)
			t.abs += m.MeanAbsErr * float64(m.Transfers)
		}
	}
	for _, m := range order {
		t := total[m]
		r := LeaderboardRank{Model: m, Transfers: t.n}
		if t.n > 0 {
			r.Within10, r.MeanAbsErr = t.within/float64(t.n), t.abs/float64(t.n)
		}
		lb.Ranking = append(lb.Ranking, r)
	}
	slices.SortStableFunc(lb.Ranking, func(a, b LeaderboardRank) int {
		return cmp.Or(cmp.Compare(b.Within10, a.Within10), cmp.Compare(a.MeanAbsErr, b.MeanAbsErr))
	})
	cvTotal := map[string]*sum{}
	for _, d := range lb.CrossValidation {
		for _, s := range d.Scores {
			t := cvTotal[s.Model]
			if t == nil {
				t = &sum{}
				cvTotal[s.Model] = t
			}
			t.n += s.Transfers
			t.within += s.Within10 * float64(s.Transfers)
			t.abs += s.MeanAbsErr * float64(s.Transfers)
		}
	}
	best := -1.0
	for _, m := range order { // model order breaks ties
		if t := cvTotal[m]; t != nil && t.n > 0 {
			if w := t.within / float64(t.n); w > best {
				best, lb.Selected = w, m
			}
		}
	}
	return lb, nil
}

// WriteText prints the leaderboard: the ranking, then every dataset's settings with each
// model's distance to the noise limit.
func (lb *Leaderboard) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "rank\tmodel\ttransfers\t|ε| ≤ 10%\tmean |ε|")
	for i, r := range lb.Ranking {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%.1f%%\t%.2f%%\n", i+1, r.Model, r.Transfers, 100*r.Within10, 100*r.MeanAbsErr)
	}
	if err := tw.Flush(); err != nil { // its own columns, not the wider table's below
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "cross-validation on calibration experiments (%d folds)\tmodel\ttransfers\t|ε| ≤ 10%%\tmean |ε|\tbias\n", CVFolds)
	for _, d := range lb.CrossValidation {
		name := fmt.Sprintf("%s (%d patterns)", d.Dataset, d.Patterns)
		for _, s := range d.Scores {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f%%\t%.2f%%\t%+.2f%%\n", name, s.Model, s.Transfers, 100*s.Within10, 100*s.MeanAbsErr, 100*s.Bias)
			name = ""
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "selected by cross-validation: %s\n\n", lb.Selected)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "dataset\tsetting\tmodel\ttransfers\t|ε| ≤ 10%\tmean |ε|\tbias\tnoise limit ≤ 10%\tnoise limit |ε|")
	var last string
	for _, e := range lb.Entries {
		ds, set := e.Dataset, e.Setting
		if ds+"\x00"+set == last {
			ds, set = "", ""
		}
		last = e.Dataset + "\x00" + e.Setting
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.1f%%\t%.2f%%\t%+.2f%%\t%.1f%%\t%.2f%%\n", ds, set, e.Model, e.Transfers,
			100*e.Within10, 100*e.MeanAbsErr, 100*e.Bias, 100*e.NoiseWithin10, 100*e.NoiseMeanAbsErr)
	}
	return tw.Flush()
}
