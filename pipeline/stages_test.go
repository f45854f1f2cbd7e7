package pipeline

import (
	"strings"
	"testing"

	"github.com/commcal/commcal/datasets"
)

// The collectives table's algorithms: the user's choice first, then the dataset's library,
// then Open MPI's rules, with a warning only where the table has a collective to score.
func TestHeldAlgorithms(t *testing.T) {
	a2a := []datasets.Collective{{Op: "alltoall"}}
	for _, c := range []struct {
		held          Held
		want, warning string
	}{
		{Held{Algorithms: "pairwise", Library: "mpich", Collectives: a2a}, "pairwise", ""},
		{Held{Library: "mpich", Collectives: a2a}, "auto:mpich", ""},
		{Held{Collectives: a2a}, "auto:openmpi", "does not name the MPI library"},
		{Held{Collectives: []datasets.Collective{{Op: "scatter"}}}, "auto:openmpi", ""},
		{Held{}, "auto:openmpi", ""},
	} {
		got, warning := c.held.algorithms(c.held.scoresCollectives())
		if got != c.want || (c.warning == "") != (warning == "") || !strings.Contains(warning, c.warning) {
			t.Errorf("%+v: %q, %q; want %q and a warning with %q", c.held, got, warning, c.want, c.warning)
		}
	}
}
