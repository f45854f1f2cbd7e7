package datasets

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/commcal/commcal/cluster"
)

// iperf3Cluster has addresses for the iperf3 adapter to map: a1, a2 in rack A, b1 in rack B.
func iperf3Cluster(t testing.TB) *cluster.Cluster {
	t.Helper()
	cl, err := cluster.Parse([]byte(`
name = "ip3"
nic_rate_bps = 1e9
[backbone]
topology = "cable"
kind = "optical"
rate_bps = 10e9
[[rack]]
name = "A"
nodes = ["a1", "a2"]
[[rack]]
name = "B"
nodes = ["b1"]
[[node]]
name = "a1"
addr = "10.0.0.1"
[[node]]
name = "a2"
addr = "10.0.0.2"
[[node]]
name = "b1"
addr = "10.0.1.1"
`), "toml")
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// ip3 describes one iperf3 run for iperf3Doc, which writes the JSON iperf3 3.12 prints for it
// (the keys and their meaning are iperf_api.c's: connecting_to on the client,
// accepted_connection on the server; sum_sent/sum_received for the client-to-server streams,
// or server-to-client with -R; the _bidir_reverse sums for the server-to-client streams of
// --bidir; each sum's "sender" says whether the writing side sent those streams).
type ip3 struct {
	server          bool   // the file is the server's output
	client, srv     string // addresses
	reverse, bidir  bool
	requested       int64
	sent, recv      int64   // forward direction
	secs            float64 // receiver's seconds, forward
	rsent, rrecv    int64   // reverse direction of --bidir
	rsecs           float64
	omitSenderField bool
}

func iperf3Doc(r ip3) string {
	local, remote := r.client, r.srv
	side := `"connecting_to": {"host": "` + r.srv + `", "port": 5201}`
	if r.server {
		local, remote = r.srv, r.client
		side = `"accepted_connection": {"host": "` + r.client + `", "port": 40000}`
	}
	rev := 0
	if r.reverse {
		rev = 1
	}
	sum := func(bytes int64, secs float64, sender bool) string {
		s := fmt.Sprintf(`{"start": 0, "end": %g, "seconds": %g, "bytes": %d, "bits_per_second": 1e9`, secs, secs, bytes)
		if !r.omitSenderField {
			s += fmt.Sprintf(`, "sender": %t`, sender)
		}
		return s + "}"
	}
	fwdLocalSends := r.reverse == r.server // client sends forward unless reversed
	end := fmt.Sprintf(`"sum_sent": %s, "sum_received": %s`, sum(r.sent, r.secs/2, fwdLocalSends), sum(r.recv, r.secs, fwdLocalSends))
	conns := fmt.Sprintf(`{"socket": 5, "local_host": %q, "local_port": 1, "remote_host": %q, "remote_port": 2}`, local, remote)
	if r.bidir {
		end += fmt.Sprintf(`, "sum_sent_bidir_reverse": %s, "sum_received_bidir_reverse": %s`, sum(r.rsent, r.rsecs/2, r.server), sum(r.rrecv, r.rsecs, r.server))
		conns += ", " + conns
	}
	return fmt.Sprintf(`{
	"start": {
		"connected": [%s],
		"version": "iperf 3.12",
		%s,
		"test_start": {"protocol": "TCP", "num_streams": 1, "blksize": 131072, "omit": 0, "duration": 0, "bytes": %d, "blocks": 0, "reverse": %d, "tos": 0, "target_bitrate": 0}
	},
	"intervals": [],
	"end": {"streams": [], %s, "cpu_utilization_percent": {"host_total": 1}}
}
`, conns, side, r.requested, rev, end)
}

func TestIngestIperf3Documents(t *testing.T) {
	cl := iperf3Cluster(t)
	const M = 4194304
	a1, a2, b1 := "10.0.0.1", "10.0.0.2", "10.0.1.1"
	tr := func(exp, pattern string, rep, flow int64, src, dst string, bytes int64, secs float64) Transfer {
		return Transfer{Cluster: "ip3", Experiment: exp, PatternID: pattern, Rep: rep, FlowID: flow, Src: src, Dst: dst, Bytes: bytes, TEnd: secs}
	}
	cases := []struct {
		name string
		docs []ip3
		src  Source
		want []Transfer
		kind ErrKind // the error's kind, when the file is refused
		col  string
		msg  string // a part of the message
	}{
		{name: "client", docs: []ip3{{client: a1, srv: a2, requested: M, sent: M, recv: M, secs: 0.04}},
			want: []Transfer{tr("p2p_sweep", "a1>a2:4194304", 0, 0, "a1", "a2", M, 0.04)}},
		{name: "client, reverse", docs: []ip3{{client: a1, srv: a2, reverse: true, requested: M, sent: M, recv: M, secs: 0.04}},
			want: []Transfer{tr("p2p_sweep", "a2>a1:4194304", 0, 0, "a2", "a1", M, 0.04)}},
		// The server received: it does not know what the client sent (0), and sends no more
		// than whole blocks: the size is what arrived.
		{name: "server", docs: []ip3{{server: true, client: a1, srv: a2, requested: M, sent: 0, recv: M, secs: 0.04}},
			want: []Transfer{tr("p2p_sweep", "a1>a2:4194304", 0, 0, "a1", "a2", M, 0.04)}},
		{name: "server, whole blocks", docs: []ip3{{server: true, client: a1, srv: a2, requested: 65536, sent: 0, recv: 131072, secs: 0.01}},
			want: []Transfer{tr("p2p_sweep", "a1>a2:131072", 0, 0, "a1", "a2", 131072, 0.01)}},
		// Server side of -R: the server sent. With the receiver's count (the documented
		// format has it) it is read from the server to the client ...
		{name: "server, reverse", docs: []ip3{{server: true, client: a1, srv: a2, reverse: true, requested: M, sent: M, recv: M, secs: 0.04}},
			want: []Transfer{tr("p2p_sweep", "a2>a1:4194304", 0, 0, "a2", "a1", M, 0.04)}},
		// ... and without it, as iperf3 3.12 writes it, it is refused with the reason.
		{name: "server, reverse, no receiver count", docs: []ip3{{server: true, client: a1, srv: a2, reverse: true, requested: M, sent: M, recv: 0, secs: 0.04}},
			kind: ErrTruncatedTransfer, col: "end.sum_received.bytes", msg: "counted 0 of the 4194304 bytes sent: the transfer did not complete, so it has no completion time (the server's output"},
		{name: "bidir, client", docs: []ip3{{client: a1, srv: a2, bidir: true, requested: M, sent: M, recv: M, secs: 0.05, rsent: M, rrecv: M, rsecs: 0.06}},
			want: []Transfer{tr("bidir_nic", "a1<>a2:4194304", 0, 0, "a1", "a2", M, 0.05), tr("bidir_nic", "a1<>a2:4194304", 0, 1, "a2", "a1", M, 0.06)}},
		{name: "bidir, server, across racks", docs: []ip3{{server: true, client: b1, srv: a2, bidir: true, requested: M, sent: 0, recv: M, secs: 0.05, rsent: M, rrecv: M, rsecs: 0.06}},
			want: []Transfer{tr("bidir_backbone", "b1<>a2:4194304", 0, 0, "b1", "a2", M, 0.05), tr("bidir_backbone", "b1<>a2:4194304", 0, 1, "a2", "b1", M, 0.06)}},
		{name: "bidir, reverse half short", docs: []ip3{{client: a1, srv: a2, bidir: true, requested: M, sent: M, recv: M, secs: 0.05, rsent: M, rrecv: 131072, rsecs: 0.06}},
			kind: ErrTruncatedTransfer, col: "end.sum_received_bidir_reverse.bytes", msg: "counted 131072 of the 4194304 bytes sent"},
		{name: "bidir, names given", docs: []ip3{{client: "127.0.0.1", srv: "127.0.0.1", bidir: true, requested: M, sent: M, recv: M, secs: 0.05, rsent: M, rrecv: M, rsecs: 0.06}},
			src:  Source{Src: "a1", Dst: "b1", Experiment: "bidir_nic", PatternID: "pp"},
			want: []Transfer{tr("bidir_nic", "pp", 0, 0, "a1", "b1", M, 0.05), tr("bidir_nic", "pp", 0, 1, "b1", "a1", M, 0.06)}},
		{name: "appended runs", docs: []ip3{
			{client: a1, srv: a2, requested: M, sent: M, recv: M, secs: 0.04},
			{client: a1, srv: a2, requested: M, sent: M, recv: M, secs: 0.045},
			{client: a1, srv: b1, requested: M, sent: M, recv: M, secs: 0.05, omitSenderField: true},
			{client: a1, srv: a2, requested: M, sent: M, recv: M, secs: 0.041}},
			want: []Transfer{tr("p2p_sweep", "a1>a2:4194304", 0, 0, "a1", "a2", M, 0.04), tr("p2p_sweep", "a1>a2:4194304", 1, 0, "a1", "a2", M, 0.045),
				tr("p2p_sweep", "a1>b1:4194304", 0, 0, "a1", "b1", M, 0.05), tr("p2p_sweep", "a1>a2:4194304", 2, 0, "a1", "a2", M, 0.041)}},
		{name: "short receiver", docs: []ip3{{client: a1, srv: a2, requested: M, sent: M, recv: 786432, secs: 0.04}},
			kind: ErrTruncatedTransfer, col: "end.sum_received.bytes", msg: "the receiver counted 786432 of the 4194304 bytes sent"},
		{name: "short receiver in the second run", docs: []ip3{{client: a1, srv: a2, requested: M, sent: M, recv: M, secs: 0.04}, {client: a1, srv: a2, requested: M, sent: M, recv: 0, secs: 0.04}},
			kind: ErrTruncatedTransfer, col: "end.sum_received.bytes", msg: "line 11 (row 2)"},
		{name: "receiver counted more", docs: []ip3{{client: a1, srv: a2, requested: M, sent: M, recv: M + 1, secs: 0.04}},
			kind: ErrCorrupt, col: "end.sum_received.bytes"},
		{name: "time-limited", docs: []ip3{{client: a1, srv: a2, requested: 0, sent: M, recv: M, secs: 10}},
			kind: ErrUnsupported, col: "start.test_start.bytes"},
		{name: "unknown address", docs: []ip3{{client: "192.168.9.9", srv: a2, requested: M, sent: M, recv: M, secs: 0.04}},
			kind: ErrUnknownNode, col: "src_node", msg: "sender address 192.168.9.9"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var doc strings.Builder
			for _, d := range c.docs {
				doc.WriteString(iperf3Doc(d))
			}
			got, err := ingestFile(t, cl, "runs.json", []byte(doc.String()), c.src)
			if c.kind != "" {
				ie := wantKind(t, err, c.kind)
				if ie.Column != c.col || !strings.Contains(err.Error(), c.msg) {
					t.Errorf("column %q, want %q; message %q, want it to contain %q", ie.Column, c.col, err, c.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
	// A "sender" field that contradicts the side and direction is a damaged file.
	bad := strings.Replace(iperf3Doc(ip3{client: a1, srv: a2, requested: M, sent: M, recv: M, secs: 0.04}), `"sender": true`, `"sender": false`, 1)
	_, err := ingestFile(t, cl, "bad.json", []byte(bad), Source{})
	if ie := wantKind(t, err, ErrCorrupt); ie.Column != "end.sum_sent.sender" {
		t.Errorf("column %q", ie.Column)
	}
	// Neither side named.
	bad = strings.Replace(iperf3Doc(ip3{client: a1, srv: a2, requested: M, sent: M, recv: M, secs: 0.04}), `"connecting_to"`, `"somewhere"`, 1)
	_, err = ingestFile(t, cl, "bad.json", []byte(bad), Source{})
	wantKind(t, err, ErrMissingColumn)
}

// iperf3Run runs a one-off iperf3 server and one client on loopback, both with --json, and
// returns what each printed.
func iperf3Run(t *testing.T, bin string, bytes int, flags ...string) (client, server []byte) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
		l.Close()
		srv := exec.Command(bin, "-s", "-1", "-B", "127.0.0.1", "-p", port, "--json")
		var srvOut strings.Builder
		srv.Stdout = &srvOut
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		var out []byte
		for time.Now().Before(deadline) {
			out, err = exec.Command(bin, append([]string{"-c", "127.0.0.1", "-p", port, "-n", fmt.Sprint(bytes), "--json"}, flags...)...).Output()
			var res struct{ Error string }
			if err == nil && json.Unmarshal(out, &res) == nil && res.Error == "" {
				break
			}
			time.Sleep(50 * time.Millisecond) // the server is not listening yet
		}
		werr := make(chan error, 1)
		go func() { werr <- srv.Wait() }()
		select {
		case <-werr:
		case <-time.After(10 * time.Second):
			srv.Process.Kill()
			<-werr
		}
		if err == nil && srvOut.Len() > 0 {
			return out, []byte(srvOut.String())
		}
		if time.Now().After(deadline) {
			t.Fatalf("iperf3 %v: %v\n%s", flags, err, out)
		}
	}
}

// ip3Figures are the numbers an iperf3 run printed, read independently of the adapter.
type ip3Figures struct {
	Start struct {
		TestStart struct{ Reverse, Bytes int64 } `json:"test_start"`
	} `json:"start"`
	End struct {
		SumSent                 ip3Sum `json:"sum_sent"`
		SumReceived             ip3Sum `json:"sum_received"`
		SumSentBidirReverse     ip3Sum `json:"sum_sent_bidir_reverse"`
		SumReceivedBidirReverse ip3Sum `json:"sum_received_bidir_reverse"`
	} `json:"end"`
}

type ip3Sum struct {
	Bytes   int64
	Seconds float64
}

// expectIperf3 says what ingesting an iperf3 output must give: the transfers (size and time
// from the JSON), or the truncated-transfer error of the first direction whose receiver
// counted fewer bytes than were sent.
func expectIperf3(t *testing.T, out []byte, server, bidir bool) (want [][2]float64, short string) {
	t.Helper()
	var f ip3Figures
	if err := json.Unmarshal(out, &f); err != nil {
		t.Fatal(err)
	}
	dirs := [][2]ip3Sum{{f.End.SumSent, f.End.SumReceived}}
	if bidir {
		dirs = append(dirs, [2]ip3Sum{f.End.SumSentBidirReverse, f.End.SumReceivedBidirReverse})
	}
	for d, sums := range dirs {
		sent, recv := sums[0], sums[1]
		size := sent.Bytes
		if size == 0 && server && (d == 0 && f.Start.TestStart.Reverse == 0) {
			size = max(recv.Bytes, f.Start.TestStart.Bytes) // a receiving server: what arrived, at least -n
		}
		if recv.Bytes < size {
			return nil, fmt.Sprintf("the receiver counted %d of the %d bytes sent", recv.Bytes, size)
		}
		want = append(want, [2]float64{float64(size), recv.Seconds})
	}
	return want, ""
}

// TestIngestRealIperf3 runs the real iperf3 on loopback, client and server both writing
// --json, forward, reversed (-R) and bidirectional (--bidir), and checks every output against
// its own figures: the transfers with iperf3's sizes and receiver times in the right
// direction, or, when iperf3 ended the test before the receiver had everything (common with
// 3.12), the truncated-transfer error with both counts.
func TestIngestRealIperf3(t *testing.T) {
	bin, err := exec.LookPath("iperf3")
	if err != nil {
		t.Skip("iperf3 is not installed (Debian package iperf3; .ci/run installs it)")
	}
	help, _ := exec.Command(bin, "--help").CombinedOutput()
	const size = 4 << 20
	cl := testCluster(t, "ccpe-testbed")
	modes := []struct {
		name  string
		flags []string
	}{{"forward", nil}, {"reverse", []string{"-R"}}, {"bidir", []string{"--bidir"}}}
	counts := map[string]int{}
	for _, m := range modes {
		if len(m.flags) > 0 && !strings.Contains(string(help), m.flags[0]) {
			t.Errorf("iperf3 %s has no %s option", bin, m.flags[0])
			continue
		}
		for i := 0; i < 3; i++ {
			cout, sout := iperf3Run(t, bin, size, m.flags...)
			for _, side := range []struct {
				name string
				out  []byte
			}{{"client", cout}, {"server", sout}} {
				server := side.name == "server"
				bidir := m.name == "bidir"
				want, short := expectIperf3(t, side.out, server, bidir)
				// Loopback maps both ends to one address: name the nodes. X1 is the client.
				src := Source{Src: "X1", Dst: "X2"}
				if m.name == "reverse" {
					src = Source{Src: "X2", Dst: "X1"}
				}
				rows, err := ingestFile(t, cl, side.name+".json", side.out, src)
				if server && (m.name == "reverse") && short == "" {
					t.Errorf("%s %s: iperf3's server now reports the receiver's count; update the test", m.name, side.name)
				}
				if short != "" {
					counts["truncated"]++
					if ie := wantKind(t, err, ErrTruncatedTransfer); !strings.Contains(ie.Detail, short) {
						t.Errorf("%s %s run %d: %v, want %q", m.name, side.name, i, err, short)
					}
					continue
				}
				counts["complete"]++
				if err != nil {
					t.Fatalf("%s %s run %d: %v", m.name, side.name, i, err)
				}
				if len(rows) != len(want) {
					t.Fatalf("%s %s run %d: %d transfers, want %d", m.name, side.name, i, len(rows), len(want))
				}
				for k, r := range rows {
					// Forward: client X1 to server X2 (X2 to X1 reversed); a --bidir run's
					// second transfer goes back.
					wantSrc, wantDst := "X1", "X2"
					if m.name == "reverse" || k == 1 {
						wantSrc, wantDst = "X2", "X1"
					}
					if float64(r.Bytes) != want[k][0] || r.Seconds() != want[k][1] || r.Seconds() <= 0 || r.Src != wantSrc || r.Dst != wantDst || r.FlowID != int64(k) {
						t.Errorf("%s %s run %d, transfer %d: %+v, want %v bytes in %v s from %s", m.name, side.name, i, k, r, want[k][0], want[k][1], wantSrc)
					}
				}
			}
		}
	}
	t.Logf("iperf3 outputs: %v", counts)

	// Three complete client runs in one directory, and appended to one file: the same
	// transfers, repetitions numbered in order.
	dir := filepath.Join(t.TempDir(), "runs")
	os.Mkdir(dir, 0o755)
	var all []byte
	var want [][2]float64
	for tries := 0; len(want) < 3 && tries < 30; tries++ {
		out, _ := iperf3Run(t, bin, size)
		w, short := expectIperf3(t, out, false, false)
		if short != "" {
			continue
		}
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("run%d.json", len(want))), out, 0o644)
		all = append(all, out...)
		want = append(want, w[0])
	}
	if len(want) < 3 {
		t.Fatalf("only %d of 30 iperf3 runs completed", len(want))
	}
	srcs, err := ExpandSources([]string{dir}, Source{Src: "X1", Dst: "X2"})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "ds")
	m, err := Ingest(context.Background(), IngestOptions{Cluster: cl, Sources: srcs, Out: out, Created: fixedTime})
	if err != nil {
		t.Fatal(err)
	}
	if m.Sources[0].Format != FormatIperf3 {
		t.Errorf("format detected as %q", m.Sources[0].Format)
	}
	ds, err := Open(out)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := ReadAll[Transfer](context.Background(), ds, TransfersTable)
	if err != nil {
		t.Fatal(err)
	}
	appended, err := ingestFile(t, cl, "appended.json", all, Source{Src: "X1", Dst: "X2"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rows, appended) {
		t.Errorf("appended runs read as %+v, separate files as %+v", appended, rows)
	}
	if len(rows) != 3 {
		t.Fatalf("%d transfers, want 3", len(rows))
	}
	for i, r := range rows {
		if float64(r.Bytes) != want[i][0] || r.Bytes < size || r.Seconds() != want[i][1] {
			t.Errorf("run %d: %d bytes in %v s, iperf3 says %v in %v", i, r.Bytes, r.Seconds(), want[i][0], want[i][1])
		}
		if r.Rep != int64(i) || r.PatternID != "X1>X2:4194304" || r.Experiment != "p2p_sweep" || r.Src != "X1" || r.Dst != "X2" {
			t.Errorf("run %d: %+v", i, r)
		}
	}
}
