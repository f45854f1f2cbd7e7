package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets/campaigns"
)

// benchCluster is the benchmarks' 64-node cluster: two racks of 32 nodes, 1 Gbit/s NICs, a
// 10 Gbit/s cable between the racks.
const benchCluster = "../../bench/two-rack-64.toml"

// benchPatternSHA256 is the SHA-256 of the benchmarks' 10⁴-transfer pattern as pattern.csv
// (contention's TestBenchPatternDigest pins the benchmarks' own pattern to the same value).
const benchPatternSHA256 = "daaa68dcf98293b8fbd40a867a6f42e9bfd47c8d90c12eedaca143524b0429b1"

// writeBenchPattern writes the first n transfers of the benchmarks' 10⁴-transfer pattern on
// the nodes of bench/two-rack-64.toml to path, as `make simgrid-inputs` writes pattern.csv:
// for each transfer, from a PCG seeded (1, 0xbe9c), a source drawn uniformly among the 64
// nodes, a destination uniformly among the others and a size of 1 to 8 MB. The whole pattern
// is checked against benchPatternSHA256.
func writeBenchPattern(t *testing.T, path string, n int) {
	t.Helper()
	cl, err := cluster.Load(benchCluster)
	if err != nil {
		t.Fatal(err)
	}
	nodes := cl.Nodes()
	rng := rand.New(rand.NewPCG(1, 0xbe9c))
	var b strings.Builder
	b.WriteString("src,dst,bytes\n")
	for range n {
		s := rng.IntN(len(nodes))
		d := (s + 1 + rng.IntN(len(nodes)-1)) % len(nodes)
		fmt.Fprintf(&b, "%s,%s,%s\n", nodes[s].Name, nodes[d].Name, strconv.FormatFloat(float64(1+rng.IntN(8))*1e6, 'f', -1, 64))
	}
	sum := sha256.Sum256([]byte(b.String()))
	if got := hex.EncodeToString(sum[:]); n == 10_000 && got != benchPatternSHA256 {
		t.Fatalf("the benchmarks' pattern written has SHA-256 %s, want %s", got, benchPatternSHA256)
	}
	write(t, path, b.String())
}

// calibrateCampaign calibrates a committed TCP dataset with commcal estimate into dir and
// returns the calibration.json.
func calibrateCampaign(t *testing.T, name, dir string) string {
	t.Helper()
	c, err := campaigns.CommittedCampaign("../..", name)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, name)
	if code, _, stderr := runCLI(t, "estimate", "--out", out, c.Path); code != 0 {
		t.Fatalf("estimate %s: exit %d: %s", name, code, stderr)
	}
	return filepath.Join(out, "calibration.json")
}

// predictDoc is what predict --json prints.
type predictDoc struct {
	Format string
	Carry  *struct {
		From, To string
		Classes  []contention.CarriedClass
	}
	Transfers []struct {
		Pattern string
		FlowID  int64 `json:"flow_id"`
		Src     string
		Dst     string
		Bytes   float64
		Model   string
		Seconds float64
	}
}

func decodePredict(t *testing.T, stdout string) predictDoc {
	t.Helper()
	var doc predictDoc
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("predict --json: %v", err)
	}
	return doc
}

