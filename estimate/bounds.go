package estimate

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
)

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

// R2Floor is the least share of the variance of the times that a line must explain for its
// slope to be used as a rate (Hockney's β, per class and per segment). On the committed data
// real bandwidth fits explain far more: r² ≥ 0.997 on every class of the fifty TCP datasets
// (lowest 0.99709, two-rack-1g-seed9 intra-rack), 0.9999 on the built-in sample, 0.9986 on
// SKaMPI's Ethernet ping-pong of griffon and 0.913–0.999 on the segments of the real NetPIPE,
// SKaMPI and SimGrid outputs above their latency regime. What falls below 0.9 is a sweep
// whose times follow something other than size: noise around a latency (NetPIPE's 1 B–48 KiB
// segment, r² 0.527) or a 17-point osu_latency run with r² 0.000. A slope that leaves more
// than a tenth of the variation to something else is not a rate.
const R2Floor = 0.9

// A slope used as a rate needs minRatePoints observations of minRateSizes distinct sizes: two
// parameters with an interval need n − 2 ≥ 1 residual degrees of freedom, but at one the 95%
// Student t quantile is 12.7 and the interval says nothing (a three-row NetPIPE run gives a
// 0.72 Mbit/s "rate"); at two it is 4.3. Two sizes fix a line through their means exactly and
// test nothing of its form; the third does.
const (
	minRatePoints = 4
	minRateSizes  = 3
)

// fixedSmallBytes is the size below which a transfer counts as a small message when no
// point-to-point sweep measures the half-performance length n½ (halfPerformanceBytes): 64 KiB.
// It lies above every n½ of the sweeps the project holds (12 KiB for NetPIPE over Open MPI
// loopback: α 3.4 µs, 1/β 3.6 GB/s) and above that of MPI over Ethernet in general (α·rate/8:
// 50 µs at 1 Gbit/s gives 6 KiB, 25 µs at 10 Gbit/s 31 KiB), so that what is left is bandwidth-
// dominated.
const fixedSmallBytes = 64 << 10

// halfPerformanceBytes is Hockney's half-performance length n½ = α/β of a line T = α + β·m:
// the size at which latency is half the time. Below it a transfer's time is mostly latency,
// and it says little about the rate: such rows are "small messages", left out of every rate
// and asymmetry fit. It is 0 when α ≤ 0 (the fit gives no time to latency, as on the committed
// TCP sweeps, where slow start makes the line's intercept negative), and +Inf when β ≤ 0 (no
// time grows with size).
func halfPerformanceBytes(alpha, beta float64) float64 {
	switch {
	case !(alpha > 0):
		return 0
	case !(beta > 0):
		return math.Inf(1)
	}
	return alpha / beta
}

// unboundedReason says why an estimate's interval makes it unusable whatever it measures: a
// value or bound that is not finite (a regime seen at one point, a capacity never reached, an
// interval [0, ∞]); empty when it is usable.
func unboundedReason(p Param) string {
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case !finite(p.Value):
		return fmt.Sprintf("the estimate is %g", p.Value)
	case !finite(p.CILow) || !finite(p.CIHigh):
		return fmt.Sprintf("%.4g with the 95%% interval [%g, %g] from %d observations: the data do not bound it", p.Value, p.CILow, p.CIHigh, p.N)
	}
	return ""
}

