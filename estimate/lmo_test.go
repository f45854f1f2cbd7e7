package estimate

import (
	"context"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/simulate"
)

// lmoCampaign draws the LMO experiments of the default truth on graphene (8 nodes).
func lmoCampaign(t testing.TB, seed uint64, noise float64, reps int) (*simulate.Truth, *simulate.Generated) {
	return lmoCampaignWith(t, seed, noise, reps, false)
}

// lmoCampaignWith draws the LMO experiments, and the scatter and gather sweeps when asked.
func lmoCampaignWith(t testing.TB, seed uint64, noise float64, reps int, sweeps bool) (*simulate.Truth, *simulate.Generated) {
	cl, err := cluster.LoadNamed("graphene")
	if err != nil {
		t.Fatal(err)
	}
	tr := simulate.DefaultTruth(cl, seed)
	tr.Hockney, tr.L, tr.Contention = nil, nil, nil
	if !sweeps {
		tr.Scatter, tr.Gather = nil, nil
	}
	tr.Noise, tr.Reps = noise, reps
	g, err := simulate.Generate(context.Background(), cl, tr)
	if err != nil {
		t.Fatal(err)
	}
	return tr, g
}

func TestLMOExactWithoutNoise(t *testing.T) {
	tr, g := lmoCampaign(t, 1, 0, 1)
	fit, err := FitLMO(g.RoundTrips, g.OneToTwo)
	if err != nil {
		t.Fatal(err)
	}
	for i, nd := range tr.LMO.Nodes {
		f := fit.Nodes[i]
		if f.Name != nd.Name || !scalar.EqualWithinRel(f.C.Value, nd.C, 1e-9) || !scalar.EqualWithinRel(f.T.Value, nd.T, 1e-6) {
			t.Errorf("node %s: C %g (true %g), t %g (true %g)", nd.Name, f.C.Value, nd.C, f.T.Value, nd.T)
		}
		if f.CTripletSD > 1e-12 {
			t.Errorf("node %s: triplets disagree by %g without noise", nd.Name, f.CTripletSD)
		}
	}
	for k, l := range tr.LMO.Links {
		if f := fit.Links[k]; f.I != l.I || f.J != l.J || !scalar.EqualWithinRel(f.RateBps.Value, l.RateBps, 1e-6) {
			t.Errorf("link %s–%s: %g bit/s, true %g", l.I, l.J, f.RateBps.Value, l.RateBps)
		}
	}
}

// TestLMOClosedFormEqualsTriplets proves the O(n²) closed form of C_i and of the triplet spread
// equal to the direct O(n³) computation over every triplet.
func TestLMOClosedFormEqualsTriplets(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	const n = 12
	var rts []datasets.RoundTrip
	tm := [n][n]float64{}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			v := 1e-4 * (1 + rng.Float64())
			tm[i][j], tm[j][i] = v, v
			rts = append(rts, datasets.RoundTrip{I: name(i), J: name(j), Seconds: v})
		}
	}
	// Minimal one-to-two data so that the fit runs: message round trips and one experiment per root.
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			rts = append(rts, datasets.RoundTrip{I: name(i), J: name(j), BytesOut: 1000, Seconds: 1})
		}
	}
	var o2t []datasets.OneToTwo
	for i := 0; i < n; i++ {
		o2t = append(o2t, datasets.OneToTwo{Root: name(i), J: name((i + 1) % n), K: name((i + 2) % n), Bytes: 1000, Seconds: 1.2})
	}
	fit, err := FitLMO(rts, o2t)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		var vals []float64
		for j := 0; j < n; j++ {
			for k := j + 1; k < n; k++ {
				if j != i && k != i {
					vals = append(vals, (tm[i][j]+tm[i][k]-tm[j][k])/4)
				}
			}
		}
		mean, ss := 0.0, 0.0
		for _, v := range vals {
			mean += v
		}
		mean /= float64(len(vals))
		for _, v := range vals {
			ss += (v - mean) * (v - mean)
		}
		sd := math.Sqrt(ss / float64(len(vals)-1))
		if f := fit.Nodes[i]; !scalar.EqualWithinRel(f.C.Value, mean, 1e-12) || !scalar.EqualWithinRel(f.CTripletSD, sd, 1e-8) {
			t.Errorf("node %d: closed form C %g, spread %g; triplets %g, %g", i, f.C.Value, f.CTripletSD, mean, sd)
		}
	}
}

func name(i int) string { return string(rune('a' + i)) }

// TestLMORecovery: over 200 seeded campaigns (2% noise, 10 repetitions) the intervals of C, t
// and the rates cover the truth in at least 90% of the cases.
func TestLMORecovery(t *testing.T) {
	const trials = 200
	var cCov, tCov, rCov, cN, tN, rN int
	for s := uint64(0); s < trials; s++ {
		tr, g := lmoCampaign(t, 500+s, 0.02, 10)
		fit, err := FitLMO(g.RoundTrips, g.OneToTwo)
		if err != nil {
			t.Fatal(err)
		}
		for i, nd := range tr.LMO.Nodes {
			cN++
			tN++
			if fit.Nodes[i].C.Covers(nd.C) {
				cCov++
			}
			if fit.Nodes[i].T.Covers(nd.T) {
				tCov++
			}
		}
		for k, l := range tr.LMO.Links {
			rN++
			if fit.Links[k].RateBps.Covers(l.RateBps) {
				rCov++
			}
		}
	}
	t.Logf("coverage: C %d/%d, t %d/%d, rates %d/%d", cCov, cN, tCov, tN, rCov, rN)
	for _, c := range [][2]int{{cCov, cN}, {tCov, tN}, {rCov, rN}} {
		if float64(c[0]) < 0.9*float64(c[1]) {
			t.Errorf("coverage %d of %d below 90%%", c[0], c[1])
		}
	}
}

