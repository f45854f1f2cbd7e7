package estimate

import "fmt"

// RateMargin is how far above a resource's nominal rate (the line rate of the cluster
// description) a fitted capacity or ceiling may lie and still be used: 5%. No transfer beats
// its line rate; TCP and MPI deliver less (94% goodput on Ethernet), so a fit above the line
// rate is an error of the fit or of the design, not a fast network. The margin covers the
// clock-rate difference between hosts and the sampling error of a few repetitions, both well
// under 1% on the committed datasets, with room for a line rate quoted in round numbers.
const RateMargin = 0.05

// aboveLineRate says whether a fitted rate (bit/s) exceeds what a resource of the nominal
// rate can carry, margin included; a nominal rate that is not positive bounds nothing.
func aboveLineRate(fitted, nominal float64) bool {
	return nominal > 0 && fitted > nominal*(1+RateMargin)
}

// lineRateReason is the reason an unidentified capacity gives when its fit broke the bound:
// the fitted and nominal rates, and the experiment it came from.
func lineRateReason(what string, fitted, nominal float64, experiment string) string {
	return fmt.Sprintf("refused: %s fitted at %.4g Gbit/s from %s, above the %.4g Gbit/s line rate (+%g%% margin)",
		what, fitted/1e9, experiment, nominal/1e9, RateMargin*100)
}
