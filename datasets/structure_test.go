package datasets

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/commcal/commcal/internal/badinput"
)

// structureCase is one malformed input and the exact refusal it must get: its kind and its
// message, with FILE standing for the file's path.
type structureCase struct {
	name, file, content string
	src                 Source
	kind                ErrKind
	want                string
}

// checkStructure ingests each case's content as a file of its name and compares the error.
func checkStructure(t *testing.T, cases []structureCase) {
	t.Helper()
	cl := testCluster(t, "ccpe-testbed")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			src := c.src
			src.Path = filepath.Join(dir, c.file)
			if err := os.WriteFile(src.Path, []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "ds")
			_, err := Ingest(context.Background(), IngestOptions{Cluster: cl, Sources: []Source{src}, Out: out, Created: fixedTime})
			if err == nil {
				t.Fatal("accepted")
			}
			ie := checkInputError(t, err, src.Path)
			got := strings.ReplaceAll(err.Error(), src.Path, "FILE")
			if ie.Kind != c.kind || got != c.want {
				t.Errorf("got  %s (%s)\nwant %s (%s)", got, ie.Kind, c.want, c.kind)
			}
			if _, statErr := os.Stat(out); !os.IsNotExist(statErr) {
				t.Error("output written")
			}
		})
	}
}

const (
	osuLat  = "# OSU MPI Latency Test v7.4\n# Datatype: MPI_CHAR.\n# Size       Avg Latency(us)\n"
	imbPP   = "# Benchmarking PingPong\n# #processes = 2\n       #bytes #repetitions      t[usec]   Mbytes/sec\n"
	skPP    = "# SKaMPI Version 5.0.4\n# begin result \"Pingpong_Send_Recv\"\n"
	skEnd   = "# end result \"Pingpong_Send_Recv\"\n"
	npMain  = "0: X1\n1: Y1\nNow starting the main loop\n"
	mpibP2P = "#p2p adaptive benchmark 0-1\n#\n#msg\ttime\t\twtick\treps\tci\n"
)

// npRow is a line of NetPIPE's standard output.
func npRow(i, bytes int, usec string) string {
	return fmt.Sprintf("%3d: %7d bytes %6d times -->      1.00 Mbps in %10s usec\n", i, bytes, 1000, usec)
}

// Every structural check of the text adapters, on the malformed input it is for: the sizes
// of a block, blocks cut short, figures that are not numbers, counts that contradict each
// other, text that is not UTF-8.
func TestTextStructure(t *testing.T) { checkStructure(t, textStructureCases) }

