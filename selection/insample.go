package selection

import (
	"context"
	"fmt"
	"slices"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/estimate"
	"github.com/commcal/commcal/experiments"
	"github.com/commcal/commcal/validate"
)

// InSample is the diagnostic of `validate --in-sample`: how far each model's form reaches on a
// dataset's held-out transfers when its parameters are the ones best for those very transfers.
// Every model is calibrated on the calibration experiments and the held-out patterns together
// (HeldOutAsCalibration), then scored on the held-out patterns again. The distance from the
// accuracy to this reach is what the calibration experiments cost (parameters fitted elsewhere
// than where they are scored); the distance from the reach to the noise limit is the model's
// form. It is never an accuracy: the parameters have seen the answers. override, if not nil,
// changes the fitted parameters before they are scored, as the user's overrides change the
// held-out ones (validate's --efficiency and --contra-factor).
//
// On a dataset without random calibration patterns the fit leaves ackpath's ceiling relief ρ
// at 0 (nothing tells it from the slowdowns there); with the held-out patterns read as such it
// fits ρ too, so there the reach also has a parameter the held-out model has not.
//
// It stops when ctx is done, with its error.
func InSample(ctx context.Context, cl *cluster.Cluster, in estimate.Inputs, defaults contention.Params, heldOut []string, override func(*contention.Params)) (*validate.InSample, error) {
	all := in
	all.Transfers = HeldOutAsCalibration(in.Transfers, heldOut)
	cal, err := estimate.Calibrate(ctx, cl, all, defaults, false)
	if err != nil {
		return nil, err
	}
	params := cal.Params
	if override != nil {
		override(&params)
	}
	rows, acc, err := validate.Validate(ctx, cl, in.Transfers, params, cal.PenaltyTable(), contention.Models(), heldOut)
	if err != nil {
		return nil, fmt.Errorf("in-sample: %w", err)
	}
	return &validate.InSample{Params: params, Settings: acc.Settings, Overall: acc.Overall, Rows: rows}, nil
}

// HeldOutAsCalibration returns the transfers with those of the held-out experiments turned
// into random calibration patterns, which the learned models' fit reads. Their pattern ids
// take the experiment's name as a prefix ("random/N10-d2-004"), so that none meets an id of the
// dataset's own random calibration patterns (which are drawn with the same names).
func HeldOutAsCalibration(rows []datasets.Transfer, heldOut []string) []datasets.Transfer {
	out := slices.Clone(rows)
	for i, r := range out {
		if slices.Contains(heldOut, r.Experiment) {
			out[i].PatternID = r.Experiment + "/" + r.PatternID
			out[i].Experiment = string(experiments.RandomCalibration)
		}
	}
	return out
}
