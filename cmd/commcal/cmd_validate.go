package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/estimate"
	"github.com/commcal/commcal/internal/badinput"
	"github.com/commcal/commcal/pipeline"
	"github.com/commcal/commcal/rundir"
	"github.com/commcal/commcal/selection"
	"github.com/commcal/commcal/validate"
)

func validateCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:      "validate",
		Usage:     "score every contention model on held-out transfers",
		ArgsUsage: "DATASET",
		Description: `Predicts every transfer of the held-out experiments (default: the random validation
patterns, Alltoallv, the held-out exchanges and cycles) with every model:

` + wrapWords("   ", strings.Join(contention.Names(), ", "), 92) + `

and writes to --out:

   predictions.parquet  one row per held-out transfer and model: the transfer, its measured
                        mean over its repetitions, the model (column model), its prediction
                        (predicted_s) and signed error ε = (pred − meas)/meas (err)
   accuracy.json        per setting (|N|, d) and model: transfers, mean Algorithm-2 steps,
                        mean |ε| and its standard error, bias, share with |ε| ≤ 10%, and
                        mean |ε| on patterns with asymmetric traffic on a link; per
                        situation (the parts of a transfer's path it shares — sender, core,
                        receiver — or alone; its acknowledgements' path quiet or busy) and
                        per size class ([1 MiB, 2 MiB), ...): every model's share within
                        ±10%, mean |ε|, bias and median |predicted − measured| in seconds,
                        and the noise limit; and, when the dataset measured all-to-alls,
                        all-gathers or broadcasts (collectives table, or schedules table:
                        collectives run as the rounds of the algorithm it names), each
                        one's mean time, the algorithm its rounds follow
                        (for the collectives table: --collective-algorithms, else the
                        default rules of the MPI library the dataset names, ingest
                        --mpi-library, else Open MPI's, with a warning), and every
                        model's prediction (a round ending with its expected slowest
                        transfer under the calibration's transfer spread) and signed error
   predictions_in_sample.parquet
                        with --in-sample only: predictions.parquet's columns, with the
                        in-sample parameters

and prints the accuracy table, the default model (selected by cross-validation on real TCP
calibration experiments) marked with *, and each setting's noise limit under its models; then
the accuracy per situation and per size class: its noise limit, the default model's
(with its median error in time) and the best model's.
Parameters come from --calibration, or else from calibrating on the dataset's own calibration
experiments as "commcal estimate" does (starting from --params or 94% of the nominal rates);
never from the held-out transfers. --efficiency and --contra-factor override the calibrated
values.

--in-sample adds a diagnostic, the in-sample reach: every model calibrated once more on the
dataset's calibration experiments and the held-out transfers together (starting from --params;
with --calibration too: the reach is then measured from that file's accuracy), --efficiency
and --contra-factor applied as to the held-out parameters, then scored on those transfers
again (accuracy.json's "in_sample", predictions_in_sample.parquet
with the columns of predictions.parquet, and a table per setting: noise limit, the default
model held out and in sample, the best model in sample). Held out to in
sample is what fitting on the calibration experiments costs, in sample to the noise limit is
the model's form. It is never an accuracy, and thresholds do not read it.

--fail-below MODEL:SHARE and --fail-above-error MODEL:ERR (MODEL may be "all") turn a
model's accuracy below or error above the threshold into exit status 3, after writing.

EXAMPLES:
   commcal validate --out val run/dataset
   commcal validate --fail-below asymmetric:90% --out val run/dataset
   commcal validate --calibration calib/calibration.json --out val ds
   commcal validate --contra-factor 0.4 --out val ds
   commcal validate --in-sample --out val ds
   commcal validate --collective-algorithms auto:mpich --out val ds`,
		Flags: append(append(append(paramsFlags(), heldOutFlag(), collectivesFlag()), append(outFlags("COMMCAL_VALIDATE_OUT", "", "directory to write"), thresholdFlags()...)...),
			&cli.StringFlag{Name: "calibration", EnvVars: []string{"COMMCAL_CALIBRATION"},
				Usage: "calibration.json from commcal estimate (default: calibrate on the dataset's own calibration experiments)"},
			&cli.BoolFlag{Name: "json", Usage: "print accuracy.json instead of the table"},
			&cli.BoolFlag{Name: "in-sample", EnvVars: []string{"COMMCAL_IN_SAMPLE"},
				Usage: "also calibrate every model on the held-out transfers themselves and report how far each reaches on them (a diagnostic, not an accuracy)"},
			noVerifyFlag(),
			hockneyBreaksFlag(),
		),
		Action: act(1, 1, "DATASET", func(c *cli.Context, e env, args []string) error {
			held, err := heldOut(c)
			if err != nil {
				return err
			}
			ths, err := thresholds(c)
			if err != nil {
				return err
			}
			if c.String("calibration") != "" && c.String("params") != "" {
				return usagef("validate: --calibration and --params both give the parameters; choose one")
			}
			breaks, err := hockneyBreaks(c.String("hockney-breaks"))
			if err != nil {
				return err
			}
			algs, err := collectiveAlgorithms(c)
			if err != nil {
				return err
			}
			return runValidate(c.Context, e, validateOptions{HockneyBreaks: breaks, CollectiveAlgorithms: algs, Dataset: args[0], Output: outputFrom(c), Params: paramsFrom(c),
				Calibration: c.String("calibration"), HeldOut: held, Thresholds: ths, JSON: c.Bool("json"), NoVerify: c.Bool("no-verify"),
				InSample: c.Bool("in-sample")})
		}),
	})
}

