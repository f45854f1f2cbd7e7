package estimate

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/datasets"
)

// grapheneRoundTrips ingests the real graphene ping-pong data (the test copy of SimGrid's
// calibration data) and returns its round trips.
func grapheneRoundTrips(t *testing.T) (*cluster.Cluster, []datasets.RoundTrip) {
	t.Helper()
	cl, _ := cluster.LoadNamed("graphene")
	out := filepath.Join(t.TempDir(), "ds")
	src := datasets.Source{Path: "../datasets/testdata/graphene_eth/graphene_eth_PingPong.csv", Src: "graphene-1", Dst: "graphene-2"}
	if _, err := datasets.Ingest(context.Background(), datasets.IngestOptions{Cluster: cl, Sources: []datasets.Source{src}, Out: out, Created: time.Unix(0, 0)}); err != nil {
		t.Fatal(err)
	}
	ds, err := datasets.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := datasets.ReadAll[datasets.RoundTrip](context.Background(), ds, datasets.RoundTripsTable)
	if err != nil {
		t.Fatal(err)
	}
	return cl, rows
}

// TestGrapheneBreaks segments the real graphene ping-pong sweep (the test copy of the
// SimGrid calibration data) and fits Hockney per segment. The data's breakpoints_eth lists the
// MPI protocol limits 1420, 32768, 65536 and 270000 B; the test asserts that the segmentation
// finds breaks near the larger ones and logs everything for the closing note.
func TestGrapheneBreaks(t *testing.T) {
	_, rows := grapheneRoundTrips(t)
	// Median per size: the real data has heavy outliers (worst CI 448% of the mean).
	bySize := map[int64][]float64{}
	for _, r := range rows {
		bySize[r.BytesOut] = append(bySize[r.BytesOut], r.Seconds)
	}
	var sizes []int64
	for m := range bySize {
		sizes = append(sizes, m)
	}
	slices.Sort(sizes)
	x, y := make([]float64, len(sizes)), make([]float64, len(sizes))
	for i, m := range sizes {
		v := bySize[m]
		slices.Sort(v)
		x[i], y[i] = float64(m), v[len(v)/2]
	}
	seg, err := Breakpoints(x, y, 10, 8)
	if err != nil {
		t.Fatal(err)
	}
	start := 0
	var found []int64
	for i, end := range append(append([]int(nil), seg.Breaks...), len(x)-1) {
		c := seg.Segments[i]
		// Round trip = twice a one-way message: α = a/2, β = b/2.
		t.Logf("segment %d: %7.0f–%7.0f B: α = %.3g s, β = %.3g s/B (%.0f Mbit/s)", i, x[start], x[end], c[0]/2, c[1]/2, 8/(c[1]/2)/1e6)
		if end < len(x)-1 {
			found = append(found, int64(x[end]))
		}
		start = end + 1
	}
	t.Logf("breaks after %v B (BIC over 0…8 breaks: %v)", found, seg.BIC)
	near := func(limit int64) bool {
		for _, b := range found {
			if float64(b) > 0.8*float64(limit) && float64(b) < 1.25*float64(limit) {
				return true
			}
		}
		return false
	}
	if !near(65536) && !near(270000) {
		t.Errorf("no break near the 64 KiB or 270000 B protocol limits: %v", found)
	}
}

// TestGrapheneSegmentedHockney fits Hockney piecewise on the real graphene ping-pong data
// (one-way time = half the round trip): with breaks found by Bai–Perron and with the
// breaks of the data's breakpoints_eth file (1420, 32768, 65536, 270000 B: the MPI protocol
// limits SimGrid's calibration found). The segmented fit must leave far smaller relative
// residuals than one line, and β of the large-message segment must be a positive rate close
// in both fits. Everything is logged for the closing note.
func TestGrapheneSegmentedHockney(t *testing.T) {
	cl, rts := grapheneRoundTrips(t)
	found, err := FitHockneySegmentsAll(cl, nil, rts, nil)
	if err != nil {
		t.Fatal(err)
	}
	given, err := FitHockneySegmentsAll(cl, nil, rts, []float64{1420, 32768, 65536, 270000})
	if err != nil {
		t.Fatal(err)
	}
	for _, sh := range []SegmentedHockney{found[0], given[0]} {
		t.Logf("%s breaks (%s, from %s): %v; max |rel. residual| %.0f%% segmented, %.0f%% one line",
			sh.Class, sh.BreaksFrom, sh.Source, sh.Breaks, 100*sh.MaxAbsRelResidual, 100*sh.SingleLineMaxAbsRelResidual)
		for _, s := range sh.Segments {
			t.Logf("  %8.0f–%8.0f B: α = %.4g s [%.3g, %.3g], β = %.4g s/B (%.0f Mbit/s) %v", s.FromBytes, s.ToBytes,
				s.Alpha.Value, s.Alpha.CILow, s.Alpha.CIHigh, s.Beta.Value, 8/s.Beta.Value/1e6, s.Flags)
		}
		if !(sh.MaxAbsRelResidual < sh.SingleLineMaxAbsRelResidual) {
			t.Errorf("%s: segmented residual %.3g not below one line's %.3g", sh.BreaksFrom, sh.MaxAbsRelResidual, sh.SingleLineMaxAbsRelResidual)
		}
	}
	// The automatic segmentation finds the protocol switches near 64 KiB and 270000 B (it
	// also cuts the noisy range between them: those segments are flagged, not hidden).
	near := func(limit float64) bool {
		return slices.ContainsFunc(found[0].Breaks, func(b float64) bool { return b > 0.8*limit && b < 1.25*limit })
	}
	if !near(65536) || !near(270000) {
		t.Errorf("breaks %v: none near 65536 or 270000 B", found[0].Breaks)
	}
	// At the file's breaks every segment is physical, and the large-message rate agrees
	// with the automatic fit's last segment within 20%.
	for _, s := range given[0].Segments {
		if len(s.Flags) > 0 {
			t.Errorf("segment %g–%g B at the file's breaks: %v", s.FromBytes, s.ToBytes, s.Flags)
		}
	}
	last := func(sh SegmentedHockney) HockneySegment { return sh.Segments[len(sh.Segments)-1] }
	bf, bg := last(found[0]).Beta.Value, last(given[0]).Beta.Value
	if !(bf > 0 && bg > 0) || math.Abs(bf-bg)/bg > 0.2 {
		t.Errorf("large-message β: %.4g s/B found, %.4g s/B at the file's breaks", bf, bg)
	}
}
