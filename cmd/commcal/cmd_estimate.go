package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/commcal/commcal/pipeline"
	"github.com/commcal/commcal/report"
	"github.com/commcal/commcal/rundir"
)

func estimateCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:      "estimate",
		Usage:     "fit every model parameter with its confidence interval",
		ArgsUsage: "DATASET",
		Description: `Runs every estimator whose calibration experiments the dataset holds and writes to --out:

   calibration.json   every parameter with its 95% CI and observation count (schema
                      "commcal-calibration/2", docs/formats.md), the contention parameters derived
                      from them, the estimators skipped with the reason, and the parameters not
                      identified (a rate above its line rate, an interval reaching zero or
                      infinity, too few points) with why and what the models use instead
   lmo_nodes.parquet  per node: C and t of the LMO model with CIs
   lmo_links.parquet  per pair: the LMO 1/β, and the transmission rate with its CI where
                      identified (else why not)

Estimators: Hockney α, β per path class (p2p_sweep); fairness ceiling, NIC and backbone
capacities and saturation point (fair_intra, fair_inter); φ of asymmetric-fitted (bidir_*);
LMO C_i, t_i, β_ij (roundtrips, one_to_two); scatter/gather thresholds S, M1, M2 and κ1, κ2
(collectives); L(m, P) (pingpong_pairs); penalty tables (static_sync); and each learned model
(stochastic, surface, duplex, ackpath, ackpath-alpha) calibrated through the model: ceiling
(p2p_sweep from 1 MiB, fairness patterns whose transfers share no resource), NIC and backbone
capacities and the share spread σ (fair_intra, fair_inter), duplex coupling κ and the
bidirectional surface (bidir_*, exchange_calibration, cycle_calibration), ackpath's slowdowns
a, b, c and c₁, ramp-up cost τ and ceiling relief ρ, and ackpath-alpha's α and κ (those with
static_sync, random_calibration, incast and outcast; κ, as duplex's, kept only where it lowers
the error beyond chance: hosts whose sending and receiving slow each other); each parameter
only where some pattern identifies it, the others listed as not identified with what stands
in; and the transfer spread, each contention calibration transfer's repetitions over its mean
(transfer_spread: when a collective's round is expected to end). Held-out experiments (random,
alltoallv, exchange, cycle) and the schedules table are never read.

EXAMPLES:
   commcal estimate --out calib run/dataset
   commcal estimate --weighted --json --out calib ds | jq .params`,
		Flags: append(append(paramsFlags(), outFlags("COMMCAL_ESTIMATE_OUT", "", "directory to write")...),
			&cli.BoolFlag{Name: "weighted", Usage: "fit Hockney by weighted least squares (weights 1/T̂²)"},
			&cli.BoolFlag{Name: "json", Usage: "print calibration.json instead of the table"},
			noVerifyFlag(),
			hockneyBreaksFlag(),
		),
		Action: act(1, 1, "DATASET", func(c *cli.Context, e env, args []string) error {
			breaks, err := hockneyBreaks(c.String("hockney-breaks"))
			if err != nil {
				return err
			}
			return runEstimate(c.Context, e, estimateOptions{HockneyBreaks: breaks, Dataset: args[0], Output: outputFrom(c), Params: paramsFrom(c),
				Weighted: c.Bool("weighted"), JSON: c.Bool("json"), NoVerify: c.Bool("no-verify")})
		}),
	})
}

// estimateOptions are estimate's argument and flags.
type estimateOptions struct {
	Dataset  string
	Output   outputOptions
	Params   paramsOptions
	NoVerify bool // skip the dataset's checksums
	Weighted bool // weighted Hockney fits
	// HockneyBreaks are the sizes at which Hockney's segments start (nil: found).
	HockneyBreaks []float64
	JSON          bool // print calibration.json instead of the table
}

// runEstimate fits every parameter of a dataset and writes the calibration directory.
func runEstimate(ctx context.Context, e env, o estimateOptions) error {
	job, err := startDatasetJob(ctx, o.Dataset, o.NoVerify, o.HockneyBreaks, o.Params, o.Output)
	if err != nil {
		return err
	}
	defer job.out.Release()
	cal, err := pipeline.Estimate(ctx, job.ds.Cluster, job.in, job.params, o.Weighted, e.when)
	if err != nil {
		return err
	}
	if err := o.Output.build(func(tmp string) error { return rundir.WriteCalibration(tmp, cal) }); err != nil {
		return err
	}
	if o.JSON {
		return e.printJSON(cal)
	}
	fmt.Fprintf(e.stdout, "calibration of %s written to %s\n\n", o.Dataset, o.Output.Out)
	return report.WriteCalibrationText(e.stdout, cal)
}
