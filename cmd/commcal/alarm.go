package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/commcal/commcal/validate"
)

// thresholdFlags are the accuracy alarms of validate, run and compare.
func thresholdFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "fail-below", EnvVars: []string{"COMMCAL_FAIL_BELOW"},
			Usage: "alarm (exit 3) when MODEL's share of held-out transfers within ±10% falls below VALUE: MODEL:VALUE, e.g. asymmetric:0.8 or all:90% (repeatable; the variable takes a comma-separated list)"},
		&cli.StringSliceFlag{Name: "fail-above-error", EnvVars: []string{"COMMCAL_FAIL_ABOVE_ERROR"},
			Usage: "alarm (exit 3) when MODEL's mean |ε| on held-out transfers rises above VALUE: MODEL:VALUE, e.g. maxmin:0.1 or all:15%"},
	}
}

// thresholds parses the alarm flags; a mistake is a usage error before anything runs.
func thresholds(c *cli.Context) ([]validate.Threshold, error) {
	var ths []validate.Threshold
	for _, f := range []struct {
		name  string
		below bool
	}{{"fail-below", true}, {"fail-above-error", false}} {
		for _, spec := range c.StringSlice(f.name) {
			th, err := validate.ParseThreshold(strings.TrimSpace(spec), f.below)
			if err != nil {
				return nil, err
			}
			ths = append(ths, th)
		}
	}
	return ths, nil
}

// accuracyAlarm checks an accuracy (already written) against the thresholds and returns the
// alarm naming every crossing, or nil.
func accuracyAlarm(acc *validate.Accuracy, ths []validate.Threshold) error {
	if len(ths) == 0 {
		return nil
	}
	var breaches []string
	if acc == nil {
		breaches = []string{"no accuracy: the run scored no held-out transfer"}
	} else {
		breaches = acc.Check(ths)
	}
	if len(breaches) == 0 {
		return nil
	}
	return alarmError{fmt.Sprintf("accuracy alarm: %s", strings.Join(breaches, "; "))}
}

// driftAlarm reports drift (since is the earlier run, or "" for a comparison's own list):
// with failOnDrift it is the alarm, joined with the accuracy alarm; without, it is listed on
// stderr and the accuracy alarm alone decides.
func driftAlarm(e env, since string, alarms []string, failOnDrift bool, accAlarm error) error {
	prefix := ""
	if since != "" {
		prefix = "since " + since + ": "
	}
	if len(alarms) > 0 && failOnDrift {
		msg := "drift alarm: " + prefix + strings.Join(alarms, "; ")
		if accAlarm != nil {
			msg += "; " + accAlarm.Error()
		}
		return alarmError{msg}
	}
	for _, a := range alarms {
		fmt.Fprintf(e.stderr, "commcal: %s%s\n", prefix, a)
	}
	return accAlarm
}