// textStructureCases are the inputs of TestTextStructure; testdata/fuzz holds each as a seed
// of its adapter's fuzz target.
var textStructureCases = []structureCase{
	// Shared by every adapter.
	{"not UTF-8", "l.txt", osuLat + "1 2.0\n2 2\xff.0\n", x1y1, ErrControlChar, "FILE: line 5: control-character: byte 0xff at byte 4 of the line is not UTF-8: text in another encoding, or binary, is not a benchmark's output"},
	{"nan figure", "l.txt", "# OSU MPI Latency Test v7.4\n# Size       Avg Latency(us)        P50 Tail Lat(us)   P90 Tail Lat(us)\n1 2.0 -nan 2.1\n", x1y1, ErrNaN, "FILE: line 3, column \"P50 Tail Lat(us)\": nan: got \"-nan\" (NaN: the tool's figure is undefined), want a number"},
	// OSU.
	{"osu size twice", "l.txt", osuLat + "1 2.0\n2 2.1\n2 2.2\n", x1y1, ErrDuplicateKey, "FILE: line 6, column \"Size\": duplicate-key: size 2 B again, as on line 5: OSU prints each size once, doubling it from one row to the next"},
	{"osu sizes down", "l.txt", osuLat + "1 2.0\n4 2.1\n2 2.2\n", x1y1, ErrNotIncreasing, "FILE: line 6, column \"Size\": not-increasing: size 2 B after 4 B (line 5): OSU prints each size once, doubling it from one row to the next"},
	{"osu header without rows", "l.txt", osuLat, x1y1, ErrCorrupt, "FILE: corrupt: the osu_latency block under the header of line 3 has no rows before the end of the file: the run stopped (killed, failed or out of time) or the file was cut before its first measurement; re-run it, or delete the block"},
	{"osu header without rows before another", "l.txt", osuLat + "# Datatype: MPI_INT.\n# Size       Avg Latency(us)\n1 2.0\n", x1y1, ErrCorrupt, "FILE: corrupt: the osu_latency block under the header of line 3 has no rows before line 5: the run stopped (killed, failed or out of time) or the file was cut before its first measurement; re-run it, or delete the block"},
	{"osu second run cut", "l.txt", osuLat + "1 2.0\n# OSU MPI Latency Test v7.4\n", x1y1, ErrCorrupt, "FILE: corrupt: the osu_latency run titled at line 5 has no rows before the end of the file: the run stopped (killed, failed or out of time) or the file was cut before its first measurement; re-run it, or delete the block"},
	{"osu another test", "l.txt", osuLat + "1 2.0\n# OSU MPI Bandwidth Test v7.4\n# Size      Bandwidth (MB/s)\n1 2.0\n", x1y1, ErrCorrupt, "FILE: line 5: corrupt: a second OSU title, of osu_bw, in an output of osu_latency: give each test's output as its own file"},
	{"osu negative figure", "l.txt", "# OSU MPI Latency Test v7.3\n# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations\n1 2.00 -1.80 2.50 1000\n", x1y1, ErrNegative, "FILE: line 3, column \"Min Latency(us)\": negative: Min Latency(us) -1.80, want ≥ 0"},
	// IMB.
	{"imb size twice", "i.txt", imbPP + "1 10 1.0 1.0\n2 10 1.0 1.0\n1 10 1.0 1.0\n", x1y1, ErrDuplicateKey, "FILE: line 6, column \"#bytes\": duplicate-key: size 1 B again in block PingPong (line 1), as on line 4: IMB measures each size of its list once per block (-msglog's powers of two, or -msglen's sizes in the file's order)"},
	{"imb killed p2p run", "i.txt", "#    Intel(R) MPI Benchmarks 2021.3, IMB-P2P part\n#----\n# Benchmarking PingPong\n# #processes = 2\n#----\n       #bytes #repetitions      t[usec]   Mbytes/sec      Msg/sec\n", x1y1, ErrCorrupt, "FILE: corrupt: IMB block PingPong (line 3) has no rows before the end of the file: the run stopped (killed, failed or out of time) or the file was cut before its first measurement; re-run it, or delete the block"},
	{"imb block cut before the next", "i.txt", imbPP + "# Benchmarking PingPing\n# #processes = 2\n #bytes #repetitions t[usec] Mbytes/sec\n 1 10 1.0 1.0\n", x1y1, ErrCorrupt, "FILE: corrupt: IMB block PingPong (line 1) has no rows before line 4: the run stopped (killed, failed or out of time) or the file was cut before its first measurement; re-run it, or delete the block"},
	{"imb multi 0", "i.txt", "# Benchmarking Multi-PingPong \n# ( 2 groups of 2 processes each running simultaneous ) \n# Group  0:     0    1 \n#\n# Group  1:     2    3 \n#\n       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]   Mbytes/sec\n 1 1000 1.0 1.2 1.1 0.95\n", x1y1, ErrUnsupported, "FILE: unsupported: an IMB-MPI1 output with only Multi-PingPong on 2 groups of 2 processes: none has a table; commcal reads IMB-MPI1's PingPong, PingPing, Sendrecv, Exchange, Alltoall, Allgather, Bcast, Scatter and Gather, and under -multi 0 PingPing's, Sendrecv's and Exchange's groups at once; re-run those benchmarks"},
	{"imb nan figure", "i.txt", imbPP + "1 10 1.0 -nan\n", x1y1, ErrNaN, "FILE: line 4, column \"Mbytes/sec\": nan: got \"-nan\" (NaN: the tool's figure is undefined), want a number"},
	{"imb two process counts", "i.txt", "# Benchmarking PingPong\n# #processes = 2\n# #processes = 4\n #bytes #repetitions t[usec] Mbytes/sec\n 1 10 1.0 1.0\n", x1y1, ErrCorrupt, "FILE: line 3, column \"#processes\": corrupt: 4 processes in block PingPong (line 1), which said 2"},
	{"imb only failures", "i.txt", imbPP + " 4194304 out-of-mem.; needed X=   0.021 GB; use flag \"-mem X\" or MAX_MEM_USAGE>=X (IMB_mem_info.h)\n", x1y1, ErrEmptyFile, "FILE: empty-file: IMB measured no size above 0 bytes: PingPong 4194304 B (out-of-mem)"},
	{"imb pingpong without sizes", "i.txt", "# Benchmarking PingPong\n# #processes = 2\n #repetitions t[usec] Mbytes/sec\n 10 1.0 1.0\n", x1y1, ErrMissingColumn, "FILE: line 4, column \"#bytes\": missing-column: block PingPong (line 1) has no #bytes column"},
	// SKaMPI.
	{"skampi sizes turn", "s.ski", skPP + "count= 1 1 109.2 0.2 32 106.7 107.7\ncount= 4 4 110 0.2 32 106.7 107.7\ncount= 2 2 110 0.2 32 106.7 107.7\n" + skEnd, x1y1, ErrNotIncreasing, "FILE: line 5, column \"bytes\": not-increasing: size 2 B after 4 B (line 4) in block \"Pingpong_Send_Recv\" (line 2), whose sizes rose until then: SKaMPI prints a loop's rows in its order, or sorted when it refines the loop, so a block's sizes run one way"},
	{"skampi no end", "s.ski", skPP + "count= 1 1 109.2 0.2 32 106.7 107.7\n", x1y1, ErrCorrupt, "FILE: corrupt: SKaMPI block \"Pingpong_Send_Recv\" (line 2) has no \"# end result\" line before the end of the file: the run stopped inside it, or the file was cut"},
	{"skampi pingpong without rows", "s.ski", skPP + skEnd + "# begin result \"MPI_Bcast\"\ncount= 1 4 50.0 0.5 16 50.0 49.0\n# end result \"MPI_Bcast\"\n", x1y1, ErrCorrupt, "FILE: corrupt: SKaMPI block \"Pingpong_Send_Recv\" (line 2) has no rows before line 4: the run stopped (killed, failed or out of time) or the file was cut before its first measurement; re-run it, or delete the block"},
	{"skampi end of another block", "s.ski", skPP + "count= 1 1 109.2 0.2 32 106.7 107.7\n# end result \"MPI_Bcast\"\n", x1y1, ErrCorrupt, "FILE: line 4: corrupt: \"# end result\" of \"MPI_Bcast\", but the block open is \"Pingpong_Send_Recv\" (line 2)"},
	{"skampi end without begin", "s.ski", "# SKaMPI Version 5.0.4\n" + skEnd, x1y1, ErrCorrupt, "FILE: line 2: corrupt: \"# end result\" of \"Pingpong_Send_Recv\" without its \"# begin result\" line"},
	{"skampi not a row", "s.ski", skPP + "count= 1 1 109.2 0.2 32 106.7 107.7\nmpirun: killed\n" + skEnd, x1y1, ErrWrongType, "FILE: line 4: wrong-type: \"mpirun: killed\" is neither a comment nor a row (\"NAME= VALUE\" per loop variable, then bytes, time, standard error, repetitions)"},
	{"skampi bad process figure", "s.ski", skPP + "count= 1 1 109.2 0.2 32 106.7 nan\n" + skEnd, x1y1, ErrNaN, "FILE: line 3, column \"process 1\": nan: got \"nan\" (NaN: the tool's figure is undefined), want a number"},
	// NetPIPE.
	{"netpipe negative time", "np.out", "       1 1.301760   -0.00000586\n       2 2.612286   0.00000584\n       3 2.277941   0.00001005\n", Source{Src: "X1", Dst: "Y1"}, ErrNonPositive, "FILE: line 1, column \"seconds\": non-positive: seconds -0.00000586: want a time in seconds > 0"},
	{"netpipe measurement twice", "np.stdout", npMain + npRow(0, 1, "5.00") + npRow(1, 2, "5.00") + npRow(1, 2, "5.00"), Source{}, ErrDuplicateKey, "FILE: line 6, column \"measurement\": duplicate-key: measurement 1 again: NetPIPE numbers its measurements 0, 1, 2, … once each"},
	{"netpipe measurement missing", "np.stdout", npMain + npRow(0, 1, "5.00") + npRow(2, 3, "5.00"), Source{}, ErrCorrupt, "FILE: line 5, column \"measurement\": corrupt: measurement 2 after measurement 0: NetPIPE numbers its measurements 0, 1, 2, … in order, so lines are missing or out of place"},
	{"netpipe start missing", "np.stdout", npMain + npRow(3, 4, "5.00") + npRow(4, 6, "5.00"), Source{}, ErrCorrupt, "FILE: line 4, column \"measurement\": corrupt: measurement 3 as the first measurement: NetPIPE numbers its measurements 0, 1, 2, … in order, so lines are missing or out of place"},
	{"netpipe sizes down", "np.out", "       1 1.0 0.00000586\n       2 1.0 0.00000584\n       3 1.0 0.00001005\n       4 1.0 0.00000584\n       1 1.0 0.00000586\n", x1y1, ErrNotIncreasing, "FILE: line 5, column \"bytes\": not-increasing: size 1 B is not above 2 B, the size three measurements before (line 2): NetPIPE's sizes increase (with -p P, each is also measured P bytes below and above, which never goes that far back)"},
	{"netpipe main loop without rows", "np.stdout", npMain, Source{}, ErrCorrupt, "FILE: corrupt: NetPIPE's main loop (line 3) has no rows before the end of the file: the run stopped (killed, failed or out of time) or the file was cut before its first measurement; re-run it, or delete the block"},
	{"netpipe integrity check", "np.stdout", npMain + "  0:       1 bytes   1000 times -->  Integrity check passed\n", Source{}, ErrUnsupported, "FILE: line 4: unsupported: NetPIPE's integrity check (-i) measures no time: run it without -i"},
	{"netpipe integrity check file", "np.out", "       1 1000\n       2 1000\n", Source{Format: FormatNetPIPE, Src: "X1", Dst: "Y1"}, ErrRaggedRow, "FILE: line 1: ragged-row: 2 fields, want 3: bytes, Mbps, seconds (NetPIPE's integrity check, -i, writes bytes and repetitions: no time)"},
	// MPIBlib.
	{"mpiblib nodes against processors", "m.out", "#Processors\n#rank\tprocessor\n#0\tY1\n#1\tY2\n#2\tY3\n#\n#nodes\t\t4\n#root\t\t0\n#operation\tMPI_Scatter\n#msg\ttime\t\twtick\treps\tci\n1024\t3e-05\t1\t10\t2e-07\n", Source{}, ErrCorrupt, "FILE: line 7, column \"nodes\": corrupt: #nodes 4, but the #Processors list (line 1) names 3 processes: MPIBlib prints the size of the communicator it measures in both"},
	{"mpiblib rank out of order", "m.out", "#Processors\n#rank\tprocessor\n#0\tY1\n#2\tY2\n", Source{}, ErrCorrupt, "FILE: line 4, column \"rank\": corrupt: rank \"2\" where the #Processors list (line 1) needs rank 1: MPIBlib lists each process once, in rank order"},
	{"mpiblib root not a rank", "m.out", "#nodes\t\t4\n#root\t\t4\n#operation\tMPI_Scatter\n#msg\ttime\t\twtick\treps\tci\n1024\t3e-05\t1\t10\t2e-07\n", x1y1, ErrCorrupt, "FILE: line 2, column \"root\": corrupt: #root 4 is not a rank of the 4 nodes (0 to 3)"},
	{"mpiblib root not a number", "m.out", "#nodes\t\t4\n#root\t\tX1\n#operation\tMPI_Scatter\n#msg\ttime\t\twtick\treps\tci\n1024\t3e-05\t1\t10\t2e-07\n", x1y1, ErrWrongType, "FILE: line 2, column \"root\": wrong-type: \"X1\" is not a rank (an integer)"},
	{"mpiblib second header", "m.out", mpibP2P + "1024\t4e-05\t1\t20\t5e-07\n" + mpibP2P, x1y1, ErrCorrupt, "FILE: line 7: corrupt: a second \"#msg time wtick reps ci\" header (line 3 has the first): one MPIBlib run per file"},
	{"mpiblib size twice", "m.out", mpibP2P + "1024\t4e-05\t1\t20\t5e-07\n1024\t4e-05\t1\t20\t5e-07\n", x1y1, ErrDuplicateKey, "FILE: line 5, column \"msg\": duplicate-key: size 1024 B again, as on line 4: MPIBlib measures its sizes in increasing order, each once"},
	{"mpiblib sizes down", "m.out", mpibP2P + "2048\t4e-05\t1\t20\t5e-07\n1024\t4e-05\t1\t20\t5e-07\n", x1y1, ErrNotIncreasing, "FILE: line 5, column \"msg\": not-increasing: size 1024 B after 2048 B (line 4): MPIBlib measures its sizes in increasing order, each once"},
	{"mpiblib header without rows", "m.out", mpibP2P, x1y1, ErrCorrupt, "FILE: corrupt: the MPIBlib table under the header of line 3 has no rows before the end of the file: the run stopped (killed, failed or out of time) or the file was cut before its first measurement; re-run it, or delete the block"},
	{"mpiblib negative ci", "m.out", mpibP2P + "1024\t4e-05\t1\t20\t-5e-07\n", x1y1, ErrNegative, "FILE: line 4, column \"ci\": negative: ci \"-5e-07\": a confidence interval's half-width is ≥ 0"},
	// SimGrid: recognised when its first line is damaged.
	{"simgrid first line damaged", "lab_PingPong.csv", "MPI_Snd,100,0.001,1e-05\nMPI_Recv,100,0.001,1.5e-05\nMPI_Send,200,0.002,1e-05\nMPI_Recv,200,0.002,1.5e-05\n", x1y1, ErrWrongType, "FILE: line 1, column \"operation\": wrong-type: operation \"MPI_Snd\" is not one of the calls SimGrid's calibration times (MPI_Iprobe, MPI_Isend, MPI_Recv, MPI_Send, MPI_Ssend, MPI_Test, MPI_Wtime): its CSV has no header, one \"MPI_…,size,start,duration\" line per call"},
}

