package experiments

import (
	"strings"
	"testing"

	"github.com/commcal/commcal/cluster"
)

// FuzzParseCatalogue feeds arbitrary catalogue TOML to the parser: it returns a catalogue
// within the ceilings or an error on one line naming the catalogue, never a panic; and an
// accepted catalogue's patterns are drawn on the testbed without a panic when it fits.
func FuzzParseCatalogue(f *testing.F) {
	cl, err := cluster.LoadNamed("ccpe-testbed")
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		"sweep = { sizes = [1024, 65536] }\n",
		"seed = -1\nsweep = { sizes = [1] }\n",
		"random = [ { nodes = 4, d = 1, patterns = -1 } ]\n",
		"fairness = { max_k = 3 }\ncalibration = { bytes = 1024 }\nbidirectional = { max = 2 }\nstatic_sync = { graphs = 2, max_edges = 3 }\n",
		"lmo = { bytes = 65536, nodes = 4, sequential = true }\ncollectives = { sizes = [1024, 2048] }\npingpong = { pairs = [1, 2], sizes = [1024] }\n",
		"repetitions = { min = 4, max = 12, ci_percent = 1, budget = \"30s\", timeout = \"1m\" }\nsweep = { sizes = [8] }\n",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseCatalogue(data)
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "catalogue: ") || strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("message %q", msg)
			}
			return
		}
		if err := c.check(); err != nil {
			t.Fatalf("accepted a catalogue its own check refuses: %v", err)
		}
		if c.CheckCluster(cl) != nil {
			return
		}
		total := 0.0
		for _, b := range c.transferBounds(len(cl.Nodes())) {
			total += b.n
		}
		if total <= 10_000 {
			c.Patterns(cl) // an error (a design the testbed cannot hold) is fine; a panic is not
		}
	})
}
