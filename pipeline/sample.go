package pipeline

import (
	"embed"
	"fmt"
	"io/fs"
	"path"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/datasets"
)

// The sample dataset `commcal run` uses when given nothing: real TCP transfers measured by
// `commcal measure` on an emulated two-rack cluster (sample/README.md says how it was made and
// how to remake it).
//
//go:embed sample
var sample embed.FS

const sampleDir = "sample/measured"

// sampleManifest reads the embedded sample's manifest.
func sampleManifest() (*datasets.Manifest, error) {
	data, err := sample.ReadFile(path.Join(sampleDir, datasets.ManifestFile))
	if err != nil {
		return nil, fmt.Errorf("pipeline: embedded sample: %w", err)
	}
	m, err := datasets.ParseManifest(data)
	if err != nil {
		return nil, fmt.Errorf("pipeline: embedded sample: %w", err)
	}
	return m, nil
}

// SampleNotes returns the notes of the sample's measurement (emulation, TCP settings, the
// stopping rule, convergence and the largest start skew), for the notes of a run on it.
func SampleNotes() ([]string, error) {
	m, err := sampleManifest()
	if err != nil {
		return nil, err
	}
	return m.Notes, nil
}

// Sample returns the embedded sample's cluster and its sources.
func Sample() (*cluster.Cluster, []datasets.Source, error) {
	m, err := sampleManifest()
	if err != nil {
		return nil, nil, err
	}
	cl, err := cluster.New(m.Cluster)
	if err != nil {
		return nil, nil, fmt.Errorf("pipeline: embedded sample: %w", err)
	}
	provenance := "measured: commcal measure on an emulated cluster (pipeline/sample/README.md)"
	if len(m.Sources) > 0 && m.Sources[0].Provenance != "" {
		provenance = m.Sources[0].Provenance
	}
	var srcs []datasets.Source
	for _, t := range m.Tables {
		p := path.Join(sampleDir, t.File)
		srcs = append(srcs, datasets.Source{Path: "embedded:" + p, Format: datasets.FormatParquet, Table: t.Name, Provenance: provenance,
			Open: func() (fs.File, error) { return sample.Open(p) }})
	}
	return cl, srcs, nil
}
