package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/commcal/commcal/internal/badinput"
	"github.com/commcal/commcal/internal/provenance"
	"github.com/commcal/commcal/simulate"
)

func simulateCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:  "simulate",
		Usage: "write a synthetic dataset with known ground truth",
		Description: `Draws measurements from true model parameters with seeded multiplicative noise and writes
them as a dataset directory, with the parameters in truth.json beside the tables, so that
estimators can be checked for recovery:

   transfers       p2p_sweep: Hockney T = α + β·m per path class, 1 KiB to 8 MiB
   roundtrips      LMO: empty round trips for every pair, and round trips of a message
   one_to_two      LMO: one-to-two experiments for every triplet and root
   collectives     scatter (break S) and gather (breaks M1, M2) sweeps, LMO-based
   pingpong_pairs  L(m, P) = a + b·m + c·P + d·m·P with its overheads

Without --truth, parameters are derived from the cluster (commcal simulate --help-truth
prints them as JSON to edit). The same seed gives the same bytes.

EXAMPLES:
   commcal simulate --cluster ccpe-testbed --seed 7 --out sim
   commcal simulate --cluster graphene --truth truth.json --noise 0.05 --out sim`,
		Flags: append([]cli.Flag{
			clusterFlag(""),
			&cli.Uint64Flag{Name: "seed", Value: 1, EnvVars: []string{"COMMCAL_SEED"}, Usage: "random seed (written into truth.json)"},
			&cli.Float64Flag{Name: "noise", Value: -1, Usage: "relative noise (default: the truth's, 0.02 without --truth)"},
			&cli.IntFlag{Name: "reps", Value: 0, Usage: "repetitions per measurement (default: the truth's, 10 without --truth)"},
			&cli.StringFlag{Name: "truth", Usage: "true parameters as JSON (the layout of truth.json)"},
			&cli.BoolFlag{Name: "help-truth", Usage: "print the default truth for --cluster and --seed as JSON, and exit"},
		}, outFlags("COMMCAL_SIMULATE_OUT", "", "dataset directory to write")...),
		Action: act(0, 0, "nothing", func(c *cli.Context, e env, _ []string) error {
			o := simulateOptions{Cluster: c.String("cluster"), Truth: c.String("truth"), Output: outputFrom(c), HelpTruth: c.Bool("help-truth"),
				Noise: ifSet(c, "noise", c.Float64), Reps: ifSet(c, "reps", c.Int)}
			if c.IsSet("seed") || o.Truth == "" {
				v := c.Uint64("seed")
				o.Seed = &v
			}
			return runSimulate(c.Context, e, o)
		}),
	})
}

// simulateOptions are simulate's flags; nil values keep the truth's.
type simulateOptions struct {
	Cluster   string
	Truth     string // true parameters as JSON ("": derived from the cluster)
	Seed      *uint64
	Noise     *float64
	Reps      *int
	Output    outputOptions
	HelpTruth bool // print the truth and stop
}

// runSimulate writes a synthetic dataset with its ground truth.
func runSimulate(ctx context.Context, e env, o simulateOptions) error {
	cl, err := loadCluster(o.Cluster)
	if err != nil {
		return err
	}
	var tr *simulate.Truth
	if o.Truth != "" {
		if tr, err = simulate.ReadTruth(o.Truth); err != nil {
			return badinput.Wrap(o.Truth, err)
		}
		if o.Seed != nil {
			tr.Seed = *o.Seed
		}
	} else {
		tr = simulate.DefaultTruth(cl, *o.Seed)
	}
	if o.Noise != nil {
		tr.Noise = *o.Noise
	}
	if o.Reps != nil {
		tr.Reps = *o.Reps
	}
	if tr.Cluster != cl.Name() {
		return badinput.Errorf(o.Truth, "the truth is for cluster %q, --cluster is %q", tr.Cluster, cl.Name())
	}
	if o.HelpTruth {
		return e.printJSON(tr)
	}
	out, err := o.Output.claim(ctx, keepOutput, o.Cluster, o.Truth)
	if err != nil {
		return err
	}
	defer out.Release()
	m, _, err := simulate.Run(ctx, simulate.Options{Cluster: cl, Truth: tr, Out: o.Output.Out,
		Force: true, Version: provenance.Version, Created: e.when})
	if err != nil {
		return err
	}
	if err := printManifest(e.stdout, o.Output.Out, m); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "\nground truth: %s (seed %d, noise %g, %d repetitions)\n",
		filepath.Join(o.Output.Out, simulate.TruthFile), tr.Seed, tr.Noise, tr.Reps)
	return nil
}
