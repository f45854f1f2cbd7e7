package datasets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
)

var ab = Source{Src: "a", Dst: "b"}

// The NetPIPE outputs made here (testdata/netpipe/README.md), each read as its mode: the
// default ping-pong's half round trips, -2's exchanges (time per exchange, not halved), -s's
// per-message stream times; figures are the file's.
func TestNetPIPERealOutputs(t *testing.T) {
	cases := []struct {
		file string
		// pattern and flows of the 1024 B row, its time, the rows and a note.
		id, exp string
		flows   []string
		seconds float64
		rows    int
		note    string
	}{
		{"nptcp_pp.stdout", "NetPIPE/a>b:1024", "p2p_sweep", []string{"a>b"}, 6.00e-6, 64, "mode: no -s or -2 line: the default ping-pong"},
		{"npmpi_pp.stdout", "NetPIPE/a>b:1024", "p2p_sweep", []string{"a>b"}, 4.48e-6, 64, "half a round trip, the best of its trials of 20 round trips each"},
		{"nptcp_pp.out", "NetPIPE/a>b:1024", "p2p_sweep", []string{"a>b"}, 6.00e-6, 64, "the output file does not record NetPIPE's mode: read as the default ping-pong"},
		{"nptcp_2.stdout", "NetPIPE -2/a<>b:1024", "exchange_calibration", []string{"a>b", "b>a"}, 11.85e-6, 128, "mode: its mode line (line 1)"},
		{"npmpi_2a.stdout", "NetPIPE -2/a<>b:1024", "exchange_calibration", []string{"a>b", "b>a"}, 6.54e-6, 128, "NetPIPE -2 standard output: each row is an exchange_calibration pattern a<>b"},
		{"npmpi_s.stdout", "NetPIPE -s/a>b:1024", "p2p_sweep", []string{"a>b"}, 4.55e-6, 64, "NetPIPE -s standard output: each row is NetPIPE's time per message of a one-way stream from a to b"},
		// A -s run's output file has the ping-pong's columns: read as one, as its note says.
		{"npmpi_s.out", "NetPIPE/a>b:1", "p2p_sweep", []string{"a>b"}, 4.15e-6, 64, "a -s run writes the same columns: ingest a -s run's standard output instead"},
		{"nptcp_s_stopped.stdout", "NetPIPE -s/a>b:1", "p2p_sweep", []string{"a>b"}, 0.79e-6, 11,
			`the run stopped at measurement 11 (24 B, line 25): NetPIPE reported "NetPIPE: read failed in RecvTime: errno=104"; the sizes before it are kept`},
		{"npmpi_2_without_a_killed.stdout", "NetPIPE -2/a<>b:1024", "exchange_calibration", []string{"a>b", "b>a"}, 8.60e-6, 2 * 79,
			`the run stopped at measurement 79 (65533 B, line 95): its line ends after "-->" (killed)`},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			m, tr, _, err := realIngest(t, ab, "netpipe", c.file)
			if err != nil {
				t.Fatal(err)
			}
			checkPattern(t, tr, c.id, c.exp, c.flows, c.seconds)
			if len(tr) != c.rows || !hasNote(m, c.note) {
				t.Errorf("%d rows, want %d; notes %q", len(tr), c.rows, m.Sources[0].Notes)
			}
		})
	}
}

