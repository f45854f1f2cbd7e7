package measure

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
)

// DefaultCatalogue is the whole catalogue at a size a 2-core machine measures in minutes:
// sweeps from 1 KiB to 8 MiB, fairness up to 6 flows, bidirectional up to 3 × 3, 6
// static-synchronous graphs of up to 3 communications, and random patterns for
// |N| ∈ {4, 10} × d ∈ {1, 2}.
var DefaultCatalogue = contention.Catalogue{
	SweepSizes: []int64{1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 8 << 20},
	Bytes:      2 << 20, FairnessMaxK: 6, BidirMax: 3,
	StaticSync: contention.StaticSyncDesign{Graphs: 6, MaxEdges: 3},
	Random: []contention.RandomDesign{
		{Nodes: 4, D: 1, Patterns: 4, Sizes: defaultRandomSizes}, {Nodes: 10, D: 1, Patterns: 4, Sizes: defaultRandomSizes},
		{Nodes: 4, D: 2, Patterns: 4, Sizes: defaultRandomSizes}, {Nodes: 10, D: 2, Patterns: 4, Sizes: defaultRandomSizes},
	},
	Seed: 1,
}

var defaultRandomSizes = []int64{1 << 20, 2 << 20, 4 << 20}

// QuickCatalogue is a few patterns of every kind, measured in seconds: for smoke tests and CI.
var QuickCatalogue = contention.Catalogue{SweepSizes: []int64{64 << 10, 1 << 20}, Bytes: 1 << 20, FairnessMaxK: 2, BidirMax: 1,
	Random: []contention.RandomDesign{{Nodes: 4, D: 1, Patterns: 2, Sizes: []int64{1 << 20}}}, Seed: 1}

// Options configures Measure.
type Options struct {
	Cluster   *cluster.Cluster
	Shaping   Shaping
	Bench     BenchOptions
	Catalogue contention.Catalogue
	Out       string
	Force     bool
	Version   string
	Created   time.Time
	Logger    *slog.Logger
	// Progress is told after every pattern how many are done, of how many, and how long the
	// rest should take at the pace so far.
	Progress func(done, total int, left time.Duration)
}

// Measure builds the emulated cluster, measures the catalogue, tears the emulation down and
// writes the dataset (atomically, like ingest). Leftovers of crashed runs are removed first.
// The manifest's notes record every setting that changes TCP's behaviour.
func Measure(ctx context.Context, o Options) (*datasets.Manifest, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if n, err := Cleanup(); err != nil {
		return nil, err
	} else if n > 0 {
		o.Logger.Warn("removed namespaces left by an earlier run", "count", n)
	}
	pats, err := o.Catalogue.Patterns(o.Cluster)
	if err != nil {
		return nil, err
	}
	em, err := Build(ctx, o.Cluster, o.Shaping)
	if err != nil {
		return nil, err
	}
	defer em.Close()
	offloads := em.Offloads()
	headroom, err := checkHeadroom(ctx, em, o.Bench)
	if err != nil {
		return nil, err
	}
	o.Logger.Info("headroom", "check", headroom)
	w, err := datasets.NewDirWriter(o.Out, o.Force, o.Cluster, nil)
	if err != nil {
		return nil, err
	}
	var rows []datasets.Transfer
	var maxSkew float64
	converged := 0
	began := time.Now()
	for k, p := range pats {
		if err := ctx.Err(); err != nil {
			w.Abort()
			return nil, err
		}
		res, err := em.RunPattern(ctx, p.Flows, o.Bench)
		if err != nil {
			w.Abort()
			return nil, fmt.Errorf("measure: %s/%s: %w", p.Experiment, p.ID, err)
		}
		if res.Converged {
			converged++
		}
		for r, rep := range res.Reps {
			t0 := rep.Start.Sub(began).Seconds()
			maxSkew = max(maxSkew, rep.Skew)
			for f, fl := range p.Flows {
				rows = append(rows, datasets.Transfer{Cluster: o.Cluster.Name(), Experiment: p.Experiment, PatternID: p.ID,
					Rep: int64(r), FlowID: int64(f), Src: fl.Src, Dst: fl.Dst, Bytes: int64(fl.Bytes), TStart: t0, TEnd: t0 + rep.Times[f]})
			}
		}
		o.Logger.Info("measured", "experiment", p.Experiment, "pattern", p.ID, "reps", len(res.Reps), "converged", res.Converged)
		if o.Progress != nil {
			el := time.Since(began)
			o.Progress(k+1, len(pats), el/time.Duration(k+1)*time.Duration(len(pats)-k-1))
		}
	}
	if err := em.Close(); err != nil {
		w.Abort()
		return nil, err
	}
	if err := datasets.WriteRows(w, datasets.TransfersTable, "measure", rows); err != nil {
		w.Abort()
		return nil, err
	}
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	m := &datasets.Manifest{Format: datasets.ManifestFormat, Tool: "commcal", Version: o.Version,
		Created: o.Created.UTC().Format(time.RFC3339), Cluster: o.Cluster.Description(),
		Sources: []datasets.SourceInfo{{Path: "measure:" + em.ID, Format: "measured", Table: "transfers", Rows: int64(len(rows)),
			Provenance: "commcal measure on an emulated cluster of network namespaces"}},
		Notes: []string{
			fmt.Sprintf("emulation: Linux %s, veth pairs shaped by tbf at %g × the nominal rates (burst max(64 KiB, 2 ms), queue %g s)",
				strings.TrimSpace(string(kernel)), o.Shaping.Scale, o.Shaping.Latency),
			fmt.Sprintf("tcp: congestion control %q set per socket; socket buffers %s; offloads at the veth defaults (%s)",
				o.Bench.Congestion, bufferNote(o.Bench.SocketBuffer), offloads),
			"headroom: " + headroom,
			fmt.Sprintf("benchmark: connections opened first, common start, last byte timestamped by the receiver; repetitions %d to %d until the 95%% CI is within %g%% of the mean",
				o.Bench.MinReps, o.Bench.Rule.Cap, 100*o.Bench.Rule.MaxRelWidth),
			fmt.Sprintf("patterns: %d measured, %d converged; largest start skew %.3g ms; %.0f s in all", len(pats), converged, 1e3*maxSkew, time.Since(began).Seconds()),
		}}
	if err := w.Commit(m); err != nil {
		return nil, err
	}
	return m, nil
}

