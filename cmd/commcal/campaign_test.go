package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCampaignCatalogueMustFitCluster: a catalogue the cluster cannot hold (three racks asked
// of a two-rack cluster) is bad input naming the file and the design, before --out is claimed
// or anything is built; the built-in catalogue on a cluster too small for it is a usage error
// that says to give a catalogue.
func TestCampaignCatalogueMustFitCluster(t *testing.T) {
	dir := t.TempDir()
	catFile := filepath.Join(dir, "three-racks.toml")
	if err := os.WriteFile(catFile, []byte("random = [ { nodes = 6, d = 1, patterns = 1, sizes = [1048576], racks = 3 } ]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tiny := filepath.Join(dir, "tiny.toml")
	if err := os.WriteFile(tiny, []byte("name = \"tiny\"\nnic_rate_bps = 1e9\n[[rack]]\nname = \"A\"\nnode_prefix = \"a\"\nnode_count = 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cluster, catalogue string
		want               []string
	}{
		{filepath.Join("..", "..", "data", "tcp", "clusters", "two-rack-1g.toml"), catFile, []string{catFile, "cluster two-rack-1g", "racks", "(random[0])"}},
		{tiny, "", []string{"built-in catalogue does not fit cluster tiny", "give a --catalogue"}},
	} {
		out := filepath.Join(dir, "out")
		_, _, claimed, err := campaignOptions{CatalogueFile: c.catalogue}.start(context.Background(), c.cluster, outputOptions{Out: out}, 0)
		if claimed != nil {
			claimed.Release()
		}
		if code := exitCode(err); code != exitBadInput {
			t.Errorf("%s: exit %d (%v), want %d", c.cluster, code, err, exitBadInput)
		}
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v, want it to say %q", c.cluster, err, w)
			}
		}
		if _, serr := os.Stat(out); !os.IsNotExist(serr) {
			t.Errorf("%s: --out %s was created (%v)", c.cluster, out, serr)
		}
	}
}
