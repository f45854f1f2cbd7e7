package datasets

import "testing"

// SimGrid ping-pong rows with impossible times are refused, naming line, row and column.
func TestSimGridBadTimes(t *testing.T) {
	cl := testCluster(t, "ccpe-testbed")
	good := "MPI_Send,10,1.0,1e-5\nMPI_Recv,10,1.0,2e-5\n"
	cases := []struct {
		name, text string
		kind       ErrKind
		col        string
		line, row  int64
	}{
		{"negative Send", good + "MPI_Send,20,2.0,-1e-5\nMPI_Recv,20,2.0,2e-5\n", ErrNegative, "duration", 3, 2},
		{"negative Recv", good + "MPI_Send,20,2.0,1e-5\nMPI_Recv,20,2.0,-2e-5\n", ErrNegative, "duration", 4, 2},
		{"infinite start", "MPI_Send,10,inf,1e-5\nMPI_Recv,10,inf,2e-5\n", ErrInfinite, "start", 1, 1},
		{"overflowing start", good + "MPI_Send,20,1e400,1e-5\nMPI_Recv,20,1e400,2e-5\n", ErrInfinite, "start", 3, 2},
		{"NaN start", "MPI_Send,10,NaN,1e-5\nMPI_Recv,10,NaN,2e-5\n", ErrNaN, "start", 1, 1},
		{"infinite duration", "MPI_Send,10,1.0,-Inf\nMPI_Recv,10,1.0,2e-5\n", ErrInfinite, "duration", 1, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ingestFile(t, cl, "pp.csv", []byte(c.text), Source{Format: FormatSimGrid, Src: "X1", Dst: "Y1"})
			ie := wantKind(t, err, c.kind)
			if ie.Column != c.col || ie.Loc.Line != c.line || ie.Loc.Row != c.row {
				t.Errorf("got %v, want column %s, line %d, row %d", err, c.col, c.line, c.row)
			}
		})
	}
	// A zero duration and a start that underflows to 0 are fine.
	if _, err := ingestFile(t, cl, "pp.csv", []byte("MPI_Send,10,1e-400,0\nMPI_Recv,10,1e-400,2e-5\n"), Source{Format: FormatSimGrid, Src: "X1", Dst: "Y1"}); err != nil {
		t.Error(err)
	}
}
