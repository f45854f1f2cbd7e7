package main

import (
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/commcal/commcal/internal/badinput"
	"github.com/commcal/commcal/pipeline"
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
		Action: func(c *cli.Context) error {
			if _, err := positional(c, 0, 0, "nothing"); err != nil {
				return err
			}
			cl, err := loadCluster(c)
			if err != nil {
				return err
			}
			tr := simulate.DefaultTruth(cl, c.Uint64("seed"))
			if p := c.String("truth"); p != "" {
				if tr, err = simulate.ReadTruth(p); err != nil {
					return badinput.Wrap(p, err)
				}
				if c.IsSet("seed") {
					tr.Seed = c.Uint64("seed")
				}
			}
			if c.IsSet("noise") {
				tr.Noise = c.Float64("noise")
			}
			if c.IsSet("reps") {
				tr.Reps = c.Int("reps")
			}
			if tr.Cluster != cl.Name() {
				return usagef("simulate: the truth is for cluster %q, --cluster is %q", tr.Cluster, cl.Name())
			}
			if c.Bool("help-truth") {
				return printJSON(c, tr)
			}
			inv, err := begin(c, 0, 0, "nothing", keepOutput)
			if err != nil {
				return err
			}
			defer inv.done()
			m, _, err := simulate.Run(c.Context, simulate.Options{Cluster: cl, Truth: tr, Out: c.String("out"),
				Force: c.Bool("force"), Version: pipeline.Version, Created: inv.when})
			if err != nil {
				return err
			}
			if err := printManifest(c, c.String("out"), m); err != nil {
				return err
			}
			fmt.Fprintf(c.App.Writer, "\nground truth: %s (seed %d, noise %g, %d repetitions)\n",
				filepath.Join(c.String("out"), simulate.TruthFile), tr.Seed, tr.Noise, tr.Reps)
			return nil
		},
	})
}