func bufferNote(b int) string {
	if b == 0 {
		return "kernel autotuning"
	}
	return fmt.Sprintf("SO_SNDBUF = SO_RCVBUF = %d B", b)
}

// checkHeadroom measures whether the machine keeps up with the emulation's heaviest traffic:
// every node of the first rack sends to a node of another rack (or of its own) at once, the
// most the catalogue loads the shaping. The aggregate rate is compared with what the shaped
// links allow; when the best of three tries carries under 85% of it (headers take 5%) the
// CPU, not the shaping, limits the transfers, and the measurement is refused rather than
// recorded.
func checkHeadroom(ctx context.Context, em *Emulation, bench BenchOptions) (string, error) {
	src := em.Cluster.RackNodes(0)
	var dst []string
	if len(em.Cluster.Racks()) > 1 {
		dst = em.Cluster.RackNodes(1)
	} else { // one rack: pair the nodes up inside it
		half := len(src) / 2
		src, dst = src[:half], src[half:]
	}
	k := min(len(src), len(dst))
	if k == 0 {
		return "not checked (one node)", nil
	}
	const m = 4 << 20
	var flows []contention.Flow
	var expected float64
	for i := 0; i < k; i++ {
		flows = append(flows, contention.Flow{Src: src[i], Dst: dst[i], Bytes: m})
		nd, _ := em.Cluster.Node(src[i])
		expected += em.ShapedRate(nd.NICRateBps)
	}
	if b := em.Cluster.Description().Backbone; b != nil && len(em.Cluster.Racks()) > 1 {
		expected = min(expected, em.ShapedRate(b.RateBps))
	}
	// What the machine can carry is the best of a few tries: one try meets whatever else
	// the machine is doing at that moment (a test run beside it, a cron job), and a
	// transient dip is not a machine too slow for the emulation.
	const tries = 3
	got := 0.0
	for range tries {
		rep, err := em.RunOnce(ctx, flows, bench)
		if err != nil {
			return "", fmt.Errorf("measure: headroom check: %w", err)
		}
		longest := 0.0
		for _, t := range rep.Times {
			longest = max(longest, t)
		}
		got = max(got, float64(k)*m*8/longest)
		if got >= 0.85*expected {
			break
		}
	}
	msg := fmt.Sprintf("%d concurrent transfers carried %.0f Mbit/s of the %.0f Mbit/s the shaping allows (%.0f%%; TCP/IP headers take about 5%%)",
		k, got/1e6, expected/1e6, 100*got/expected)
	if got < 0.85*expected {
		return "", fmt.Errorf("measure: the machine cannot keep up with the emulation: %s; lower --scale", msg)
	}
	return msg, nil
}