// A value from the input is quoted in a message cut to badinput.MaxQuote bytes, with its
// length, whatever reader finds it: a 10 MB number is not echoed whole.
func TestQuotedValuesBounded(t *testing.T) {
	huge := strings.Repeat("9", 10<<20)
	name := strings.Repeat("c", 1<<20)
	q := badinput.Quote
	if !strings.HasSuffix(q(huge), `"… (10485760 bytes)`) || len(q(huge)) > 100 {
		t.Fatalf("badinput.Quote does not cut: %.100s", q(huge))
	}
	checkStructure(t, []structureCase{
		{"osu time", "l.txt", osuLat + "1 " + huge + "x\n", x1y1, ErrWrongType,
			`FILE: line 4, column "Avg Latency(us)": wrong-type: ` + q(huge+"x") + ` is not a number`},
		{"imb size", "i.txt", imbPP + huge + " 10 1.0 1.0\n", x1y1, ErrWrongType,
			`FILE: line 4, column "#bytes": wrong-type: ` + q(huge) + ` is not a message size in bytes (an integer)`},
		{"csv number", "t.csv", "cluster,experiment,pattern_id,rep,flow_id,src_node,dst_node,bytes,t_start_s,t_end_s\nccpe-testbed,p2p_sweep,p1,0,0,X1,Y1," + huge + ",0,0.01\n", Source{}, ErrWrongType,
			`FILE: line 2 (row 1), column "bytes": wrong-type: ` + q(huge) + ` is not an integer`},
		{"csv column name twice", "t.csv", name + "," + name + "\n1,2\n", Source{}, ErrDuplicateColumn,
			`FILE: line 1, column ` + q(name) + `: duplicate-column: column ` + q(name) + ` appears more than once in the header`},
		{"iperf3 error", "r.json", `{"error":"` + name + `"}`, x1y1, ErrToolFailure,
			`FILE: line 1 (row 1): tool-failure: iperf3 reported: ` + q(name) + `: this run measured nothing; re-run it`},
	})
}

// InputError's message is one line of at most badinput.MaxMessage bytes, whatever its Detail.
func TestInputErrorBounded(t *testing.T) {
	e := &InputError{Loc: Location{File: "f.txt", Line: 3}, Column: strings.Repeat("k", 5000), Kind: ErrCorrupt, Detail: strings.Repeat("d\n", 5000)}
	msg := e.Error()
	if len(msg) > badinput.MaxMessage || strings.ContainsAny(msg, "\n\r") || !strings.HasPrefix(msg, `f.txt: line 3, column "kkkk`) || !strings.Contains(msg, "(5000 bytes)") {
		t.Errorf("%d bytes: %.200q…", len(msg), msg)
	}
}
