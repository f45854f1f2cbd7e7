package engine

import (
	"context"
	"log/slog"
	"time"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/experiments"
)

// CampaignRun is a whole measurement as its coordinator runs it, whichever way the agents
// were started: listen, let the agents be started or found (Started), wait for every agent,
// measure the catalogue, end the run, write the dataset.
type CampaignRun struct {
	Cluster *cluster.Cluster
	// Size is the number of agents launched (0: one per node, as the emulator starts them).
	Size        int
	Catalogue   experiments.Catalogue
	Token       Token
	Listen      string
	JoinTimeout time.Duration
	// Addrs are nodes' addresses the description does not give (CoordinatorConfig.Addrs).
	Addrs    map[string]string
	Socket   SocketOptions
	Dataset  DatasetOptions
	Logger   *slog.Logger
	Progress func(done, total int, left time.Duration)
	// Started is called once the coordinator listens, with its port: it starts the agents
	// (the emulator) or publishes the rendezvous (rank 0 of a launch). An error ends the run.
	Started func(port int) error
	// Check, when set, runs once every agent has joined, before the campaign: a check of the
	// deployment (the emulator's headroom). Its note joins the manifest's; an error ends the run.
	Check func(ctx context.Context, co *Coordinator) (note string, err error)
}

// Coordinate runs a campaign from start to dataset. On any failure every agent is told the
// reason and nothing is written.
func Coordinate(ctx context.Context, o CampaignRun) (*datasets.Manifest, *Results, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	o.Socket.Timeout = o.Catalogue.Reps.Timeout
	if o.Size == 0 {
		o.Size = len(o.Cluster.Nodes())
	}
	co, err := Listen(ctx, CoordinatorConfig{Cluster: o.Cluster, Size: o.Size, Token: o.Token, Listen: o.Listen,
		Socket: o.Socket, JoinTimeout: o.JoinTimeout, Addrs: o.Addrs, Logger: o.Logger})
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error) (*datasets.Manifest, *Results, error) {
		reason := err.Error()
		if ctx.Err() != nil {
			reason = "interrupted"
		}
		co.Shutdown(reason)
		return nil, nil, err
	}
	if o.Started != nil {
		if err := o.Started(co.Port()); err != nil {
			return fail(err)
		}
	}
	if err := co.Join(ctx); err != nil {
		return fail(err)
	}
	o.Logger.Info("agents joined", "agents", len(co.peers))
	if o.Check != nil {
		note, err := o.Check(ctx, co)
		if err != nil {
			return fail(err)
		}
		o.Dataset.Notes = append(o.Dataset.Notes, note)
	}
	res, err := co.Measure(ctx, Campaign{Cluster: o.Cluster, Catalogue: o.Catalogue, Logger: o.Logger, Progress: o.Progress})
	if err != nil {
		return fail(err)
	}
	agents := co.Agents()
	co.Shutdown("")
	o.Dataset.Socket = o.Socket
	m, err := WriteDataset(o.Cluster, res, agents, o.Dataset)
	if err != nil {
		return nil, nil, err
	}
	return m, res, nil
}
