package report

import (
	"fmt"
	"math"
	"regexp"
	"strconv"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/estimate"
	"github.com/commcal/commcal/experiments"
	"github.com/commcal/commcal/rundir"
	"github.com/commcal/commcal/validate"
)

// Threshold measures, as health.json names them.
const (
	MeasureWithin10   = "within_10pct_min" // --fail-below: the share within ±10% must not fall below the limit
	MeasureMeanAbsErr = "mean_abs_err_max" // --fail-above-error: the mean |ε| must not rise above the limit
)

// ThresholdSpec is one accuracy alarm of a run, as given on the command line.
type ThresholdSpec struct {
	Model   string  `json:"model"`
	Measure string  `json:"measure"`
	Limit   float64 `json:"limit"`
}

// ThresholdCheck is one threshold applied to one model's overall held-out accuracy.
type ThresholdCheck struct {
	ThresholdSpec
	// Value is the model's share within ±10% or mean |ε|; nil when it scored no transfer
	// (which fails: missing data never passes an alarm).
	Value *float64 `json:"value"`
	Pass  bool     `json:"pass"`
}

// Finding is a fitted value that cannot be physically right: a negative latency, a rate above
// what the hardware can carry.
type Finding struct {
	Parameter string `json:"parameter"`
	Value     string `json:"value"`
	Why       string `json:"why"`
}

// StoppingStatus is how well one experiment was measured under the stopping rule.
type StoppingStatus struct {
	Table        string  `json:"table"`
	Experiment   string  `json:"experiment"`
	Role         string  `json:"role"` // calibration, held-out, or "" outside the transfers table
	Measurements int     `json:"measurements"`
	Converged    int     `json:"converged"`
	Capped       int     `json:"capped"`
	Unconverged  int     `json:"unconverged"`
	WorstCI      float64 `json:"worst_ci_rel_width"`
	// Status is converged (every measurement met the CI rule), capped (some stopped at the
	// iteration cap) or unconverged (some did neither).
	Status string `json:"status"`
}

// PreviousRun is what changed since the run given with --previous.
type PreviousRun struct {
	Dir      string   `json:"dir"`
	Compared int      `json:"compared_params"`
	Alarms   []string `json:"alarms"`
}

// StartSkew is the largest start skew a measurement recorded (the latest sender's first write
// after the common start), beside the shortest concurrent pattern it could distort.
type StartSkew struct {
	Seconds float64 `json:"seconds"`
	// Shortest is the shortest mean time of a concurrent experiment's transfer, and Experiment
	// that experiment; Share is Seconds/Shortest.
	Shortest   float64 `json:"shortest_concurrent_s"`
	Experiment string  `json:"experiment"`
	Share      float64 `json:"share"`
}

// HealthFormat is the format tag of health.json.
const HealthFormat = "commcal-health/1"

// Health is what a reader must know before trusting a run, the top of its report: the
// accuracy alarms and whether they pass, the estimators skipped and why, the fits that cannot
// be physically right, how well each experiment met the stopping rule, the start skew, and
// what changed since the previous run.
type Health struct {
	Format      string             `json:"format"`
	Thresholds  []ThresholdSpec    `json:"thresholds"`
	Checks      []ThresholdCheck   `json:"checks"`
	Skipped     []estimate.Skipped `json:"skipped"`
	Implausible []Finding          `json:"implausible"`
	Stopping    []StoppingStatus   `json:"stopping"`
	// HeldOutMeasurements and HeldOutUnconverged count the held-out measurements and those
	// that met neither the CI rule nor the cap: the measurements the accuracy is scored on.
	HeldOutMeasurements int          `json:"held_out_measurements"`
	HeldOutUnconverged  int          `json:"held_out_unconverged"`
	StartSkew           *StartSkew   `json:"start_skew,omitempty"`
	Previous            *PreviousRun `json:"previous,omitempty"`
}

// Failed counts the threshold checks that failed (the health panel shows it).
func (h *Health) Failed() int {
	n := 0
	for _, c := range h.Checks {
		if !c.Pass {
			n++
		}
	}
	return n
}

