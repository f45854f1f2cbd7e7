package main

import (
	"context"
	"fmt"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"

	"github.com/commcal/commcal/measure"
	"github.com/commcal/commcal/pipeline"
)

func measureCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:  "measure",
		Usage: "measure real TCP transfers on an emulated cluster (needs root)",
		Description: `Builds the cluster out of Linux network namespaces — one per node, one per rack switch with
a bridge, one for a core router — joined by veth pairs shaped in both directions by token
buckets at --scale times the description's rates (0.1: 1 Gbit/s NICs become 100 Mbit/s, a
10 Gbit/s backbone 1 Gbit/s). Then measures the experiment catalogue over real TCP:
point-to-point sweeps (intra and inter rack), fairness A and B, bidirectional patterns on a
NIC and on the backbone, static-synchronous graphs and random validation patterns. For every
pattern the connections are opened first, all senders start at one instant, each receiver
timestamps its last byte; repetitions go on until every transfer's 95% CI is within 2% of its
mean, or the cap. Writes an ordinary dataset (transfers table and manifest, with every TCP
setting in the manifest's notes). Namespaces are removed on exit, on error and on Ctrl-C;
those of a crashed run are removed by the next, those of a run still going are left alone.

EXAMPLES:
   sudo commcal measure --cluster lab.toml --out measured
   sudo commcal measure --cluster lab.toml --congestion reno --socket-buffer 3000000 --out measured-reno`,
		Flags: append([]cli.Flag{
			clusterFlag(""),
			&cli.Float64Flag{Name: "scale", Value: measure.DefaultShaping.Scale, Usage: "emulated rate as a fraction of the nominal rates"},
			&cli.StringFlag{Name: "congestion", Value: measure.DefaultBench.Congestion, Usage: "TCP congestion control, set per socket"},
			&cli.IntFlag{Name: "socket-buffer", Usage: "SO_SNDBUF and SO_RCVBUF in bytes (0: kernel autotuning)"},
			&cli.IntFlag{Name: "max-reps", Value: measure.DefaultBench.Rule.Cap, Usage: "repetition cap per pattern"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the random and static-synchronous patterns"},
			&cli.BoolFlag{Name: "quick", Usage: "measure a few patterns of every kind only (seconds: for smoke tests)"},
		}, outFlags("COMMCAL_MEASURE_OUT", "", "dataset directory to write")...),
		Action: func(c *cli.Context) error {
			if _, err := positional(c, 0, 0, "nothing"); err != nil {
				return err
			}
			if s := c.Float64("scale"); !(s > 0 && s <= 1) {
				return usagef("measure: --scale must be in (0, 1]")
			}
			e, err := envFrom(c)
			if err != nil {
				return err
			}
			bench := measure.DefaultBench
			bench.Congestion, bench.SocketBuffer, bench.Rule.Cap = c.String("congestion"), c.Int("socket-buffer"), c.Int("max-reps")
			return runMeasure(c.Context, e, measureOptions{Cluster: c.String("cluster"), Output: outputFrom(c), Scale: c.Float64("scale"),
				Bench: bench, Quick: c.Bool("quick"), Seed: c.Uint64("seed")})
		},
	})
}

// measureOptions are measure's flags.
type measureOptions struct {
	Cluster string
	Output  outputOptions
	Scale   float64 // emulated rate as a fraction of the nominal rates
	Bench   measure.BenchOptions
	Quick   bool // the quick catalogue
	Seed    uint64
}

// runMeasure builds the emulated cluster, measures the catalogue on it and writes the dataset.
func runMeasure(ctx context.Context, e env, o measureOptions) error {
	cl, err := loadCluster(o.Cluster)
	if err != nil {
		return err
	}
	if err := measure.Available(); err != nil {
		return err
	}
	out, err := o.Output.claim(ctx, keepOutput, o.Cluster)
	if err != nil {
		return err
	}
	defer out.Release()
	cat := measure.DefaultCatalogue
	if o.Quick {
		cat = measure.QuickCatalogue
	}
	cat.Seed = o.Seed
	sh := measure.DefaultShaping
	sh.Scale = o.Scale
	var bar *progressbar.ProgressBar
	prog := func(done, total int, left time.Duration) {
		e.log.Info("progress", "patterns", done, "of", total, "left", left.Round(time.Second).String())
	}
	if e.terminal {
		prog = func(done, total int, left time.Duration) {
			if bar == nil {
				bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(e.stderr),
					progressbar.OptionSetDescription("patterns"), progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(true))
			}
			bar.Set(done)
		}
	}
	m, err := measure.Measure(ctx, measure.Options{Cluster: cl, Shaping: sh, Bench: o.Bench, Catalogue: cat,
		Out: o.Output.Out, Force: true, Version: pipeline.Version, Created: e.when, Logger: e.log, Progress: prog})
	if bar != nil {
		bar.Clear()
	}
	if err != nil {
		return err
	}
	if err := printManifest(e.stdout, o.Output.Out, m); err != nil {
		return err
	}
	for _, n := range m.Notes {
		fmt.Fprintf(e.stdout, "  %s\n", n)
	}
	return nil
}