// validateOptions are validate's argument and flags.
type validateOptions struct {
	Dataset     string
	Output      outputOptions
	Params      paramsOptions
	Calibration string // calibration.json; "" calibrates on the dataset
	HeldOut     []string
	// CollectiveAlgorithms chooses the algorithms of measured collectives.
	CollectiveAlgorithms string
	Thresholds           []validate.Threshold
	NoVerify             bool // skip the dataset's checksums
	// HockneyBreaks are the sizes at which Hockney's segments start when calibrating.
	HockneyBreaks []float64
	JSON          bool
	// InSample adds the in-sample reach (selection.InSample) to the accuracy.
	InSample bool
}

// runValidate scores every model on a dataset's held-out transfers, writes the validation
// directory, and raises the accuracy alarm when a threshold is crossed.
func runValidate(ctx context.Context, e env, o validateOptions) error {
	var cal *estimate.Calibration
	if o.Calibration != "" {
		var err error
		if cal, err = rundir.ReadCalibration(o.Calibration); err != nil {
			return err
		}
	}
	job, err := startDatasetJob(ctx, o.Dataset, o.NoVerify, o.HockneyBreaks, o.Params, o.Output, o.Calibration)
	if err != nil {
		return err
	}
	defer job.out.Release()
	ds, in := job.ds, job.in
	if cal == nil {
		if cal, err = pipeline.Estimate(ctx, ds.Cluster, in, job.params, false, e.when); err != nil {
			return err
		}
	} else if cal.Cluster != ds.Cluster.Name() {
		return badinput.Errorf(o.Calibration, "a calibration of cluster %s, the dataset is of %s", cal.Cluster, ds.Cluster.Name())
	}
	calibrated := cal.Params
	o.Params.override(&calibrated)
	var reach *validate.InSample
	if o.InSample {
		if reach, err = selection.InSample(ctx, ds.Cluster, in, job.params, o.HeldOut, o.Params.override); err != nil {
			return err
		}
	}
	var acc *validate.Accuracy
	err = o.Output.build(func(tmp string) (err error) {
		_, acc, err = pipeline.Validate(ctx, ds.Cluster, pipeline.Held{Transfers: in.Transfers, Experiments: o.HeldOut,
			Collectives: in.Collectives, Schedules: in.Schedules, Algorithms: o.CollectiveAlgorithms, Library: ds.Manifest.MPILibrary, Spread: cal.Spread}, calibrated, cal.PenaltyTable(), reach, tmp)
		return err
	})
	if err != nil {
		return err
	}
	if o.JSON {
		err = e.printJSON(acc)
	} else {
		fmt.Fprintf(e.stdout, "held-out transfers of %s scored into %s\n\n", o.Dataset, o.Output.Out)
		err = acc.WriteText(e.stdout)
	}
	if err != nil {
		return err
	}
	return accuracyAlarm(acc, o.Thresholds)
}