// NetPIPE outputs whose mode cannot be told, or whose lines contradict it, are refused with
// the mode and what to do; a -2 run's standard error alone is told by its rates.
func TestNetPIPEModes(t *testing.T) {
	t.Run("-2 output files", func(t *testing.T) {
		for _, f := range []string{"nptcp_2.out", "npmpi_2a.out"} {
			_, _, _, err := realIngest(t, ab, "netpipe", f)
			wantKind(t, err, ErrUnsupported)
			for _, w := range []string{"every size is even (2 B, …)", "NetPIPE -2 (both directions at once) writes twice the message size", "ingest the run's standard output"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: %v\nwant %q in it", f, err, w)
				}
			}
		}
	})
	// Lines of a real -2 run without what NetPIPE prints on standard output (its mode line).
	data, err := os.ReadFile(filepath.Join("testdata", "netpipe", "nptcp_2.stdout"))
	if err != nil {
		t.Fatal(err)
	}
	var stderr []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, "-->") || strings.Contains(l, "main loop") {
			stderr = append(stderr, l)
		}
	}
	dir := t.TempDir()
	write := func(name, content string) string {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return name
	}
	t.Run("-2 told by its rates", func(t *testing.T) {
		m, tr, _, err := realIngest(t, ab, dir, write("np2.stderr", strings.Join(stderr, "\n")+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		checkPattern(t, tr, "NetPIPE -2/a<>b:1024", "exchange_calibration", []string{"a>b", "b>a"}, 11.85e-6)
		if !hasNote(m, "mode: its rates, which count both directions (line 2: 1.43 Mbps for 1 B in 10.69 µs); the -2 line of standard output is missing") {
			t.Errorf("notes %q", m.Sources[0].Notes)
		}
	})
	cases := []struct {
		name, content string
		src           Source
		kind          ErrKind
		want          string
	}{
		{"-s line and two-way rates", "Streaming in one direction only.\n" + strings.Join(stderr, "\n") + "\n", ab, ErrCorrupt,
			"line 3, column \"Mbps\": corrupt: 1.43 Mbps for 1 B in 10.69 µs counts two directions, but line 1 says NetPIPE ran with -s"},
		{"-2 line and one-way rates", "Passing data in both directions simultaneously.\nNow starting the main loop\n  0:       1 bytes     20 times -->      1.27 Mbps in       6.00 usec\n", ab, ErrCorrupt,
			"1.27 Mbps for 1 B in 6 µs counts one direction, but line 1 says NetPIPE ran with -2"},
		{"rates of both modes", "Now starting the main loop\n  0:       1 bytes     20 times -->      1.27 Mbps in       6.00 usec\n  1:       2 bytes     20 times -->      5.08 Mbps in       6.00 usec\n", ab, ErrCorrupt,
			"line 3, column \"Mbps\": corrupt: 5.08 Mbps for 2 B in 6 µs counts two directions, but line 2's rate counts one"},
		{"measurement after the run stopped", "Now starting the main loop\n  0:       1 bytes     20 times -->      1.27 Mbps in       6.00 usec\n  1:       2 bytes     20 times --> NetPIPE: read failed in RecvTime: errno=104\n  2:       3 bytes     20 times -->      3.81 Mbps in       6.00 usec\n", ab, ErrCorrupt,
			"line 4: corrupt: a measurement after the run stopped on line 3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, _, err := realIngest(t, c.src, dir, write(strings.ReplaceAll(c.name, " ", "_")+".stdout", c.content))
			wantKind(t, err, c.kind)
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v\nwant %q in it", err, c.want)
			}
		})
	}
	t.Run("--ranks where standard output names the ranks", func(t *testing.T) {
		_, tr, _, err := realIngest(t, Source{Ranks: []string{"c", "d"}}, "netpipe", "npmpi_pp.stdout")
		if err != nil {
			t.Fatal(err)
		}
		if len(tr) != 64 || tr[0].Src != "c" || tr[0].Dst != "d" {
			t.Errorf("%d transfers, first %+v", len(tr), tr[0])
		}
	})
	t.Run("hosts of more ranks", func(t *testing.T) {
		// NPmpi on 3 processes: rank 0 and the last rank measure; rank 1 only synchronises.
		_, tr, _, err := realIngest(t, Source{}, dir, write("np3.stdout", "0: a\n1: b\n2: c\nNow starting the main loop\n  0:       1 bytes     20 times -->      1.27 Mbps in       6.00 usec\n"))
		if err != nil {
			t.Fatal(err)
		}
		if len(tr) != 1 || tr[0].Src != "a" || tr[0].Dst != "c" || !scalar.EqualWithinAbsOrRel(tr[0].TEnd, 6e-6, 0, 1e-12) {
			t.Errorf("%+v", tr)
		}
	})
}

// NetPIPE outputs other than those of testdata/netpipe, kept in the shared data beside the
// repository (shared/data/formats/netpipe: NPopenmpi's default ping-pong), are read as half
// round trips.
func TestNetPIPESharedOutputs(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "data", "formats", "netpipe")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("needs the shared NetPIPE outputs %s (np_openmpi.out, NPopenmpi.stdout), outside the repository: %v", dir, err)
	}
	for _, f := range []string{"np_openmpi.out", "NPopenmpi.stdout"} {
		_, tr, _, err := realIngest(t, ab, dir, f)
		if err != nil {
			t.Fatal(err)
		}
		if len(tr) != 106 || tr[0].Experiment != "p2p_sweep" || !scalar.EqualWithinAbsOrRel(tr[0].TEnd, 5.86e-6, 0, 1e-12) {
			t.Errorf("%s: %d transfers, first %+v", f, len(tr), tr[0])
		}
	}
}