func TestLMOMissingData(t *testing.T) {
	rts := []datasets.RoundTrip{{I: "a", J: "b", Seconds: 1}, {I: "a", J: "c", Seconds: 1}, {I: "b", J: "d", Seconds: 1}}
	if _, err := FitLMO(rts, nil); err == nil {
		t.Error("a missing triplet round trip gave no error")
	}
}

// BenchmarkLMO1000 fits 1,000 nodes: every pair's empty and 32 KiB round trips (3 repetitions)
// and 4 one-to-two experiments per root.
func BenchmarkLMO1000(b *testing.B) {
	const n, reps = 1000, 3
	rng := rand.New(rand.NewPCG(1, 2))
	c, tt := make([]float64, n), make([]float64, n)
	names := make([]string, n)
	for i := range c {
		c[i], tt[i] = 20e-6+40e-6*rng.Float64(), 0.5e-9+1.5e-9*rng.Float64()
		names[i] = "n" + strconv.Itoa(i)
	}
	const m = 32 << 10
	inv := 8 / 0.94e9
	rts := make([]datasets.RoundTrip, 0, n*(n-1)*reps)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			for r := 0; r < reps; r++ {
				f := 1 + 0.01*rng.NormFloat64()
				rts = append(rts, datasets.RoundTrip{I: names[i], J: names[j], Rep: int64(r), Seconds: (2*c[i] + 2*c[j]) * f},
					datasets.RoundTrip{I: names[i], J: names[j], BytesOut: m, Rep: int64(r), Seconds: (2*c[i] + 2*c[j] + (tt[i]+tt[j]+inv)*m) * f})
			}
		}
	}
	var o2t []datasets.OneToTwo
	for i := 0; i < n; i++ {
		for e := 1; e <= 4; e++ {
			j, k := (i+e)%n, (i+2*e+1)%n
			leg := func(r int) float64 { return 2*c[r] + tt[r]*m + inv*m }
			for r := 0; r < reps; r++ {
				o2t = append(o2t, datasets.OneToTwo{Root: names[i], J: names[j], K: names[k], Bytes: m, Rep: int64(r),
					Seconds: (4*c[i] + 2*tt[i]*m + math.Max(leg(j), leg(k))) * (1 + 0.01*rng.NormFloat64())})
			}
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := FitLMO(rts, o2t); err != nil {
			b.Fatal(err)
		}
	}
}

// TestLMONICBound fits round trips and one-to-two experiments as a network whose senders'
// NICs bound every transfer measures them: a round trip with M bytes takes 4C + M/R, a
// one-to-two experiment 6C + 2M/R (the root's NIC sends both messages). The closed forms
// give t_i = 1/R and 1/β_ij = −1/R exactly (the model's double count); the fit keeps them,
// flags every link and warns instead of refusing the model.
func TestLMONICBound(t *testing.T) {
	const c, m, r = 50e-6, 65536.0, 12.5e6 // 50 µs, 64 KiB, 100 Mbit/s in bytes/s
	nodes := []string{"a", "b", "c", "d"}
	var rts []datasets.RoundTrip
	var ots []datasets.OneToTwo
	for rep := range int64(3) {
		jitter := 1 + 1e-4*float64(rep-1) // tiny spread, so that intervals exist
		for i := range nodes {
			for j := i + 1; j < len(nodes); j++ {
				rts = append(rts,
					datasets.RoundTrip{I: nodes[i], J: nodes[j], Rep: rep, Seconds: 4 * c * jitter},
					datasets.RoundTrip{I: nodes[i], J: nodes[j], BytesOut: m, Rep: rep, Seconds: (4*c + m/r) * jitter})
			}
		}
		for root := range nodes {
			for j := range nodes {
				for k := j + 1; k < len(nodes); k++ {
					if j != root && k != root {
						ots = append(ots, datasets.OneToTwo{Root: nodes[root], J: nodes[j], K: nodes[k], Bytes: m, Rep: rep, Seconds: (6*c + 2*m/r) * jitter})
					}
				}
			}
		}
	}
	fit, err := FitLMO(rts, ots)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range fit.Nodes {
		if !scalar.EqualWithinRel(n.T.Value, 1/r, 1e-3) || !scalar.EqualWithinRel(n.C.Value, c, 1e-3) {
			t.Errorf("node %s: C %g s, t %g s/B; want %g and 1/R = %g", n.Name, n.C.Value, n.T.Value, c, 1/r)
		}
	}
	for _, l := range fit.Links {
		if !l.NICBound || !scalar.EqualWithinRel(l.InverseRate.Value, -1/r, 1e-3) || !math.IsInf(l.RateBps.Value, 1) {
			t.Errorf("link %s–%s: %+v, want NIC-bound with 1/β = −1/R = %g", l.I, l.J, l, -1/r)
		}
	}
	if w := fit.nicBoundWarning(); !strings.Contains(w, "6 of 6 links") || !strings.Contains(w, "100 Mbit/s") {
		t.Errorf("warning %q", w)
	}
}
