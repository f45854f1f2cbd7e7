package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/internal/atomicio"
	"github.com/commcal/commcal/internal/badinput"
)

func clusterCommand() *cli.Command {
	flags := func() []cli.Flag {
		return []cli.Flag{
			&cli.StringFlag{Name: "name", Usage: "cluster name (default: the input file's name, or \"cluster\")"},
			&cli.Float64Flag{Name: "nic-rate", Usage: "nominal NIC rate of every node, bit/s (required: a scheduler does not know it)"},
			&cli.Float64Flag{Name: "uplink-rate", Usage: "nominal rate of every switch's uplink to the core, bit/s (required with several switches)"},
			&cli.StringFlag{Name: "kind", Value: cluster.KindElectrical, Usage: "backbone kind: electrical or optical"},
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "write cluster.toml here instead of stdout (an existing file needs --force)"},
			&cli.BoolFlag{Name: "force", Usage: "replace an existing --out file"},
		}
	}
	return withUsageErrors(&cli.Command{
		Name:  "cluster",
		Usage: "write a cluster description from what the cluster's scheduler knows",
		Description: `Writes a cluster description (cluster.toml) for --cluster from the scheduler's view of
the cluster: its nodes, and which switch each hangs from. Link rates are not in the
scheduler's files: give them with --nic-rate and --uplink-rate.`,
		Subcommands: []*cli.Command{
			withUsageErrors(&cli.Command{
				Name:      "from-slurm",
				Usage:     "from Slurm's tree topology (topology.conf, or scontrol show topology)",
				ArgsUsage: "[TOPOLOGY_FILE]",
				Description: `Reads Slurm's topology.conf (or a saved "scontrol show topology"; without a file, runs
scontrol show topology): every switch with Nodes= becomes a rack; with several racks each
gets an uplink to one core router.

EXAMPLES:
   commcal cluster from-slurm --nic-rate 10e9 --uplink-rate 40e9 --out cluster.toml /etc/slurm/topology.conf
   commcal cluster from-slurm --nic-rate 1e9 --uplink-rate 10e9 --name graphene > graphene.toml`,
				Flags: flags(),
				Action: func(c *cli.Context) error {
					return clusterAction(c, "slurm")
				},
			}),
			withUsageErrors(&cli.Command{
				Name:      "from-hosts",
				Usage:     "from an MPI host file (one rack)",
				ArgsUsage: "HOSTFILE",
				Description: `Reads an Open MPI or MPICH host file ("node1 slots=4", "node2:8"): every host in one rack.

EXAMPLE:
   commcal cluster from-hosts --nic-rate 1e9 --out cluster.toml hosts`,
				Flags: flags(),
				Action: func(c *cli.Context) error {
					return clusterAction(c, "hosts")
				},
			}),
		},
	})
}

// clusterOptions are the options of the cluster subcommands.
type clusterOptions struct {
	From  string // "slurm" or "hosts"
	Input string // the file; "" runs scontrol (slurm)
	Name  string
	Rates cluster.Rates
	Out   string
	Force bool
}

func clusterAction(c *cli.Context, from string) error {
	min := 0
	if from == "hosts" {
		min = 1
	}
	args, err := positional(c, min, 1, "the input file")
	if err != nil {
		return err
	}
	o := clusterOptions{From: from, Name: c.String("name"), Out: c.String("out"), Force: c.Bool("force"),
		Rates: cluster.Rates{NICBps: c.Float64("nic-rate"), UplinkBps: c.Float64("uplink-rate"), Kind: c.String("kind")}}
	if len(args) == 1 {
		o.Input = args[0]
	}
	if !(o.Rates.NICBps > 0) {
		return usagef("cluster %s: --nic-rate is required (bit/s)", c.Command.Name)
	}
	e, err := envFrom(c)
	if err != nil {
		return err
	}
	return runCluster(c.Context, e, o)
}

// runCluster writes a cluster description from a scheduler's topology or a host file.
func runCluster(ctx context.Context, e env, o clusterOptions) error {
	src, label, closeInput, err := clusterInput(ctx, o)
	if err != nil {
		return err
	}
	defer closeInput()
	if o.Name == "" {
		o.Name = "cluster"
		if o.Input != "" {
			o.Name = strings.TrimSuffix(filepath.Base(o.Input), filepath.Ext(o.Input))
		}
	}
	var d cluster.Description
	var notes []string
	if o.From == "slurm" {
		d, notes, err = cluster.FromSlurmTopology(src, o.Name, o.Rates)
	} else {
		d, err = cluster.FromHostFile(src, o.Name, o.Rates)
	}
	switch {
	case err != nil && badinput.Is(err):
		return badinput.Errorf(label, "%w", err)
	case err != nil:
		return fmt.Errorf("%s: %w", label, err)
	}
	if d.Backbone != nil && !(o.Rates.UplinkBps > 0) {
		return usagef("cluster: %d switches: --uplink-rate is required (bit/s)", len(d.Racks))
	}
	if _, err := cluster.New(d); err != nil {
		return badinput.Errorf(label, "%w", err)
	}
	out, err := cluster.EncodeTOML(d)
	if err != nil {
		return err
	}
	for _, n := range notes {
		e.log.Warn(n)
	}
	if o.Out == "" {
		_, err = e.stdout.Write(out)
		return err
	}
	claimed, err := atomicio.Claim(ctx, atomicio.Target{Path: o.Out, File: true, Force: o.Force, Inputs: []string{o.Input}})
	if err != nil {
		return err
	}
	defer claimed.Release()
	if err := atomicio.WriteFile(o.Out, out); err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.stdout, "cluster %s: %d racks written to %s\n", d.Name, len(d.Racks), o.Out)
	return err
}

// clusterInput opens the input of a cluster subcommand: the file, or the output of scontrol
// show topology when from-slurm has none. It returns the name that messages give the input.
// A missing file, a directory or a file that cannot be opened is bad input.
func clusterInput(ctx context.Context, o clusterOptions) (io.Reader, string, func(), error) {
	if o.Input == "" {
		cmd := exec.CommandContext(ctx, "scontrol", "show", "topology")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		data, err := cmd.Output()
		if err != nil {
			return nil, "", nil, fmt.Errorf("cluster from-slurm: scontrol show topology: %v: %s (give topology.conf as an argument instead)", err, strings.TrimSpace(stderr.String()))
		}
		return bytes.NewReader(data), "scontrol show topology", func() {}, nil
	}
	f, err := os.Open(o.Input)
	if err != nil {
		var pathErr *fs.PathError
		if errors.As(err, &pathErr) {
			err = pathErr.Err
		}
		return nil, "", nil, badinput.Errorf(o.Input, "%v", err)
	}
	if st, err := f.Stat(); err == nil && st.IsDir() {
		f.Close()
		return nil, "", nil, badinput.Errorf(o.Input, "is a directory, want a file")
	}
	return f, o.Input, func() { f.Close() }, nil
}
