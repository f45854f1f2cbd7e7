package estimate

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/experiments"
)

// The ground truth of oneSwitchCampaign: every transfer alone on its path runs at 9.4 Gbit/s
// (TCP's goodput on 10 GbE) after a 25 µs latency; a node that sends and receives at once
// slows both directions to 0.8 of that, about what the real exchanges of
// ../shared/data/saturation show (miriel: 4 MB in 8.2 ms each way, against 5.3–8 ms one way).
const (
	truthRate     = 9.4e9
	truthLatency  = 25e-6
	truthExchange = 0.8
	truthBytes    = 4_000_000 // the saturation test's message
)

// oneSwitchCampaign draws what a real 10 GbE cluster's calibration gives on one-switch-10g: a
// point-to-point sweep n1→n5 (1 KiB to 16 MiB), then the saturation test's designs, 4 MB
// each: k = 1…4 disjoint pairs ni→n(i+4) labelled pairsAs (fair_inter, as k disjoint
// sender→receiver pairs are, or mislabelled fair_intra), the same pairs exchanging
// (exchange_calibration), and directed cycles of four nodes n1→n5→n2→n6→n1 (k = 2) and with
// n3→n7→n4→n8→n3 beside it (k = 4) (cycle_calibration); ten repetitions each with 1% log-normal
// noise per transfer. Times follow the truth's constants.
func oneSwitchCampaign(t *testing.T, pairsAs string) (*cluster.Cluster, []datasets.Transfer) {
	return switchCampaign(t, pairsAs, truthExchange, truthExchange, false)
}

// switchCampaign is oneSwitchCampaign with the exchanges' transfers at exchange × the one-way
// rate and the cycles' at cycle ×; nightly labels them as a nightly catalogue holds them: the
// exchange of k = 1 and the cycle of k = 2 as calibration, the others as their held-out twins
// (exchange, cycle).
func switchCampaign(t *testing.T, pairsAs string, exchange, cycle float64, nightly bool) (*cluster.Cluster, []datasets.Transfer) {
	t.Helper()
	cl, err := cluster.Load("testdata/one-switch-10g.toml")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(35, 2))
	var rows []datasets.Transfer
	add := func(exp, id string, flows []contention.Flow, rate float64) {
		for rep := range 10 {
			for i, f := range flows {
				tm := (truthLatency + 8*f.Bytes/rate) * math.Exp(0.01*rng.NormFloat64())
				rows = append(rows, datasets.Transfer{Cluster: cl.Name(), Experiment: exp, PatternID: id, Rep: int64(rep), FlowID: int64(i),
					Src: f.Src, Dst: f.Dst, Bytes: int64(f.Bytes), TEnd: tm})
			}
		}
	}
	label := func(calibration, heldOut string, first bool) string {
		if nightly && !first {
			return heldOut
		}
		return calibration
	}
	node := func(i int) string { return fmt.Sprintf("n%d", i) }
	for size := int64(1 << 10); size <= 16<<20; size *= 4 {
		add(experiments.P2PSweep, experiments.PairID("n1", "n5", size), []contention.Flow{{Src: "n1", Dst: "n5", Bytes: float64(size)}}, truthRate)
	}
	for k := 1; k <= 4; k++ {
		var pairs, exchanges []contention.Flow
		for i := 1; i <= k; i++ {
			pairs = append(pairs, contention.Flow{Src: node(i), Dst: node(i + 4), Bytes: truthBytes})
			exchanges = append(exchanges, contention.Flow{Src: node(i), Dst: node(i + 4), Bytes: truthBytes}, contention.Flow{Src: node(i + 4), Dst: node(i), Bytes: truthBytes})
		}
		add(pairsAs, fmt.Sprintf("k%d", k), pairs, truthRate)
		add(label(experiments.ExchangeCalibration, experiments.Exchange, k == 1), fmt.Sprintf("k%d", k), exchanges, exchange*truthRate)
	}
	var cycles []contention.Flow
	for _, c := range [][4]int{{1, 5, 2, 6}, {3, 7, 4, 8}} {
		for j := range c {
			cycles = append(cycles, contention.Flow{Src: node(c[j]), Dst: node(c[(j+1)%4]), Bytes: truthBytes})
		}
		add(label(experiments.CycleCalibration, experiments.Cycle, len(cycles) == 4), fmt.Sprintf("k%d", len(cycles)/2), cycles, cycle*truthRate)
	}
	return cl, rows
}