// Specs turns the command line's thresholds into the specs health.json records.
func Specs(ths []validate.Threshold) []ThresholdSpec {
	var out []ThresholdSpec
	for _, th := range ths {
		if !math.IsNaN(th.MinWithin10) {
			out = append(out, ThresholdSpec{Model: th.Model, Measure: MeasureWithin10, Limit: th.MinWithin10})
		}
		if !math.IsNaN(th.MaxMeanAbsErr) {
			out = append(out, ThresholdSpec{Model: th.Model, Measure: MeasureMeanAbsErr, Limit: th.MaxMeanAbsErr})
		}
	}
	return out
}

// threshold is the validate threshold of a spec, for one model.
func (s ThresholdSpec) threshold(model string) validate.Threshold {
	th := validate.Threshold{Model: model, MinWithin10: math.NaN(), MaxMeanAbsErr: math.NaN()}
	if s.Measure == MeasureWithin10 {
		th.MinWithin10 = s.Limit
	} else {
		th.MaxMeanAbsErr = s.Limit
	}
	return th
}

// PreviousRun summarises a comparison of the previous run (first) with this one for the health
// panel.
func (c *Comparison) PreviousRun() *PreviousRun {
	return &PreviousRun{Dir: c.Runs[0], Compared: len(c.Params), Alarms: c.Alarms()}
}

// checkHealth computes a run's health from what it measured, fitted and scored, against the
// thresholds it was given and with what changed since the previous run.
func checkHealth(c *Contents) *Health {
	cl, s, cal, acc := c.Dataset.Cluster, c.Summary, c.Calibration, c.Accuracy
	h := &Health{Format: HealthFormat, Thresholds: c.Thresholds, Previous: c.Previous, Checks: []ThresholdCheck{}, Skipped: []estimate.Skipped{},
		Implausible: []Finding{}, Stopping: []StoppingStatus{}}
	if h.Thresholds == nil {
		h.Thresholds = []ThresholdSpec{}
	}
	for _, spec := range h.Thresholds {
		for _, model := range contention.Models() {
			name := model.Name()
			if spec.Model != validate.AllModels && spec.Model != name {
				continue
			}
			check := ThresholdCheck{ThresholdSpec: spec}
			if acc != nil {
				if ma, ok := acc.Overall.Model(name); ok && ma.Transfers > 0 {
					v := ma.Within10
					if spec.Measure == MeasureMeanAbsErr {
						v = ma.MeanAbsErr
					}
					check.Value = &v
				}
				check.Pass = len(acc.Check([]validate.Threshold{spec.threshold(name)})) == 0
			}
			check.Model = name
			h.Checks = append(h.Checks, check)
		}
	}
	if cal != nil {
		h.Skipped = append(h.Skipped, cal.Skipped...)
		h.Implausible = implausible(cl, cal)
	}
	if s != nil {
		for _, e := range s.Experiments {
			st := StoppingStatus{Table: e.Table, Experiment: e.Experiment, Measurements: e.Measurements, Converged: e.Converged,
				Capped: e.Capped, Unconverged: e.Unconverged, WorstCI: e.MaxRelWidth, Status: estimate.Converged}
			switch {
			case e.Unconverged > 0:
				st.Status = estimate.Unconverged
			case e.Capped > 0:
				st.Status = estimate.Capped
			}
			if role, ok := experiments.RoleOf(e.Experiment); ok && e.Table == "transfers" {
				st.Role = "calibration"
				if role == experiments.HeldOut {
					st.Role = "held-out"
					h.HeldOutMeasurements += e.Measurements
					h.HeldOutUnconverged += e.Unconverged
				}
			}
			h.Stopping = append(h.Stopping, st)
		}
		h.StartSkew = startSkew(c.Dataset.Manifest, s)
	}
	return h
}

// skewNote is how `commcal measure` records the largest start skew in a dataset's notes.
var skewNote = regexp.MustCompile(`largest start skew ([0-9.eE+-]+) ms`)

// startSkew reads the largest start skew from the dataset's measurement record, else from the
// note `commcal measure` writes it in (datasets of other origins have neither), and sets it
// beside the shortest concurrent transfer.
func startSkew(m *datasets.Manifest, s *rundir.Summary) *StartSkew {
	if m == nil {
		return nil
	}
	skews := []float64{}
	if mi := m.Measured; mi != nil && mi.Repetitions > 0 {
		skews = append(skews, mi.SkewMaxS)
	}
	for _, note := range m.Notes {
		if sub := skewNote.FindStringSubmatch(note); sub != nil {
			if ms, err := strconv.ParseFloat(sub[1], 64); err == nil {
				skews = append(skews, ms/1e3)
			}
		}
	}
	for _, sec := range skews {
		if !(sec >= 0) || math.IsInf(sec, 0) {
			continue
		}
		sk := &StartSkew{Seconds: sec}
		for _, e := range s.Experiments {
			if e.Table == "transfers" && e.Experiment != experiments.P2PSweep && (sk.Experiment == "" || e.ShortestMean < sk.Shortest) {
				sk.Shortest, sk.Experiment = e.ShortestMean, e.Experiment
			}
		}
		if sk.Shortest > 0 {
			sk.Share = sk.Seconds / sk.Shortest
		}
		return sk
	}
	return nil
}

