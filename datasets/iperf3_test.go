package datasets

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// iperf3Run runs a one-off iperf3 server and one client on loopback and returns the client's
// JSON output.
func iperf3Run(t *testing.T, bin string, bytes int) []byte {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	srv := exec.Command(bin, "-s", "-1", "-B", "127.0.0.1", "-p", port)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		srv.Process.Kill()
		srv.Wait()
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, err := exec.Command(bin, "-c", "127.0.0.1", "-p", port, "-n", fmt.Sprint(bytes), "--json").Output()
		var res struct{ Error string }
		if err == nil && json.Unmarshal(out, &res) == nil && res.Error == "" {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("iperf3 client: %v\n%s", err, out)
		}
		time.Sleep(50 * time.Millisecond) // the server is not listening yet
	}
}

func TestIngestRealIperf3(t *testing.T) {
	bin, err := exec.LookPath("iperf3")
	if err != nil {
		t.Skip("iperf3 is not installed (Debian package iperf3; .ci/run installs it)")
	}
	const size = 4 << 20
	dir := filepath.Join(t.TempDir(), "runs")
	os.Mkdir(dir, 0o755)
	type figures struct {
		End struct {
			SumSent     struct{ Bytes int64 }     `json:"sum_sent"`
			SumReceived struct{ Seconds float64 } `json:"sum_received"`
		} `json:"end"`
	}
	var want []figures
	for i := 0; i < 3; i++ {
		out := iperf3Run(t, bin, size)
		var f figures
		if err := json.Unmarshal(out, &f); err != nil {
			t.Fatal(err)
		}
		want = append(want, f)
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("run%d.json", i)), out, 0o644)
	}
	cl := testCluster(t, "ccpe-testbed")
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
	if len(rows) != 3 {
		t.Fatalf("%d transfers, want 3", len(rows))
	}
	for i, r := range rows {
		if r.Bytes != size || r.Bytes != want[i].End.SumSent.Bytes {
			t.Errorf("run %d: bytes %d, iperf3 sent %d, requested %d", i, r.Bytes, want[i].End.SumSent.Bytes, size)
		}
		if r.Seconds() != want[i].End.SumReceived.Seconds || r.Seconds() <= 0 {
			t.Errorf("run %d: duration %v, iperf3's receiver says %v", i, r.Seconds(), want[i].End.SumReceived.Seconds)
		}
		if r.Rep != int64(i) || r.PatternID != "X1>X2:4194304" || r.Experiment != "p2p_sweep" || r.Src != "X1" || r.Dst != "X2" {
			t.Errorf("run %d: %+v", i, r)
		}
	}
}
