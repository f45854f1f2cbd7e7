package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/commcal/commcal/engine"
	"github.com/commcal/commcal/internal/provenance"
)

func agentCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:  "agent",
		Usage: "run one node's benchmark agent on a real cluster (started by srun, mpirun or ssh; rank 0 with --out coordinates)",
		Description: `Start one agent per node with the cluster's own launcher; no MPI library is used. The
rank and size come from the launcher's environment (Open MPI's OMPI_COMM_WORLD_RANK/SIZE,
an MPICH PMI_RANK/PMI_SIZE, PMIx, Slurm's SLURM_PROCID/SLURM_NTASKS) or from --rank and --size.

Rank 0 given --out is the coordinator: it publishes its address in the --rendezvous
directory (a file system every node shares) or listens on the port of --coordinator, waits
for every agent, maps each to its node of the cluster description (--node, else the node
whose addr is one of the agent's addresses, else the node named like its host), estimates
every agent's clock offset, measures the catalogue (every experiment: point-to-point sweeps,
fairness, bidirectional, static-synchronous and random patterns, LMO round trips and
one-to-two experiments, scatter and gather sweeps, ping-pong pairs) and writes the dataset.
The other agents run the transfers they are told to, from a common start scheduled in each
agent's own clock.

A per-run token authenticates the control channel both ways and tags every data connection:
with --rendezvous, rank 0 draws one and publishes it (mode 0600) unless --token-file or
COMMCAL_TOKEN gives it; with --coordinator every agent needs it. Any agent's failure or loss
ends the run with the node named; every agent exits; nothing is written.

EXAMPLES:
   srun --ntasks-per-node=1 commcal agent --rendezvous "$HOME/.commcal/$SLURM_JOB_ID" \
        --cluster cluster.toml --out "nightly/$(date +%F)"
   mpirun --map-by ppr:1:node commcal agent --rendezvous /shared/rdv-42 --cluster cluster.toml --out measured
   COMMCAL_TOKEN=$(cat ~/.commcal/token) commcal agent --rank 3 --size 8 --coordinator node01:7070`,
		Flags: append(append([]cli.Flag{
			&cli.IntFlag{Name: "rank", Value: -1, Usage: "this agent's rank (default: from the launcher's environment)"},
			&cli.IntFlag{Name: "size", Usage: "number of agents (default: from the launcher's environment)"},
			&cli.StringFlag{Name: "node", Usage: "the cluster node this agent is (default: by address or host name)"},
			&cli.StringFlag{Name: "netns", Usage: "network namespace for the data connections; {rank} is replaced (tests and emulations)"},
			&cli.StringFlag{Name: "rendezvous", EnvVars: []string{"COMMCAL_RENDEZVOUS"}, Usage: "directory on a shared file system where rank 0 publishes itself"},
			&cli.StringFlag{Name: "coordinator", EnvVars: []string{"COMMCAL_COORDINATOR"}, Usage: "HOST:PORT of rank 0 (instead of --rendezvous)"},
			&cli.StringFlag{Name: "token-file", EnvVars: []string{"COMMCAL_TOKEN_FILE"}, Usage: "file holding the run's token in hex, mode 0600 (or COMMCAL_TOKEN)"},
			&cli.DurationFlag{Name: "connect-timeout", Value: 2 * time.Minute, EnvVars: []string{"COMMCAL_CONNECT_TIMEOUT"}, Usage: "how long to look for the coordinator"},
			&cli.DurationFlag{Name: "join-timeout", Value: 2 * time.Minute, Usage: "rank 0: how long to wait for every agent"},
			&cli.StringFlag{Name: "listen", Usage: "rank 0: control listener address (default: every interface, the port of --coordinator or any)"},
			clusterFlag("rank 0"),
		}, campaignFlags()...), outFlags("COMMCAL_AGENT_OUT", "", "rank 0: dataset directory to write (makes rank 0 the coordinator)")...),
		Action: act(0, 0, "nothing", func(c *cli.Context, e env, _ []string) error {
			o := agentOptions{Rank: c.Int("rank"), Size: c.Int("size"), Node: c.String("node"), NetNS: c.String("netns"),
				Rendezvous: c.String("rendezvous"), Coordinator: c.String("coordinator"), TokenFile: c.String("token-file"),
				ConnectTimeout: c.Duration("connect-timeout"), JoinTimeout: c.Duration("join-timeout"), Listen: c.String("listen"),
				Cluster: c.String("cluster"), Output: outputFrom(c)}
			var err error
			if o.Campaign, err = campaignFrom(c); err != nil {
				return err
			}
			return runAgent(c.Context, e, o)
		}),
	})
}

// agentOptions are agent's flags.
type agentOptions struct {
	Rank, Size                                   int
	Node, NetNS, Rendezvous, Coordinator, Listen string
	TokenFile                                    string
	ConnectTimeout, JoinTimeout                  time.Duration
	Cluster                                      string
	Campaign                                     campaignOptions
	Output                                       outputOptions
}

