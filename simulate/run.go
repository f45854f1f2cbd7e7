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
	g, err := Generate(ctx, opts.Cluster, opts.Truth)
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
	for _, tr := range g.Rows() {
		if tr.N == 0 {
			continue
		}
		src := "simulate:" + tr.Table.Name
		err := ctx.Err()
		if err == nil {
			err = tr.Write(w, src)
		}
		if err != nil {
			w.Abort()
			return nil, nil, err
		}
		m.Sources = append(m.Sources, datasets.SourceInfo{Path: src, Format: "synthetic", Table: tr.Table.Name, Rows: int64(tr.N)})
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
