package main

import (
	"slices"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/internal/badinput"
	"github.com/commcal/commcal/pipeline"
)

// clusterFlag is --cluster, with a note on when it may be left out ("" when it may not).
func clusterFlag(note string) cli.Flag {
	usage := "cluster description (.toml or .json) or a built-in cluster (" + strings.Join(cluster.Examples(), ", ") + ")"
	if note != "" {
		usage += "; " + note
	}
	return &cli.StringFlag{Name: "cluster", Aliases: []string{"c"}, EnvVars: []string{"COMMCAL_CLUSTER"}, Usage: usage}
}

// loadCluster loads --cluster; a command that cannot do without it says so.
func loadCluster(c *cli.Context) (*cluster.Cluster, error) {
	ref := c.String("cluster")
	if ref == "" {
		return nil, usagef("%s: --cluster is required", c.Command.Name)
	}
	cl, err := cluster.LoadNamed(ref)
	if err != nil {
		return nil, badinput.Wrap(ref, err)
	}
	return cl, nil
}

// sourceFlags are the flags of the commands that read measurement logs (ingest, run).
func sourceFlags() []cli.Flag {
	return []cli.Flag{
		clusterFlag("may be left out when every input is a commcal dataset directory"),
		&cli.StringFlag{Name: "format", Value: datasets.FormatAuto, EnvVars: []string{"COMMCAL_FORMAT"},
			Usage: "input format: " + strings.Join(datasets.Formats, ", ")},
		&cli.StringFlag{Name: "table", Usage: "table of CSV/Parquet inputs (default: inferred from the columns): " +
			strings.Join(datasets.TableNames(), ", ")},
		&cli.StringFlag{Name: "src", Usage: "sending node of SimGrid ping-pong and iperf3 inputs (iperf3 default: by address)"},
		&cli.StringFlag{Name: "dst", Usage: "receiving node of SimGrid ping-pong and iperf3 inputs"},
		&cli.StringFlag{Name: "experiment", Usage: "experiment of iperf3 transfers (default p2p_sweep)"},
		&cli.StringFlag{Name: "pattern", Usage: `pattern_id of iperf3 transfers (default "src>dst:bytes")`},
	}
}

// sourcesFromFlags expands the input paths and settles the cluster: --cluster, or the one
// cluster of the dataset directories given.
func sourcesFromFlags(c *cli.Context, paths []string) (*cluster.Cluster, []datasets.Source, error) {
	format := c.String("format")
	if !slices.Contains(datasets.Formats, format) {
		return nil, nil, usagef("--format %q: want one of %s", format, strings.Join(datasets.Formats, ", "))
	}
	if t := c.String("table"); t != "" {
		if _, ok := datasets.TableByName(t); !ok {
			return nil, nil, usagef("--table %q: want one of %s", t, strings.Join(datasets.TableNames(), ", "))
		}
	}
	base := datasets.Source{Format: format, Table: c.String("table"), Src: c.String("src"), Dst: c.String("dst"),
		Experiment: c.String("experiment"), PatternID: c.String("pattern")}
	srcs, err := datasets.ExpandSources(paths, base)
	if err != nil {
		return nil, nil, badinput.Wrap("", err)
	}
	if c.String("cluster") != "" {
		cl, err := loadCluster(c)
		return cl, srcs, err
	}
	// No --cluster: every input must be a dataset directory, all of one cluster.
	var cl *cluster.Cluster
	for _, p := range paths {
		m, err := datasets.ReadManifest(p)
		if err != nil {
			return nil, nil, usagef("--cluster is required unless every input is a commcal dataset directory (%s is not)", p)
		}
		c2, err := cluster.New(m.Cluster)
		if err != nil {
			return nil, nil, badinput.Wrap(p, err)
		}
		if cl != nil && cl.Name() != c2.Name() {
			return nil, nil, usagef("inputs belong to clusters %s and %s; give --cluster", cl.Name(), c2.Name())
		}
		cl = c2
	}
	return cl, srcs, nil
}

// progress returns a row counter drawn on stderr when it is a terminal, and a function that
// clears it; elsewhere both do nothing and the structured log says what happened.
func progress(c *cli.Context, what string) (func(int64), func()) {
	if !isTerminal(c.App.ErrWriter) {
		return nil, func() {}
	}
	bar := progressbar.NewOptions64(-1, progressbar.OptionSetWriter(c.App.ErrWriter),
		progressbar.OptionSetDescription(what), progressbar.OptionShowCount(), progressbar.OptionSetItsString("rows"),
		progressbar.OptionShowIts(), progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
	return func(n int64) { bar.Set64(n) }, func() { bar.Clear() }
}

// created is the creation time of outputs (SOURCE_DATE_EPOCH when set).
func created() (time.Time, error) {
	t, err := pipeline.Created()
	if err != nil {
		return t, usagef("%v", err)
	}
	return t, nil
}