// runAgent runs an agent, and on rank 0 with --out the coordinator too.
func runAgent(ctx context.Context, e env, o agentOptions) error {
	launch := engine.Launch{Rank: o.Rank, Size: o.Size, Launcher: "flags"}
	if o.Rank < 0 {
		l, err := engine.DetectLaunch(os.Getenv)
		if err != nil {
			return usagef("agent: %v", err)
		}
		launch = l
		if o.Size > 0 {
			launch.Size = o.Size
		}
	}
	if launch.Size < 1 || launch.Rank >= launch.Size {
		return usagef("agent: rank %d of %d agents: give --size (and --rank) or start the agents with a launcher", launch.Rank, launch.Size)
	}
	if (o.Rendezvous == "") == (o.Coordinator == "") {
		return usagef("agent: give one of --rendezvous DIR and --coordinator HOST:PORT")
	}
	tok, err := agentToken(o.TokenFile)
	if err != nil {
		return err
	}
	if tok == nil && o.Coordinator != "" {
		return usagef("agent: --coordinator needs the run's token: --token-file FILE or COMMCAL_TOKEN")
	}
	host, _ := os.Hostname()
	cfg := engine.AgentConfig{Rank: launch.Rank, Size: launch.Size, Host: host, Node: o.Node,
		NetNS: strings.ReplaceAll(o.NetNS, "{rank}", strconv.Itoa(launch.Rank)), Token: tok, ConnectTimeout: o.ConnectTimeout, Logger: e.log}
	if launch.Rank == 0 && o.Output.Out != "" {
		return coordinate(ctx, e, o, launch, cfg)
	}
	if o.Coordinator != "" {
		cfg.Coordinator = []string{o.Coordinator}
	} else {
		addrs, published, err := engine.Rendezvous{Dir: o.Rendezvous}.Find(ctx, launch.Job, o.ConnectTimeout)
		if err != nil {
			return err
		}
		cfg.Coordinator = addrs
		if cfg.Token == nil {
			cfg.Token = published
		}
		if cfg.Token == nil {
			return fmt.Errorf("agent: rank 0 published no token in %s and none was given (--token-file or COMMCAL_TOKEN)", o.Rendezvous)
		}
	}
	return engine.RunAgent(ctx, cfg)
}

// agentToken reads the token from --token-file or COMMCAL_TOKEN; nil when neither is given.
func agentToken(file string) (engine.Token, error) {
	if file != "" {
		t, err := engine.ReadTokenFile(file)
		if err != nil {
			return nil, usagef("agent: %v", err)
		}
		return t, nil
	}
	if s := os.Getenv("COMMCAL_TOKEN"); s != "" {
		t, err := engine.ParseToken(s)
		if err != nil {
			return nil, usagef("agent: COMMCAL_TOKEN: %v", err)
		}
		return t, nil
	}
	return nil, nil
}

// coordinate is rank 0's part: the coordinator, with rank 0's own agent beside it.
func coordinate(ctx context.Context, e env, o agentOptions, launch engine.Launch, self engine.AgentConfig) error {
	cl, cat, out, err := o.Campaign.start(ctx, e, o.Cluster, o.Output, launch.Size)
	if err != nil {
		return err
	}
	defer out.Release()
	tok := self.Token
	publishToken := tok == nil
	if tok == nil {
		tok = engine.NewToken()
	}
	self.Token = tok
	listen := o.Listen
	if listen == "" {
		listen = ":0"
		if o.Coordinator != "" {
			_, port, err := net.SplitHostPort(o.Coordinator)
			if err != nil {
				return usagef("agent: --coordinator %q: %v", o.Coordinator, err)
			}
			listen = ":" + port
		}
	}
	selfDone := make(chan error, 1)
	var unpublish func()
	prog, clear := e.campaignProgress()
	defer clear()
	m, _, err := engine.Coordinate(ctx, engine.CampaignRun{Cluster: cl, Size: launch.Size, Catalogue: cat, Token: tok, Listen: listen, JoinTimeout: o.JoinTimeout,
		Socket: o.Campaign.Socket, Logger: e.log, Progress: prog,
		Dataset: engine.DatasetOptions{Out: o.Output.Out, Force: true, Version: provenance.Version, Created: e.when, Launcher: launch.Launcher,
			Provenance: fmt.Sprintf("commcal agent on %d nodes, started by %s", launch.Size, launch.Launcher)},
		Started: func(port int) error {
			if o.Rendezvous != "" {
				var err error
				if unpublish, err = (engine.Rendezvous{Dir: o.Rendezvous}).Publish(launch.Job, port, tok, publishToken); err != nil {
					return err
				}
			}
			self.Coordinator = []string{net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}
			go func() { selfDone <- engine.RunAgent(ctx, self) }()
			return nil
		}})
	if unpublish != nil {
		unpublish()
	}
	clear()
	if err != nil {
		return err
	}
	if serr := <-selfDone; serr != nil {
		return serr
	}
	return printMeasured(e.stdout, o.Output.Out, m)
}
