package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/commcal/commcal/engine"
	"github.com/commcal/commcal/internal/badinput"
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

Each agent's data listener binds where --data-listen says (an IP address, an interface such
as ib0, or * for every interface); by default to its node's addr from the cluster description
when the host has it, else to the address the agent reaches the coordinator from (every
interface in its own --netns, or when that address is loopback: rank 0's own agent, which binds
to the address of --listen when that is one IP address).

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
			&cli.StringFlag{Name: "listen", Usage: "rank 0: control listener address HOST:PORT (default: every interface, the port of --coordinator or any)"},
			&cli.StringFlag{Name: "data-listen", EnvVars: []string{"COMMCAL_DATA_LISTEN"}, Usage: "where this agent's data listener binds: an IP address, an interface (ib0) or * for every interface, " +
				"and an optional :PORT (default: the node's addr when this host has it, else the control channel's address)"},
			clusterFlag("rank 0"),
		}, campaignFlags()...), outFlags("COMMCAL_AGENT_OUT", "", "rank 0: dataset directory to write (makes rank 0 the coordinator)")...),
		Action: act(0, 0, "nothing", func(c *cli.Context, e env, _ []string) error {
			o := agentOptions{Rank: c.Int("rank"), RankSet: c.IsSet("rank"), Size: c.Int("size"), SizeSet: c.IsSet("size"), Node: c.String("node"), NetNS: c.String("netns"),
				Rendezvous: c.String("rendezvous"), Coordinator: c.String("coordinator"), TokenFile: c.String("token-file"),
				ConnectTimeout: c.Duration("connect-timeout"), JoinTimeout: c.Duration("join-timeout"), Listen: c.String("listen"),
				DataListen: c.String("data-listen"), Cluster: c.String("cluster"), Output: outputFrom(c)}
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
	RankSet, SizeSet                             bool
	Node, NetNS, Rendezvous, Coordinator, Listen string
	DataListen                                   string
	TokenFile                                    string
	ConnectTimeout, JoinTimeout                  time.Duration
	Cluster                                      string
	Campaign                                     campaignOptions
	Output                                       outputOptions
}

// runAgent runs an agent, and on rank 0 with --out the coordinator too.
func runAgent(ctx context.Context, e env, o agentOptions) error {
	if err := o.check(); err != nil {
		return err
	}
	launch, err := o.launch(os.Getenv)
	if err != nil {
		return err
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
		NetNS: strings.ReplaceAll(o.NetNS, "{rank}", strconv.Itoa(launch.Rank)), Token: tok, ConnectTimeout: o.ConnectTimeout,
		DataListen: o.DataListen, Logger: e.log}
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

// check refuses flag values no run can use, naming the flag: a negative rank, a size outside
// 1…engine.MaxAgents, a duration that is not positive, an address that is not one, a node
// name no cluster description holds, and neither or both of --rendezvous and --coordinator.
func (o agentOptions) check() error {
	switch {
	case o.RankSet && o.Rank < 0:
		return usagef("agent: --rank %d: want 0 or more", o.Rank)
	case o.SizeSet && (o.Size < 1 || o.Size > engine.MaxAgents):
		return usagef("agent: --size %d: want the number of agents, 1 to %d", o.Size, engine.MaxAgents)
	case o.ConnectTimeout <= 0:
		return usagef("agent: --connect-timeout %v: want a positive duration", o.ConnectTimeout)
	case o.JoinTimeout <= 0:
		return usagef("agent: --join-timeout %v: want a positive duration", o.JoinTimeout)
	case (o.Rendezvous == "") == (o.Coordinator == ""):
		return usagef("agent: give one of --rendezvous DIR and --coordinator HOST:PORT")
	}
	if err := engine.CheckName(o.Node); err != nil {
		return usagef("agent: --node %s: %v", badinput.Quote(o.Node), err)
	}
	if err := checkHostPort("--coordinator", o.Coordinator, 1); err != nil {
		return err
	}
	if err := checkHostPort("--listen", o.Listen, 0); err != nil {
		return err
	}
	if o.DataListen != "" {
		if err := engine.CheckDataListen(o.DataListen); err != nil {
			return usagef("agent: --data-listen %s: %v", badinput.Quote(o.DataListen), err)
		}
		if o.NetNS == "" { // an interface is looked up in the agent's namespace
			if _, err := engine.ResolveDataListen(o.DataListen); err != nil {
				return usagef("agent: --data-listen %s: %v", badinput.Quote(o.DataListen), err)
			}
		}
	}
	return nil
}

// checkHostPort checks an address flag's HOST:PORT (empty: not given), the port at least
// minPort (0 for a listener: any free port) and at most 65535.
func checkHostPort(flag, addr string, minPort int) error {
	if addr == "" {
		return nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || (minPort > 0 && host == "") {
		return usagef("agent: %s %s: want HOST:PORT", flag, badinput.Quote(addr))
	}
	if n, err := strconv.Atoi(port); err != nil || n < minPort || n > 65535 {
		return usagef("agent: %s %s: port %s is not in %d…65535", flag, badinput.Quote(addr), badinput.Quote(port), minPort)
	}
	return nil
}

// launch is the agent's place in the launch: from --rank and --size, or from the launcher's
// environment, whose size --size (when given) must match.
func (o agentOptions) launch(getenv func(string) string) (engine.Launch, error) {
	if o.RankSet {
		switch {
		case !o.SizeSet:
			return engine.Launch{}, usagef("agent: --rank %d needs --size, the number of agents", o.Rank)
		case o.Rank >= o.Size:
			return engine.Launch{}, usagef("agent: --rank %d is not below --size %d: ranks run from 0 to %d", o.Rank, o.Size, o.Size-1)
		}
		return engine.Launch{Rank: o.Rank, Size: o.Size, Launcher: "flags"}, nil
	}
	l, err := engine.DetectLaunch(getenv)
	if err != nil {
		return l, usagef("agent: %v", err)
	}
	if o.SizeSet && o.Size != l.Size {
		return l, usagef("agent: --size %d disagrees with the launcher (%s=%d): leave --size out, or launch %d agents", o.Size, l.SizeFrom, l.Size, o.Size)
	}
	return l, nil
}

// launchSizeError names where a launch's size came from when it does not match the cluster's
// nodes: --size, or the launcher's variable.
func (o agentOptions) launchSizeError(l engine.Launch, e *engine.LaunchSizeError) error {
	from := fmt.Sprintf("--size %d", e.Agents)
	if !o.SizeSet && l.SizeFrom != "" {
		from = fmt.Sprintf("the launcher's %s=%d", l.SizeFrom, e.Agents)
	}
	return usagef("agent: the cluster description has %d nodes and the launch %d agents (%s; --cluster %s): start one agent per node", e.Nodes, e.Agents, from, o.Cluster)
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
	var sizeErr *engine.LaunchSizeError
	if errors.As(err, &sizeErr) {
		return o.launchSizeError(launch, sizeErr)
	}
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
			_, port, _ := net.SplitHostPort(o.Coordinator)
			listen = ":" + port
		}
	}
	if self.DataListen == "" {
		// Rank 0's own agent reaches its coordinator over loopback: the interface the control
		// channel uses is the control listener's, when that is one IP address.
		if host, _, _ := net.SplitHostPort(listen); net.ParseIP(host) != nil {
			self.DataListen = host
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
