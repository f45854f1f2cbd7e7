package datasets

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/commcal/commcal/contention"
)

// MeasuredPattern is one pattern of the transfers table with each transfer's mean time over
// its repetitions.
type MeasuredPattern struct {
	Experiment, ID string
	Flows          []contention.Flow
	Mean           []float64 // seconds, per flow
	// SD is each flow's sample standard deviation over its repetitions (0 for one).
	SD   []float64
	Reps []int64
}

// MeasuredPatterns groups the transfers of the given experiments by pattern, in
// (experiment, pattern) order, and averages each transfer over its repetitions. Flow IDs must
// count from 0, and a transfer must keep its nodes and size across repetitions.
func MeasuredPatterns(rows []Transfer, experiments []string) ([]*MeasuredPattern, error) {
	type key struct{ exp, id string }
	byPattern := map[key]*MeasuredPattern{}
	var order []key
	for _, r := range rows {
		if !slices.Contains(experiments, r.Experiment) {
			continue
		}
		k := key{r.Experiment, r.PatternID}
		p, ok := byPattern[k]
		if !ok {
			p = &MeasuredPattern{Experiment: r.Experiment, ID: r.PatternID}
			byPattern[k] = p
			order = append(order, k)
		}
		for int64(len(p.Flows)) <= r.FlowID {
			p.Flows = append(p.Flows, contention.Flow{})
			p.Mean = append(p.Mean, 0)
			p.SD = append(p.SD, 0)
			p.Reps = append(p.Reps, 0)
		}
		f := &p.Flows[r.FlowID]
		if f.Src == "" {
			*f = contention.Flow{Src: r.Src, Dst: r.Dst, Bytes: float64(r.Bytes)}
		} else if f.Src != r.Src || f.Dst != r.Dst || f.Bytes != float64(r.Bytes) {
			return nil, fmt.Errorf("datasets: pattern %s/%s transfer %d: repetition %d is %s→%s %d B, an earlier one %s→%s %.0f B",
				r.Experiment, r.PatternID, r.FlowID, r.Rep, r.Src, r.Dst, r.Bytes, f.Src, f.Dst, f.Bytes)
		}
		// Welford's update: Mean holds the running mean, SD the sum of squared deviations
		// until the end.
		p.Reps[r.FlowID]++
		d := r.Seconds() - p.Mean[r.FlowID]
		p.Mean[r.FlowID] += d / float64(p.Reps[r.FlowID])
		p.SD[r.FlowID] += d * (r.Seconds() - p.Mean[r.FlowID])
	}
	slices.SortFunc(order, func(a, b key) int { return cmp.Or(cmp.Compare(a.exp, b.exp), cmp.Compare(a.id, b.id)) })
	out := make([]*MeasuredPattern, 0, len(order))
	for _, k := range order {
		p := byPattern[k]
		for i := range p.Flows {
			if p.Reps[i] == 0 {
				return nil, fmt.Errorf("datasets: pattern %s/%s has no transfer %d (flow_id must count from 0)", p.Experiment, p.ID, i)
			}
			if n := p.Reps[i]; n > 1 {
				p.SD[i] = math.Sqrt(p.SD[i] / float64(n-1))
			} else {
				p.SD[i] = 0
			}
		}
		out = append(out, p)
	}
	return out, nil
}
