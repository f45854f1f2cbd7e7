package rundir

import (
	"context"

	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/estimate"
)

// LoadTables reads every table of a dataset (a run directory's, or any other) into memory
// once; the summary, estimation, validation and plot stages all work from the one copy.
func LoadTables(ctx context.Context, ds *datasets.Dataset) (estimate.Inputs, error) {
	var in estimate.Inputs
	var err error
	if in.Transfers, err = datasets.ReadAll[datasets.Transfer](ctx, ds, datasets.TransfersTable); err != nil {
		return in, err
	}
	if in.RoundTrips, err = datasets.ReadAll[datasets.RoundTrip](ctx, ds, datasets.RoundTripsTable); err != nil {
		return in, err
	}
	if in.OneToTwo, err = datasets.ReadAll[datasets.OneToTwo](ctx, ds, datasets.OneToTwoTable); err != nil {
		return in, err
	}
	if in.Collectives, err = datasets.ReadAll[datasets.Collective](ctx, ds, datasets.CollectivesTable); err != nil {
		return in, err
	}
	if in.PingPongPairs, err = datasets.ReadAll[datasets.PingPongPairs](ctx, ds, datasets.PingPongPairsTable); err != nil {
		return in, err
	}
	in.Schedules, err = datasets.ReadAll[datasets.Schedule](ctx, ds, datasets.SchedulesTable)
	return in, err
}