// TestPredictCarriedCalibration predicts on the benchmarks' 64-node cluster with the
// calibration of the committed 10-node TCP dataset two-rack-1g, without editing a file: every
// model predicts; the note on stderr and the JSON's carry say that the NIC parameters, the
// Hockney paths and the factors were carried and that the backbone, for which two-rack-1g
// fits nothing, is at its nominal rate × 0.94; maxmin's times are those of the carried NIC
// capacity and ceiling given as --params. Then the 10⁴-transfer pattern: under maxmin and
// the default model (every model with COMMCAL_SLOW_TESTS: stochastic alone takes minutes).
func TestPredictCarriedCalibration(t *testing.T) {
	dir := t.TempDir()
	cal := calibrateCampaign(t, "two-rack-1g", dir)
	small, full := filepath.Join(dir, "small.csv"), filepath.Join(dir, "pattern.csv")
	writeBenchPattern(t, small, 200)
	writeBenchPattern(t, full, 10_000)

	code, stdout, stderr := runCLI(t, "predict", "--cluster", benchCluster, "--calibration", cal, "--json", small)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	doc := decodePredict(t, stdout)
	if doc.Carry == nil || doc.Carry.From != "two-rack-1g" || doc.Carry.To != "two-rack-64" {
		t.Fatalf("carry: %+v", doc.Carry)
	}
	if got := outcomesOf(doc.Carry.Classes); got != "nic:carried backbone:fallback intra-rack:carried inter-rack:carried factors:carried" {
		t.Errorf("outcomes: %s", got)
	}
	for _, want := range []string{
		"commcal: predict: the calibration of cluster two-rack-1g applied to cluster two-rack-64, resource class by resource class:",
		"commcal:   carried   nic         ceiling_bps, nic_bps, penalty_alpha_s_per_byte, learned ceiling_bps, nic_bps (ackpath, ackpath-alpha, duplex, stochastic, surface)",
		"commcal:   fallback  backbone    nothing fitted between racks (the cluster has a backbone of 10 Gbit/s): 0.94 × nominal (10 Gbit/s)",
		"commcal:   carried   factors     efficiency, contra_factor, penalties.table, learned ack_in, ack_out, ack_full, ack_lone (ackpath, ackpath-alpha)",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the note does not say %q:\n%s", want, stderr)
		}
	}
	perModel := map[string]int{}
	maxmin := map[int64]float64{}
	for _, r := range doc.Transfers {
		perModel[r.Model]++
		if !(r.Seconds > 0) || math.IsInf(r.Seconds, 0) {
			t.Fatalf("%s, transfer %d: %g s", r.Model, r.FlowID, r.Seconds)
		}
		if r.Model == "maxmin" {
			maxmin[r.FlowID] = r.Seconds
		}
	}
	for _, m := range contention.Names() {
		if perModel[m] != 200 {
			t.Errorf("%s predicted %d transfers, want 200", m, perModel[m])
		}
	}

	// maxmin reads the NIC capacity and the ceiling: the calibration's, carried as they are.
	var calDoc struct {
		Params struct {
			Ceiling float64                       `json:"ceiling_bps"`
			NIC     float64                       `json:"nic_bps"`
			Beta    map[cluster.PathClass]float64 `json:"inverse_bandwidth_s_per_byte"`
		}
	}
	data, err := os.ReadFile(cal)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &calDoc); err != nil || calDoc.Params.NIC < 90e6 || calDoc.Params.NIC > 100e6 {
		t.Fatalf("two-rack-1g's NIC capacity %g (%v): its NICs run at a tenth of 1 Gbit/s", calDoc.Params.NIC, err)
	}
	params := filepath.Join(dir, "params.json")
	write(t, params, fmt.Sprintf(`{"efficiency": 0.94, "contra_factor": 1, "ceiling_bps": %s, "nic_bps": %s}`,
		strconv.FormatFloat(calDoc.Params.Ceiling, 'g', -1, 64), strconv.FormatFloat(calDoc.Params.NIC, 'g', -1, 64)))
	code, stdout, stderr = runCLI(t, "predict", "--cluster", benchCluster, "--params", params, "--models", "maxmin", "--json", small)
	if code != 0 {
		t.Fatalf("--params: exit %d: %s", code, stderr)
	}
	byParams := decodePredict(t, stdout)
	if byParams.Carry != nil || strings.Contains(stderr, "resource class") {
		t.Errorf("--params carried something: %+v %s", byParams.Carry, stderr)
	}
	for _, r := range byParams.Transfers {
		if r.Seconds != maxmin[r.FlowID] {
			t.Fatalf("maxmin, transfer %d: %g s with the carried calibration, %g s with its NIC capacity and ceiling", r.FlowID, maxmin[r.FlowID], r.Seconds)
		}
	}

	models := "maxmin,ackpath-alpha"
	if os.Getenv("COMMCAL_SLOW_TESTS") != "" {
		models = strings.Join(contention.Names(), ",")
	} else if testing.Short() {
		models = "maxmin"
	}
	code, stdout, stderr = runCLI(t, "predict", "--cluster", benchCluster, "--calibration", cal, "--models", models, full)
	if code != 0 {
		t.Fatalf("10⁴ transfers: exit %d: %s", code, stderr)
	}
	for _, m := range strings.Split(models, ",") {
		var makespan float64
		for _, line := range strings.Split(stdout, "\n") {
			if f := strings.Fields(line); len(f) == 6 && f[0] == "pattern" && f[1] == "10000" && f[2] == m {
				makespan, _ = strconv.ParseFloat(f[3], 64)
			}
		}
		switch {
		case m == "hockney":
			// No contention: the slowest 8 MB transfer alone, at the carried β of its class.
			want := 8e6 * max(calDoc.Params.Beta[cluster.IntraRack], calDoc.Params.Beta[cluster.InterRack])
			if math.Abs(makespan-want) > 1e-5*want {
				t.Errorf("10⁴ transfers under hockney: makespan %g s, want 8 MB × β = %g s", makespan, want)
			}
		case !(makespan > 10 && makespan < 1000):
			// The busiest NIC direction carries about 10⁴/64 × 4.5 MB at ~98 Mbit/s: tens of
			// seconds.
			t.Errorf("10⁴ transfers under %s: makespan %g s\n%s", m, makespan, stdout)
		}
	}
}