// learnedOf is the calibration's fit of a learned model, failing the test where it has none.
func learnedOf(t *testing.T, c *Calibration, model string) *LearnedFit {
	t.Helper()
	for _, f := range c.Learned {
		if f.Model == model {
			return f
		}
	}
	t.Fatalf("%s not calibrated; skipped %+v", model, c.Skipped)
	return nil
}

// notIdentified is the calibration's record of a parameter it left out, nil if it has none.
func notIdentified(c *Calibration, param string) *Unidentified {
	for i, u := range c.NotIdentified {
		if u.Parameter == param {
			return &c.NotIdentified[i]
		}
	}
	return nil
}

// capacitiesWithin checks that no capacity a learned model predicts with, nor its ceiling,
// lies above its resource's line rate (RateMargin included): the model's own NIC and backbone
// capacities where it has them, else the network's.
func capacitiesWithin(t *testing.T, cl *cluster.Cluster, c *Calibration) {
	t.Helper()
	net, err := c.Params.Network(cl)
	if err != nil {
		t.Fatal(err)
	}
	for name, lp := range c.Params.Learned {
		for i, r := range cl.Resources() {
			capacity := net.Capacity[i]
			if isNIC(r.Kind) && lp.NICBps > 0 {
				capacity = lp.NICBps
			} else if isCore(r.Kind) && lp.BackboneBps > 0 {
				capacity = lp.BackboneBps
			}
			if aboveLineRate(capacity, r.RateBps) {
				t.Errorf("%s: %s at %.4g Gbit/s, above its line rate %.4g Gbit/s", name, r.Name(), capacity/1e9, r.RateBps/1e9)
			}
		}
		if aboveLineRate(lp.CeilingBps, 10e9) {
			t.Errorf("%s: ceiling %.4g Gbit/s above the 10 Gbit/s line rate", name, lp.CeilingBps/1e9)
		}
	}
}

