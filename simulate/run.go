package simulate

import (
	"context"
	"path/filepath"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/datasets"
)

// Options configures Run.
type Options struct {
	Cluster *cluster.Cluster
	Truth   *Truth
	Out     string
	Force   bool
	Version string
	Created time.Time
	Mem     memory.Allocator
}

// Run generates a dataset from a truth and writes it, with the truth as truth.json, to
// opts.Out (through a datasets.DirWriter: atomically, like ingest).
func Run(ctx context.Context, opts Options) (*datasets.Manifest, *Generated, error) {
	g, err := Generate(opts.Cluster, opts.Truth)
	if err != nil {
		return nil, nil, err
	}
	w, err := datasets.NewDirWriter(opts.Out, opts.Force, opts.Cluster, opts.Mem)
	if err != nil {
		return nil, nil, err
	}
	m := &datasets.Manifest{Format: datasets.ManifestFormat, Tool: "commcal", Version: opts.Version,
		Created: opts.Created.UTC().Format(time.RFC3339), Cluster: opts.Cluster.Description(),
		Synth: &datasets.SynthesisInfo{Seed: opts.Truth.Seed, Noise: opts.Truth.Noise, TruthFile: TruthFile}}
	for _, tr := range g.tables() {
		if tr.n == 0 {
			continue
		}
		src := "simulate:" + tr.t.Name
		err := ctx.Err()
		if err == nil {
			err = tr.write(w, src)
		}
		if err != nil {
			w.Abort()
			return nil, nil, err
		}
		m.Sources = append(m.Sources, datasets.SourceInfo{Path: src, Format: "synthetic", Table: tr.t.Name, Rows: int64(tr.n)})
	}
	truth := *opts.Truth
	truth.Format = TruthFormat
	if err := datasets.WriteJSONFile(filepath.Join(w.TempDir(), TruthFile), &truth); err != nil {
		w.Abort()
		return nil, nil, err
	}
	if err := w.Commit(m); err != nil {
		return nil, nil, err
	}
	return m, g, nil
}

// generatedTable is one table of a Generated with a writer for its rows.
type generatedTable struct {
	t     *datasets.Table
	n     int
	write func(w *datasets.DirWriter, src string) error
}

func rowsOf[R any](t *datasets.Table, rows []R) generatedTable {
	return generatedTable{t, len(rows), func(w *datasets.DirWriter, src string) error { return datasets.WriteRows(w, t, src, rows) }}
}

// tables lists the tables in the order of the dataset's sources.
func (g *Generated) tables() []generatedTable {
	return []generatedTable{
		rowsOf(datasets.TransfersTable, g.Transfers),
		rowsOf(datasets.RoundTripsTable, g.RoundTrips),
		rowsOf(datasets.OneToTwoTable, g.OneToTwo),
		rowsOf(datasets.CollectivesTable, g.Collectives),
		rowsOf(datasets.PingPongPairsTable, g.PingPongPairs),
	}
}
