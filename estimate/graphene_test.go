package estimate

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/datasets"
)

// TestGrapheneBreaks segments the real graphene ping-pong sweep (the test copy of the
// SimGrid calibration data) and fits Hockney per segment. The data's breakpoints_eth lists the
// MPI protocol limits 1420, 32768, 65536 and 270000 B; the test asserts that the segmentation
// finds breaks near the larger ones and logs everything for the closing note.
func TestGrapheneBreaks(t *testing.T) {
	cl, _ := cluster.LoadNamed("graphene")
	out := filepath.Join(t.TempDir(), "ds")
	src := datasets.Source{Path: "../datasets/testdata/graphene_eth/graphene_eth_PingPong.csv", Src: "graphene-1", Dst: "graphene-2"}
	if _, err := datasets.Ingest(context.Background(), datasets.IngestOptions{Cluster: cl, Sources: []datasets.Source{src}, Out: out, Created: time.Unix(0, 0)}); err != nil {
		t.Fatal(err)
	}
	ds, _ := datasets.Open(out)
	rows, _ := datasets.ReadAll[datasets.RoundTrip](context.Background(), ds, datasets.RoundTripsTable)
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
