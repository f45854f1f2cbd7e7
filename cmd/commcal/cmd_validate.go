package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/commcal/commcal/estimate"
	"github.com/commcal/commcal/pipeline"
	"github.com/commcal/commcal/validate"
)

func validateCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:      "validate",
		Usage:     "score every contention model on held-out transfers",
		ArgsUsage: "DATASET",
		Description: `Predicts every transfer of the held-out experiments (default: the random validation
patterns and Alltoallv) with every model — asymmetric, asymmetric-fitted, fair, maxmin,
penalty, penalty-table, hockney — and writes to --out:

   predictions.parquet  one row per held-out transfer: measured mean over its repetitions,
                        each model's prediction and signed error ε = (pred − meas)/meas
   accuracy.json        per setting (|N|, d) and model: transfers, mean Algorithm-2 steps,
                        mean |ε| and its standard error, bias, share with |ε| ≤ 10%, and
                        mean |ε| on patterns with asymmetric traffic on a link

and prints the accuracy table. Parameters come from --calibration, or else from calibrating
on the dataset's own calibration experiments as "commcal estimate" does (starting from
--params or 94% of the nominal rates); never from the held-out transfers. --efficiency and
--contra-factor override the calibrated values.

--fail-below MODEL:SHARE and --fail-above-error MODEL:ERR (MODEL may be "all") turn a
model's accuracy below or error above the threshold into exit status 3, after writing.

EXAMPLES:
   commcal validate --out val run/dataset
   commcal validate --fail-below asymmetric:90% --out val run/dataset
   commcal validate --calibration calib/calibration.json --out val ds
   commcal validate --contra-factor 0.4 --out val ds`,
		Flags: append(append(append(paramsFlags(), heldOutFlag()), append(outFlags("COMMCAL_VALIDATE_OUT", "", "directory to write"), thresholdFlags()...)...),
			&cli.StringFlag{Name: "calibration", EnvVars: []string{"COMMCAL_CALIBRATION"},
				Usage: "calibration.json from commcal estimate (default: calibrate on the dataset's own calibration experiments)"},
			&cli.BoolFlag{Name: "json", Usage: "print accuracy.json instead of the table"},
		),
		Action: func(c *cli.Context) error {
			held, err := heldOut(c)
			if err != nil {
				return err
			}
			ths, err := thresholds(c)
			if err != nil {
				return err
			}
			job, err := beginDataset(c)
			if err != nil {
				return err
			}
			defer job.done()
			var cal *estimate.Calibration
			if p := c.String("calibration"); p != "" {
				if cal, err = pipeline.ReadCalibration(p); err != nil {
					return err
				}
				if cal.Cluster != job.ds.Cluster.Name() {
					return usagef("validate: calibration of cluster %s, dataset of %s", cal.Cluster, job.ds.Cluster.Name())
				}
			} else {
				cal = pipeline.Estimate(job.ds.Cluster, job.in, job.params, false, job.when)
			}
			params := cal.Params
			override(c)(&params)
			var acc *validate.Accuracy
			err = writeDir(c, func(tmp string) (err error) {
				_, acc, err = pipeline.Validate(job.ds.Cluster, job.in.Transfers, params, cal.PenaltyTable(), held, tmp)
				return err
			})
			if err != nil {
				return err
			}
			if c.Bool("json") {
				err = printJSON(c, acc)
			} else {
				fmt.Fprintf(c.App.Writer, "held-out transfers of %s scored into %s\n\n", job.paths[0], c.String("out"))
				err = acc.WriteText(c.App.Writer)
			}
			if err != nil {
				return err
			}
			return accuracyAlarm(acc, ths)
		},
	})
}
