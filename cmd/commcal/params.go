package main

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/experiments"
	"github.com/commcal/commcal/internal/badinput"
)

// paramsFlags are the flags of the commands that run the contention models.
func paramsFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "params", EnvVars: []string{"COMMCAL_PARAMS"},
			Usage: "contention parameters as JSON (efficiency, ceiling_bps, nic_bps, backbone_bps, contra_factor, latency_s, ...): the defaults a calibration starts from"},
		&cli.Float64Flag{Name: "efficiency", Usage: "share of nominal link rates delivered as goodput (default 0.94)"},
		&cli.Float64Flag{Name: "contra-factor", Usage: "φ of asymmetric-fitted, from 0 (fair) to 1 (asymmetric); default: the calibration's, else 1"},
	}
}

// override applies the explicitly given single-value flags to calibrated parameters, so that
// the command line wins over the calibration.
func override(c *cli.Context) func(*contention.Params) {
	return func(p *contention.Params) {
		if c.IsSet("efficiency") {
			p.Efficiency = c.Float64("efficiency")
		}
		if c.IsSet("contra-factor") {
			p.ContraFactor = c.Float64("contra-factor")
		}
	}
}

// paramsFromFlags reads --params and applies the single-value flags over it.
func paramsFromFlags(c *cli.Context) (contention.Params, error) {
	p := contention.DefaultParams()
	if path := c.String("params"); path != "" {
		if err := datasets.ReadJSONFile(path, &p); err != nil {
			return p, badinput.Wrap(path, err)
		}
		if err := p.Validate(); err != nil {
			return p, badinput.Wrap(path, err)
		}
	}
	if c.IsSet("efficiency") {
		p.Efficiency = c.Float64("efficiency")
	}
	if c.IsSet("contra-factor") {
		p.ContraFactor = c.Float64("contra-factor")
	}
	if !(p.Efficiency > 0 && p.Efficiency <= 1) || !(p.ContraFactor >= 0 && p.ContraFactor <= 1) {
		return p, usagef("--efficiency must lie in (0, 1] and --contra-factor in [0, 1]")
	}
	return p, nil
}

// heldOutFlag lists the experiments scored by validation.
func heldOutFlag() cli.Flag {
	return &cli.StringFlag{Name: "held-out", Value: strings.Join(experiments.WithRole(experiments.HeldOut), ","), EnvVars: []string{"COMMCAL_HELD_OUT"},
		Usage: "experiments scored (never used for fitting), comma-separated"}
}

func heldOut(c *cli.Context) ([]string, error) {
	var out []string
	for _, e := range strings.Split(c.String("held-out"), ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	if err := experiments.CheckHeldOut(out); err != nil {
		return nil, usagef("--held-out %s: %v", c.String("held-out"), err)
	}
	return out, nil
}