// outcomesOf is each class's outcome, "class:outcome" in order.
func outcomesOf(classes []contention.CarriedClass) string {
	s := make([]string, len(classes))
	for i, c := range classes {
		s[i] = c.Class + ":" + c.Outcome
	}
	return strings.Join(s, " ")
}

// benchVariant writes bench/two-rack-64.toml with another name and backbone rate into dir.
func benchVariant(t *testing.T, dir, name string, backbone float64) string {
	t.Helper()
	data, err := os.ReadFile(benchCluster)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(data), `name = "two-rack-64"`, fmt.Sprintf("name = %q", name), 1)
	s = strings.Replace(s, "rate_bps = 10e9", "rate_bps = "+strconv.FormatFloat(backbone, 'g', -1, 64), 1)
	path := filepath.Join(dir, name+".toml")
	write(t, path, s)
	return path
}

// TestPredictCarriedFallback predicts where a class's nominal rate differs: a 25 GbE
// backbone under two-rack-1g's calibration (the backbone at 0.94 × 25 Gbit/s, Hockney's
// inter-rack fit not carried: hockney's time of an inter-rack transfer is then 8·m/ceiling),
// and two-rack-100m's fitted 1 Gbit/s backbone capacity on the 10 Gbit/s backbone of the
// benchmarks' cluster (fallen back to --efficiency × nominal, with the parameters named).
func TestPredictCarriedFallback(t *testing.T) {
	dir := t.TempDir()
	cal1g := calibrateCampaign(t, "two-rack-1g", dir)
	cal100m := calibrateCampaign(t, "two-rack-100m", dir)
	fast := benchVariant(t, dir, "two-rack-64-25g", 25e9)
	pattern := filepath.Join(dir, "p.csv")
	write(t, pattern, "src,dst,bytes\na0,b1,1e7\na1,a2,4e6\n")

	code, stdout, stderr := runCLI(t, "predict", "--cluster", fast, "--calibration", cal1g, "--models", "hockney", "--json", pattern)
	if code != 0 {
		t.Fatalf("25 GbE: exit %d: %s", code, stderr)
	}
	doc := decodePredict(t, stdout)
	if got := outcomesOf(doc.Carry.Classes); got != "nic:carried backbone:fallback intra-rack:carried inter-rack:fallback factors:carried" {
		t.Errorf("25 GbE: outcomes %s", got)
	}
	for _, want := range []string{
		"commcal:   fallback  backbone    nothing fitted between racks (the cluster has a backbone of 25 Gbit/s): 0.94 × nominal (25 Gbit/s)",
		"commcal:   fallback  inter-rack  inverse_bandwidth_s_per_byte.inter-rack: fitted on paths through NICs of 1 Gbit/s and a backbone of 10 Gbit/s; the cluster has NICs of 1 Gbit/s and a backbone of 25 Gbit/s: no latency added; hockney's β 8/ceiling",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("25 GbE: the note does not say %q:\n%s", want, stderr)
		}
	}
	var calDoc struct {
		Params struct {
			Ceiling float64                       `json:"ceiling_bps"`
			Beta    map[cluster.PathClass]float64 `json:"inverse_bandwidth_s_per_byte"`
		}
	}
	data, err := os.ReadFile(cal1g)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &calDoc); err != nil {
		t.Fatal(err)
	}
	inter, intra := doc.Transfers[0], doc.Transfers[1]
	if want := 8 * 1e7 / calDoc.Params.Ceiling; math.Abs(inter.Seconds-want) > 1e-12*want {
		t.Errorf("hockney, inter-rack transfer: %g s, want 8·m/ceiling = %g s", inter.Seconds, want)
	}
	if want := calDoc.Params.Beta[cluster.IntraRack] * 4e6; math.Abs(intra.Seconds-want) > 1e-12*want {
		t.Errorf("hockney, intra-rack transfer: %g s, want the carried β·m = %g s", intra.Seconds, want)
	}

	// --efficiency applies before the carry: the note gives the fallback the models use.
	code, _, stderr = runCLI(t, "predict", "--cluster", benchCluster, "--calibration", cal100m, "--efficiency", "0.9", "--models", "maxmin", pattern)
	want := "commcal:   fallback  backbone    backbone_bps, learned backbone_bps (ackpath, ackpath-alpha, duplex, stochastic, surface): fitted for a backbone of 1 Gbit/s; the cluster has a backbone of 10 Gbit/s: 0.9 × nominal (10 Gbit/s)"
	if code != 0 || !strings.Contains(stderr, want) {
		t.Errorf("two-rack-100m on 10 Gbit/s: exit %d, the note does not say %q:\n%s", code, want, stderr)
	}
}

