package pipeline

import (
	"embed"
	"fmt"
	"io/fs"
	"path"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/datasets"
)

// The sample dataset `commcal run` uses when given nothing: real MPI ping-pong round trips
// from Grid5000's graphene and a synthetic calibration campaign on a graphene-like cluster
// (sample/README.md says where each part comes from and how to remake it).
//
//go:embed sample
var sample embed.FS

// SampleCluster is the built-in cluster description the sample belongs to.
const SampleCluster = "graphene"

// The real ping-pong file does not name its two nodes; the sample calls them after two nodes
// of the last switch, away from the nodes of the synthetic campaign.
const (
	samplePingPong    = "sample/graphene_eth_PingPong.csv"
	samplePingPongSrc = "graphene-143"
	samplePingPongDst = "graphene-144"
	sampleProvenance  = "Grid5000 graphene, Ethernet; SimGrid platform-calibration (MIT, (c) 2019 SimGrid Core Team), " +
		"Ezibenroc/platform-calibration@899f044 src/calibration/examples/graphene_eth_PingPong.csv; node names are placeholders"
	sampleSynthetic = "sample/synthetic"
)

// Sample returns the embedded sample's cluster and its sources.
func Sample() (*cluster.Cluster, []datasets.Source, error) {
	cl, err := cluster.LoadNamed(SampleCluster)
	if err != nil {
		return nil, nil, err
	}
	open := func(name string) func() (fs.File, error) {
		return func() (fs.File, error) { return sample.Open(name) }
	}
	m, err := readEmbeddedManifest(path.Join(sampleSynthetic, datasets.ManifestFile))
	if err != nil {
		return nil, nil, err
	}
	var srcs []datasets.Source
	for _, t := range m.Tables {
		p := path.Join(sampleSynthetic, t.File)
		srcs = append(srcs, datasets.Source{Path: "embedded:" + p, Open: open(p), Format: datasets.FormatParquet, Table: t.Name,
			Provenance: fmt.Sprintf("synthetic: commcal simulate --cluster %s --seed %d --noise %g (truth in %s/%s)",
				SampleCluster, m.Synth.Seed, m.Synth.Noise, sampleSynthetic, datasets.TruthFile)})
	}
	srcs = append(srcs, datasets.Source{Path: "embedded:" + samplePingPong, Open: open(samplePingPong),
		Format: datasets.FormatSimGrid, Src: samplePingPongSrc, Dst: samplePingPongDst, Provenance: sampleProvenance})
	return cl, srcs, nil
}

func readEmbeddedManifest(name string) (*datasets.Manifest, error) {
	data, err := sample.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("pipeline: embedded sample: %w", err)
	}
	m, err := datasets.ParseManifest(data)
	if err != nil {
		return nil, fmt.Errorf("pipeline: embedded sample: %w", err)
	}
	if m.Synth == nil {
		return nil, fmt.Errorf("pipeline: embedded sample: %s is not a synthetic dataset", name)
	}
	return m, nil
}