// slopeReason says why a fitted per-byte time β (s/B) cannot be used as a rate, or "": its
// interval is not finite, it stands on fewer than minRatePoints observations of minRateSizes
// sizes, it is not positive, its 95% interval reaches zero (an infinite rate is as likely),
// the line explains less than R2Floor of the variance, or its rate 8/β is above the nominal
// rate (aboveLineRate). what and experiment name the fit in the message.
func slopeReason(what string, beta Param, r2 float64, sizes int, nominal float64, experiment string) string {
	if r := unboundedReason(beta); r != "" {
		return fmt.Sprintf("%s from %s: %s", what, experiment, r)
	}
	switch {
	case beta.N < minRatePoints || sizes < minRateSizes:
		return fmt.Sprintf("%s from %s: %d observations of %d message sizes; a rate needs at least %d of %d sizes", what, experiment, beta.N, sizes, minRatePoints, minRateSizes)
	case !(beta.Value > 0):
		return fmt.Sprintf("%s from %s: β = %.4g ns/B is not positive: the times do not grow with the size", what, experiment, beta.Value*1e9)
	case !(beta.CILow > 0):
		return fmt.Sprintf("%s from %s: β's 95%% interval [%.4g, %.4g] ns/B reaches zero, so an infinite rate fits as well (r² %.3f)", what, experiment, beta.CILow*1e9, beta.CIHigh*1e9, r2)
	case r2 < R2Floor:
		return fmt.Sprintf("%s from %s: r² %.3f, below the floor %g: the line leaves %.0f%% of the times' variance to something other than size", what, experiment, r2, R2Floor, (1-r2)*100)
	case aboveLineRate(8/beta.Value, nominal):
		return lineRateReason(what, 8/beta.Value, nominal, experiment)
	}
	return ""
}

// lineRates are the nominal rates of a cluster description that bound fitted rates: the
// fastest NIC and the fastest backbone or uplink (0 when the cluster has none). A fitted rate
// above the fastest resource of its kind is impossible for any of them; a per-resource bound
// would need to know which resources a fit's transfers crossed, and the calibration's
// capacities replace those of every resource of the kind at once.
type lineRates struct{ nic, core float64 }

func nominalRates(cl *cluster.Cluster) lineRates {
	var lr lineRates
	for _, r := range cl.Resources() {
		switch r.Kind {
		case cluster.NICOut, cluster.NICIn:
			lr.nic = max(lr.nic, r.RateBps)
		default:
			lr.core = max(lr.core, r.RateBps)
		}
	}
	return lr
}

// nicOf is the nominal rate of node name's NIC, or the fastest NIC when the cluster does not
// know the node.
func (lr lineRates) nicOf(cl *cluster.Cluster, name string) float64 {
	if n, ok := cl.Node(name); ok {
		return n.NICRateBps
	}
	return lr.nic
}

// nominalFallback says what the models use for a resource without a fitted capacity: its
// nominal rate times the efficiency.
func nominalFallback(what string, nominal, efficiency float64) string {
	if nominal <= 0 {
		return fmt.Sprintf("none: the cluster has no %s", strings.TrimPrefix(what, "every "))
	}
	if efficiency == 0 {
		efficiency = contention.DefaultEfficiency
	}
	return fmt.Sprintf("%s: nominal %.4g Gbit/s × efficiency %g", what, nominal/1e9, efficiency)
}

// smallMessageBytes is the size below which a transfer is a small message for the rate and
// asymmetry fits: the largest half-performance length n½ of the calibration's Hockney fits
// (over their classes), or fixedSmallBytes when there is no Hockney fit. from says which.
func smallMessageBytes(fits []HockneyFit) (bytes float64, from string) {
	if len(fits) == 0 {
		return fixedSmallBytes, "no p2p_sweep to measure n½: 64 KiB"
	}
	for _, h := range fits {
		bytes = max(bytes, h.SmallBelowBytes)
	}
	return bytes, fmt.Sprintf("Hockney's half-performance length n½ = α/β, %.4g B", bytes)
}

// withoutSmallPatterns returns the transfers of rows less those of every pattern of the given
// experiments that holds a transfer smaller than small bytes (a pattern is kept or dropped
// whole: dropping some of its transfers would change the contention the rest saw), and the
// number of patterns dropped.
func withoutSmallPatterns(rows []datasets.Transfer, experiments []string, small float64) ([]datasets.Transfer, int) {
	if small <= 0 {
		return rows, 0
	}
	type key struct{ exp, id string }
	drop := map[key]bool{}
	for _, r := range rows {
		if float64(r.Bytes) < small && slices.Contains(experiments, r.Experiment) {
			drop[key{r.Experiment, r.PatternID}] = true
		}
	}
	if len(drop) == 0 {
		return rows, 0
	}
	out := make([]datasets.Transfer, 0, len(rows))
	for _, r := range rows {
		if !drop[key{r.Experiment, r.PatternID}] {
			out = append(out, r)
		}
	}
	return out, len(drop)
}