// TestPredictCarryRefused refuses, with exit status 2 and one line, a calibration of which no
// parameter applies to --cluster (fitted for 10 Gbit/s NICs and a 40 Gbit/s backbone only)
// and one of another cluster that does not record its nominal rates.
func TestPredictCarryRefused(t *testing.T) {
	dir := t.TempDir()
	pattern := filepath.Join(dir, "p.csv")
	write(t, pattern, "src,dst,bytes\na0,b1,1e7\n")
	tenGig := filepath.Join(dir, "ten-gig.json")
	write(t, tenGig, `{"format": "commcal-calibration/2", "tool": "commcal", "cluster": "ten-gig",
 "params": {"efficiency": 0.94, "contra_factor": 1, "ceiling_bps": 9.3e9, "nic_bps": 9.4e9, "backbone_bps": 3.7e10,
  "nominal": {"nic_bps": [1e10], "inter_rack": "backbone", "inter_rack_bps": [4e10]}}}`)
	old := filepath.Join(dir, "old.json")
	write(t, old, `{"format": "commcal-calibration/2", "tool": "commcal", "cluster": "old",
 "params": {"efficiency": 0.94, "contra_factor": 0.7, "nic_bps": 9.4e8}}`)
	for _, c := range []struct {
		cal, want string
	}{
		{tenGig, tenGig + ": estimate: a calibration of cluster ten-gig applies to no resource class of cluster two-rack-64 (nic: fitted for NICs of 10 Gbit/s; the cluster has NICs of 1 Gbit/s: "},
		{old, old + ": estimate: a calibration of cluster old without the nominal rates it was fitted for (params.nominal); estimate it again to apply it to cluster two-rack-64"},
	} {
		code, stdout, stderr := runCLI(t, "predict", "--cluster", benchCluster, "--calibration", c.cal, pattern)
		if code != exitBadInput || stdout != "" || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d and one line with %q", c.cal, code, stdout, stderr, exitBadInput, c.want)
		}
	}
}

// TestPredictSameCluster predicts with two-rack-1g's calibration on its own cluster, as
// before: no note, no carry in --json. The same name with another backbone rate is another
// cluster: its calibration is carried.
func TestPredictSameCluster(t *testing.T) {
	dir := t.TempDir()
	cal := calibrateCampaign(t, "two-rack-1g", dir)
	c, err := campaigns.CommittedCampaign("../..", "two-rack-1g")
	if err != nil {
		t.Fatal(err)
	}
	pattern := filepath.Join(dir, "p.csv")
	write(t, pattern, "src,dst,bytes\nX1,Y1,1e7\nX2,X3,1e7\n")
	code, stdout, stderr := runCLI(t, "predict", "--cluster", c.Cluster, "--calibration", cal, "--json", pattern)
	if code != 0 || stderr != "" || strings.Contains(stdout, `"carry"`) {
		t.Errorf("own cluster: exit %d, stderr %q, carry in the JSON: %v", code, stderr, strings.Contains(stdout, `"carry"`))
	}
	data, err := os.ReadFile(c.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	edited := filepath.Join(dir, "two-rack-1g.toml")
	write(t, edited, strings.Replace(string(data), "rate_bps = 10e9", "rate_bps = 25e9", 1))
	code, stdout, stderr = runCLI(t, "predict", "--cluster", edited, "--calibration", cal, "--json", pattern)
	if doc := decodePredict(t, stdout); code != 0 || doc.Carry == nil || !strings.Contains(stderr, "the cluster has NICs of 1 Gbit/s and a backbone of 25 Gbit/s") {
		t.Errorf("the same name, a 25 Gbit/s backbone: exit %d, carry %+v, stderr %q", code, doc.Carry, stderr)
	}
}
