package main

import (
	"context"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/datasets/campaigns"
	"github.com/commcal/commcal/selection"
)

func leaderboardCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:      "leaderboard",
		Usage:     "every model on every dataset, beside each setting's noise limit",
		ArgsUsage: "[DATASET...]",
		Description: `Calibrates each dataset on its own calibration experiments (as "commcal estimate" does) and
scores every model on its held-out transfers (as "commcal validate" does), then prints the
models ranked by their share of transfers within ±10% over all the datasets (under them the
noise limit of the same transfers, those with two repetitions or more), and for every dataset
and setting each model's share, mean |ε| and bias beside the noise limit: what a perfect
predictor of each transfer's expected time would score given the repetitions' spread.

Before that, the cross-validation that selects a model without looking at held-out data: each
dataset's contention calibration patterns (fair_*, bidir_*, static_sync and random_calibration
with two transfers or more) in 5 folds; each fold is predicted by every model calibrated on the
rest of the dataset. The model with the best cross-validated share within ±10% over all
datasets is "selected". Nothing is written; --json prints the leaderboard as JSON, --markdown
its tables in Markdown.

--index FILE scores every dataset of a campaign index (data/tcp/campaigns.toml: README.md
beside it says what it holds), in its order, before the DATASET arguments; without it at least
one DATASET is needed.

--in-sample adds each model's in-sample reach (as "commcal validate --in-sample": calibrated
once more on the held-out transfers too, then scored on them) to the ranking and to every
setting: held out to in sample is what the calibration experiments cost, in sample to the
noise limit is the model's form. A diagnostic, never an accuracy; it takes a second
calibration of each dataset, on its calibration patterns and its held-out ones together.

EXAMPLES:
   commcal leaderboard data/tcp/campaigns/two-rack-1g/two-rack-1g data/tcp/campaigns/two-rack-100m/two-rack-100m
   commcal leaderboard --json runs/*/dataset > leaderboard.json
   commcal leaderboard --markdown --index data/tcp/campaigns.toml    # the tables of data/tcp/LEADERBOARD.md
   commcal leaderboard --in-sample data/tcp/campaigns/*/*-heldout24`,
		Flags: append(paramsFlags(), heldOutFlag(), noVerifyFlag(), &cli.BoolFlag{Name: "json", Usage: "print the leaderboard as JSON"},
			&cli.BoolFlag{Name: "markdown", Usage: "print the leaderboard's tables in Markdown"},
			&cli.StringFlag{Name: "index", EnvVars: []string{"COMMCAL_INDEX"}, Usage: "score every dataset of this campaign index `FILE`, in its order, before the DATASET arguments"},
			&cli.BoolFlag{Name: "in-sample", EnvVars: []string{"COMMCAL_IN_SAMPLE"}, Usage: "add every model's in-sample reach beside its accuracy (as validate --in-sample; a diagnostic)"}),
		Action: func(c *cli.Context) error {
			need := 1 // DATASET arguments, none with --index
			if c.String("index") != "" {
				need = 0
			}
			args, err := positional(c, need, -1, "DATASET...")
			if err != nil {
				return err
			}
			if c.Bool("json") && c.Bool("markdown") {
				return usagef("--json and --markdown: choose one")
			}
			held, err := heldOut(c)
			if err != nil {
				return err
			}
			e, err := envFrom(c)
			if err != nil {
				return err
			}
			return runLeaderboard(c.Context, e, leaderboardOptions{Index: c.String("index"), Datasets: args, Params: paramsFrom(c), HeldOut: held,
				NoVerify: c.Bool("no-verify"), JSON: c.Bool("json"), Markdown: c.Bool("markdown"),
				InSample: c.Bool("in-sample")})
		},
	})
}

// leaderboardOptions are leaderboard's flags and arguments.
type leaderboardOptions struct {
	// Index is a campaign index whose datasets come before Datasets ("" for none).
	Index    string
	Datasets []string
	Params   paramsOptions
	HeldOut  []string
	NoVerify bool
	JSON     bool
	Markdown bool
	// InSample adds every model's in-sample reach (selection.InSample).
	InSample bool
}

func runLeaderboard(ctx context.Context, e env, o leaderboardOptions) error {
	params, err := o.Params.load()
	if err != nil {
		return err
	}
	dirs, err := leaderboardDatasets(o.Index, o.Datasets)
	if err != nil {
		return err
	}
	progress, clear := e.datasetProgress()
	lb, err := selection.BuildLeaderboard(ctx, dirs, func(dir string) (*datasets.Dataset, error) { return openDataset(dir, o.NoVerify) }, params, o.HeldOut, o.InSample, progress)
	clear()
	if err != nil {
		return err
	}
	switch {
	case o.JSON:
		return e.printJSON(lb)
	case o.Markdown:
		return lb.WriteMarkdown(e.stdout)
	}
	return lb.WriteText(e.stdout)
}

// leaderboardDatasets are the datasets of the campaign index file, in its order, then args;
// args alone without a file. A dataset given twice — the same directory, by whatever path,
// link or the index — is a usage error naming both: it would count twice.
func leaderboardDatasets(file string, args []string) ([]string, error) {
	dirs := args
	if file != "" {
		ix, err := campaigns.Load(file)
		if err != nil {
			return nil, err
		}
		dirs = append(ix.Paths(), args...)
	}
	return dirs, distinctDatasets(dirs)
}

// distinctDatasets refuses a directory listed twice. One that cannot be read is left to the
// dataset reader to report; those it names were found, so their paths are at most PATH_MAX
// bytes and are quoted whole.
func distinctDatasets(dirs []string) error {
	seen := make([]os.FileInfo, len(dirs))
	for i, d := range dirs {
		fi, err := os.Stat(d)
		if err != nil {
			continue
		}
		for j, prev := range seen[:i] {
			if prev != nil && os.SameFile(prev, fi) {
				return usagef("leaderboard: dataset %d, %q, is dataset %d, %q, again: each dataset counts once", i+1, d, j+1, dirs[j])
			}
		}
		seen[i] = fi
	}
	return nil
}

// datasetProgress is the leaderboard's progress, a dataset at a time (each takes seconds to
// tens of seconds): a bar on a terminal, a log record per dataset elsewhere; clear removes the
// bar.
func (e env) datasetProgress() (progress func(done, total int), clear func()) {
	if !e.terminal {
		return func(done, total int) { e.log.Info("progress", "datasets", done, "of", total) }, func() {}
	}
	return e.countBar("datasets")
}