// nominalRates are the slowest NIC's rate and the slowest backbone cable's or uplink's (0
// for a cluster of one rack), in bits per second, from the cluster description.
func nominalRates(cl *cluster.Cluster) (nic, core float64) {
	for _, r := range cl.Resources() {
		switch r.Kind {
		case cluster.NICIn, cluster.NICOut:
			if nic == 0 || r.RateBps < nic {
				nic = r.RateBps
			}
		default:
			if core == 0 || r.RateBps < core {
				core = r.RateBps
			}
		}
	}
	return nic, core
}

// implausible lists the fitted values that cannot be physically right: negative latencies and
// delays, inverse bandwidths that are not positive, rates above the nominal rate of the
// hardware that carries them (the slowest NIC, or the slowest backbone or uplink), a
// resource saturating before one flow fills it. Values with no finite estimate are not
// judged.
func implausible(cl *cluster.Cluster, cal *estimate.Calibration) []Finding {
	nic, core := nominalRates(cl)
	out := []Finding{}
	add := func(param, value, why string, a ...any) {
		out = append(out, Finding{Parameter: param, Value: value, Why: fmt.Sprintf(why, a...)})
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	mbps := func(v float64) string { return num(v/1e6) + " Mbit/s" }
	above := func(param string, v, nominal float64, what string) {
		if finite(v) && nominal > 0 && v > nominal {
			add(param, mbps(v), "above the nominal rate of the %s (%s)", what, mbps(nominal))
		}
		if finite(v) && v <= 0 {
			add(param, mbps(v), "a rate must be positive")
		}
	}
	for _, hf := range cal.Hockney {
		c := string(hf.Class)
		if a := hf.Alpha.Value; finite(a) && a < 0 {
			add("hockney "+c+" α", num(a*1e6)+" µs", "a latency cannot be negative: the sweep's small messages do not follow α + β·m")
		}
		switch b := hf.Beta.Value; {
		case finite(b) && b <= 0:
			add("hockney "+c+" β", num(b*1e9)+" ns/B", "an inverse bandwidth must be positive")
		case finite(b):
			above("hockney "+c+" 8/β", 8/b, nic, "slowest NIC")
		}
	}
	for _, f := range cal.Fairness {
		above(f.Experiment+" ceiling", f.Ceiling.Value, nic, "slowest NIC")
		nominal, what := nic, "slowest NIC"
		if f.Experiment == experiments.FairInter && core > 0 {
			nominal, what = core, "slowest backbone or uplink"
		}
		above(f.Experiment+" capacity", f.Capacity.Value, nominal, what)
		if k := f.Saturation.Value; finite(k) && k < 1 {
			add(f.Experiment+" saturation k", num(k), "the resource would saturate before one flow fills it (capacity below the per-flow ceiling)")
		}
	}
	if l := cal.LMO; l != nil {
		for _, n := range l.Nodes {
			if v := n.C.Value; finite(v) && v < 0 {
				add("lmo "+n.Name+" C", num(v*1e6)+" µs", "a fixed delay cannot be negative")
			}
			if v := n.T.Value; finite(v) && v < 0 {
				add("lmo "+n.Name+" t", num(v*1e9)+" ns/B", "a per-byte delay cannot be negative")
			}
		}
		for _, ln := range l.Links {
			if !ln.NICBound { // a NIC-bound link's rate is unbounded by construction (the calibration warns)
				above("lmo "+ln.I+"–"+ln.J+" rate", ln.RateBps.Value, nic, "slowest NIC")
			}
		}
	}
	if p := cal.Penalties; p != nil && finite(p.Alpha) && p.Alpha <= 0 {
		add("penalty α", num(p.Alpha*1e9)+" ns/B", "an inverse bandwidth must be positive")
	}
	return out
}