// The default model calibrates from what a real 10 GbE cluster's saturation test and sweep
// hold — disjoint pairs, same-peer exchanges, directed cycles, no pattern loading a NIC
// direction with two transfers — rather than being skipped for want of fair_intra: the NIC
// capacity is left out as not identified (the nominal rate × efficiency stands in), no
// capacity lies above its line rate, and the calibration patterns are predicted within 4% of
// the truth (within 1.5% on average: the noise is 1%). The parameters no pattern identifies
// (a, b, c, ρ, α) are left out too. The slowdown of the exchanges and cycles, both 0.8 here,
// is carried by c₁ (which prices the queue an exchange's reverse transfer holds, not a
// cycle's) or τ (one transfer into each sender or out of each receiver, in both): here τ, c₁
// then left out in a region where it changes nothing.
func TestLearnedRealClusterDesigns(t *testing.T) {
	cl, rows := oneSwitchCampaign(t, experiments.FairInter)
	c, err := Calibrate(context.Background(), cl, Inputs{Transfers: rows}, contention.DefaultParams(), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range c.Skipped {
		if strings.HasPrefix(s.Estimator, "learned:") {
			t.Errorf("%s skipped: %s", s.Estimator, s.Reason)
		}
	}
	fit := learnedOf(t, c, contention.DefaultModel)
	if fit.NIC != nil {
		t.Errorf("NIC capacity reported as fitted: %+v", fit.NIC)
	}
	u := notIdentified(c, "learned/ackpath-alpha/nic_bps")
	if u == nil || !strings.Contains(u.Reason, "no experiment loads the NIC with two flows") || !strings.Contains(u.Fallback, "9.4 Gbit/s") {
		t.Errorf("NIC capacity left out as %+v; want not identified, the nominal 9.4 Gbit/s in its place", u)
	}
	for _, p := range []string{"ack_in", "ack_out", "ack_full", "ack_relief", "alpha"} {
		if notIdentified(c, "learned/ackpath-alpha/"+p) == nil {
			t.Errorf("%s not left out; estimates %+v", p, fit.Estimates())
		}
	}
	if (fit.AckLone == nil && fit.AckRamp == nil) || fit.Ceiling == nil || math.Abs(fit.Ceiling.Value/truthRate-1) > 0.01 {
		t.Errorf("c₁ %+v, τ %+v, ceiling %+v (truth %g)", fit.AckLone, fit.AckRamp, fit.Ceiling, truthRate)
	}
	for _, e := range fit.Estimates() {
		if !bounded(e.Param) {
			t.Errorf("%s reported with the interval [%g, %g]", e.Name, e.CILow, e.CIHigh)
		}
		if notIdentified(c, "learned/ackpath-alpha/"+e.Name) != nil {
			t.Errorf("%s both reported and left out", e.Name)
		}
	}
	capacitiesWithin(t, cl, c)

	net, err := c.Params.Network(cl)
	if err != nil {
		t.Fatal(err)
	}
	pats, err := datasets.MeasuredPatterns(rows, experiments.ContentionCalibration())
	if err != nil {
		t.Fatal(err)
	}
	sum, n := 0.0, 0
	for _, p := range pats {
		pred, err := contention.AckPathAlpha.Predict(context.Background(), net, p.Flows)
		if err != nil {
			t.Fatal(err)
		}
		for i, f := range p.Flows {
			want := truthLatency + 8*f.Bytes/truthRate
			if p.Experiment != experiments.FairInter {
				want = truthLatency + 8*f.Bytes/(truthExchange*truthRate)
			}
			e := math.Abs(pred.Times[i]/want - 1)
			sum, n = sum+e, n+1
			if e > 0.04 {
				t.Errorf("%s/%s transfer %d: predicted %.4g ms, truth %.4g ms", p.Experiment, p.ID, i, pred.Times[i]*1e3, want*1e3)
			}
		}
	}
	if sum/float64(n) > 0.015 {
		t.Errorf("mean error %.3g%% over %d transfers", 100*sum/float64(n), n)
	}
	// Every learned model calibrates, each within its line rates; the surface keeps one cell
	// of the two the exchanges load (its transfers' times depend on the smaller only).
	for _, m := range contention.LearnedNames() {
		learnedOf(t, c, m)
	}
	if s := learnedOf(t, c, "surface"); len(s.Surface) != 1 || notIdentified(c, "learned/surface/surface:nic-out") == nil {
		t.Errorf("surface cells %+v; left out %+v", s.Surface, c.NotIdentified)
	}
}

// The same disjoint pairs labelled fair_intra, which promises k transfers through one NIC, do
// not make a NIC capacity: the pairs share no resource (their structure, not their label,
// decides), so the NIC is left out as not identified, where a fit assuming one shared bottleneck
// put it at 59.7 Gbit/s for a 10 GbE NIC.
func TestLearnedMislabelledPairs(t *testing.T) {
	cl, rows := oneSwitchCampaign(t, experiments.FairIntra)
	c, err := Calibrate(context.Background(), cl, Inputs{Transfers: rows}, contention.DefaultParams(), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range contention.LearnedNames() {
		fit := learnedOf(t, c, m)
		if fit.NIC != nil {
			t.Errorf("%s: NIC capacity %+v from disjoint pairs", m, fit.NIC)
		}
		if u := notIdentified(c, "learned/"+m+"/nic_bps"); u == nil || !strings.Contains(u.Reason, "no experiment loads the NIC with two flows") {
			t.Errorf("%s: NIC capacity left out as %+v", m, u)
		}
	}
	capacitiesWithin(t, cl, c)
}

// A NIC capacity fitted above the line rate is refused: the cluster description says 10 GbE,
// but its NICs carry 23.5 Gbit/s shared (k = 3, 4 transfers from n1 to n2; one transfer alone
// still at 9.4 Gbit/s, its ceiling). The fit's 23.5 Gbit/s is left out with the numbers and
// the experiment, a warning says so, and the model uses the nominal rate × efficiency.
func TestLearnedNICAboveLineRate(t *testing.T) {
	cl, rows := oneSwitchCampaign(t, experiments.FairInter)
	rng := rand.New(rand.NewPCG(35, 3))
	const shared = 23.5e9
	for k := 1; k <= 4; k++ {
		rate := min(truthRate, shared/float64(k))
		for rep := range 10 {
			for i := range k {
				tm := (truthLatency + 8*truthBytes/rate) * math.Exp(0.01*rng.NormFloat64())
				rows = append(rows, datasets.Transfer{Cluster: cl.Name(), Experiment: experiments.FairIntra, PatternID: fmt.Sprintf("k%d", k),
					Rep: int64(rep), FlowID: int64(i), Src: "n1", Dst: "n2", Bytes: truthBytes, TEnd: tm})
			}
		}
	}
	c, err := Calibrate(context.Background(), cl, Inputs{Transfers: rows}, contention.DefaultParams(), false)
	if err != nil {
		t.Fatal(err)
	}
	fit := learnedOf(t, c, contention.DefaultModel)
	u := notIdentified(c, "learned/ackpath-alpha/nic_bps")
	if fit.NIC != nil || u == nil || !strings.HasPrefix(u.Reason, "refused: NIC capacity fitted at 23.") ||
		!strings.Contains(u.Reason, "from fair_intra, above the 10 Gbit/s line rate (+5% margin)") || !strings.Contains(u.Fallback, "nominal rate × efficiency, 9.4 Gbit/s") {
		t.Errorf("NIC %+v, left out as %+v", fit.NIC, u)
	}
	if !slices.ContainsFunc(c.Warnings, func(w string) bool {
		return strings.HasPrefix(w, "learned:ackpath-alpha: nic_bps: refused: NIC capacity fitted at 23.")
	}) {
		t.Errorf("no warning of the refusal in %q", c.Warnings)
	}
	capacitiesWithin(t, cl, c)
}

// A cluster whose same-peer exchanges take twice the one-way time and whose cycles 1.4 times
// (each rank sending to one peer and receiving from another), calibrated from what a nightly
// catalogue holds (the k-pair sweep, the exchange of k = 1, the cycle of k = 2): the default
// model predicts the held-out exchanges (k = 2…4) and the cycle of eight nodes within 10% of
// the truth. One coupling factor per NIC cannot hold both; the queue of the exchange's reverse
// transfer (c₁) and the ramp-up both pay (τ) can, and κ, which adds nothing to them on two
// patterns, is left out.
func TestLearnedExchangesAndCyclesApart(t *testing.T) {
	const exchange, cycle = 0.5, 1 / 1.4
	cl, rows := switchCampaign(t, experiments.FairInter, exchange, cycle, true)
	c, err := Calibrate(context.Background(), cl, Inputs{Transfers: rows}, contention.DefaultParams(), false)
	if err != nil {
		t.Fatal(err)
	}
	fit := learnedOf(t, c, contention.DefaultModel)
	if u := notIdentified(c, "learned/"+contention.DefaultModel+"/coupling"); u == nil {
		t.Errorf("κ = %g kept; want it left out", c.Params.Learned[contention.DefaultModel].Coupling)
	}
	net, err := c.Params.Network(cl)
	if err != nil {
		t.Fatal(err)
	}
	pats, err := datasets.MeasuredPatterns(rows, []string{experiments.Exchange, experiments.Cycle, experiments.ExchangeCalibration, experiments.CycleCalibration})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pats {
		pred, err := contention.AckPathAlpha.Predict(context.Background(), net, p.Flows)
		if err != nil {
			t.Fatal(err)
		}
		factor := cycle
		if strings.HasPrefix(p.Experiment, experiments.Exchange) {
			factor = exchange
		}
		for i, f := range p.Flows {
			want := truthLatency + 8*f.Bytes/(factor*truthRate)
			if e := pred.Times[i]/want - 1; math.Abs(e) > 0.1 {
				t.Errorf("%s/%s transfer %d: predicted %.4g ms, truth %.4g ms (%+.1f%%); estimates %+v", p.Experiment, p.ID, i, pred.Times[i]*1e3, want*1e3, 100*e, fit.Estimates())
			}
		}
	}
}
