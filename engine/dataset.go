package engine

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/datasets"
)

// RepetitionsFile is the dataset file listing every repetition of a measurement with its
// start skew.
const RepetitionsFile = "repetitions.json"

// repetitionsFormat tags RepetitionsFile.
const repetitionsFormat = "commcal-repetitions/1"

// DatasetOptions say where and how a campaign's dataset is written.
type DatasetOptions struct {
	Out     string
	Force   bool
	Version string
	Created time.Time
	// Launcher is how the agents were started (datasets.MeasurementInfo).
	Launcher string
	Socket   SocketOptions
	// Provenance is the sources' provenance line; Notes are added to the manifest's.
	Provenance string
	Notes      []string
}

// WriteDataset writes a campaign's results as a dataset (atomically, like ingest): every
// table that has rows, the repetitions file, and a manifest that records the launcher, every
// host with its kernel and TCP settings, the clock-sync error and the start skew.
func WriteDataset(cl *cluster.Cluster, res *Results, agents []AgentInfo, o DatasetOptions) (*datasets.Manifest, error) {
	w, err := datasets.NewDirWriter(o.Out, o.Force, cl, nil)
	if err != nil {
		return nil, err
	}
	mi := measurementInfo(res, agents, o)
	// The same in a note, which survives re-ingesting the dataset (a run's health reads the
	// largest start skew from it).
	notes := append(slices.Clone(o.Notes), fmt.Sprintf("benchmark (%s): %d measurements, %d converged, %d repetitions in %.0f s; clock-sync error ≤ %.0f µs; start skew median %.3g ms, 99th percentile %.3g ms, largest start skew %.3g ms",
		mi.Launcher, mi.Measurements, mi.Converged, mi.Repetitions, mi.ElapsedS, 1e6*mi.SyncErrorS, 1e3*mi.SkewMedianS, 1e3*mi.SkewP99S, 1e3*mi.SkewMaxS))
	m := &datasets.Manifest{Format: datasets.ManifestFormat, Tool: "commcal", Version: o.Version,
		Created: o.Created.UTC().Format(time.RFC3339), Cluster: cl.Description(), Measured: mi, Notes: notes}
	for _, t := range res.Rows() {
		if t.N == 0 {
			continue
		}
		src := "measured:" + t.Table.Name
		if err := t.Write(w, src); err != nil {
			w.Abort()
			return nil, err
		}
		m.Sources = append(m.Sources, datasets.SourceInfo{Path: src, Format: "measured", Table: t.Table.Name, Rows: int64(t.N), Provenance: o.Provenance})
	}
	reps := struct {
		Format      string    `json:"format"`
		Repetitions []RepInfo `json:"repetitions"`
	}{repetitionsFormat, res.Repetitions}
	if err := datasets.WriteJSONFile(filepath.Join(w.TempDir(), RepetitionsFile), reps); err != nil {
		w.Abort()
		return nil, err
	}
	if err := w.Commit(m); err != nil {
		return nil, err
	}
	return m, nil
}

func measurementInfo(res *Results, agents []AgentInfo, o DatasetOptions) *datasets.MeasurementInfo {
	mi := &datasets.MeasurementInfo{Launcher: o.Launcher, Congestion: o.Socket.Congestion, SocketBuffer: o.Socket.Buffer,
		SyncErrorS: res.SyncError.Seconds(), Repetitions: len(res.Repetitions), RepetitionsFile: RepetitionsFile,
		Measurements: res.Measurements, Converged: res.Converged, ElapsedS: res.Elapsed.Round(time.Millisecond).Seconds()}
	for _, a := range agents {
		mi.Hosts = append(mi.Hosts, datasets.MeasuredHost{Node: a.Node, Host: a.Host, Rank: a.Rank, OffsetS: a.Offset.Seconds(), Info: a.Info})
	}
	slices.SortFunc(mi.Hosts, func(a, b datasets.MeasuredHost) int { return strings.Compare(a.Node, b.Node) })
	skews := make([]float64, len(res.Repetitions))
	for i, r := range res.Repetitions {
		skews[i] = r.SkewS
	}
	slices.Sort(skews)
	if n := len(skews); n > 0 {
		mi.SkewMedianS, mi.SkewP99S, mi.SkewMaxS = skews[n/2], skews[min(n-1, n*99/100)], skews[n-1]
	}
	return mi
}

// Summary is one line on how a campaign went, for logs and the command's output.
func (r *Results) Summary() string {
	return fmt.Sprintf("%d measurements (%d converged), %d repetitions in %.0f s; clock-sync error ≤ %v",
		r.Measurements, r.Converged, len(r.Repetitions), r.Elapsed.Seconds(), r.SyncError)
}
