package validate

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/stat"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/experiments"
	"github.com/commcal/commcal/simulate"
)

// simulated draws the default campaign of a cluster with the given ground-truth model.
func simulated(t *testing.T, model string, noise float64, reps int) (*cluster.Cluster, []datasets.Transfer) {
	t.Helper()
	cl, err := cluster.LoadNamed("ccpe-testbed")
	if err != nil {
		t.Fatal(err)
	}
	tr := simulate.DefaultTruth(cl, 3)
	tr.Noise, tr.Reps = noise, reps
	tr.Contention.Model = model
	tr.Hockney = nil // no latency: the models below are not given one either
	g, err := simulate.Generate(context.Background(), cl, tr)
	if err != nil {
		t.Fatal(err)
	}
	return cl, g.Transfers
}

func byModel(s SettingAccuracy) map[string]ModelAccuracy {
	m := map[string]ModelAccuracy{}
	for _, a := range s.Models {
		m[a.Model] = a
	}
	return m
}

func TestAsymmetricGroundTruth(t *testing.T) {
	const noise, reps = 0.02, 10
	cl, rows := simulated(t, "asymmetric", noise, reps)
	preds, acc, err := Validate(context.Background(), cl, rows, contention.DefaultParams(), nil, contention.Models(), experiments.WithRole(experiments.HeldOut))
	if err != nil {
		t.Fatal(err)
	}
	if len(acc.Settings) != 9 || acc.Settings[0].Setting != "N10-d1" || acc.Settings[8].Setting != "N30-d3" {
		t.Fatalf("settings %v", acc.Settings)
	}
	// The measured mean of reps draws of T·(1 + σZ) is off by about σ/√reps·|Z|, whose mean is
	// σ·√(2/π)/√reps: the noise level a perfect model shows.
	level := noise * math.Sqrt(2/math.Pi) / math.Sqrt(reps)
	o := byModel(acc.Overall)
	if got := o["asymmetric"].MeanAbsErr; math.Abs(got-level) > 0.01 {
		t.Errorf("asymmetric mean |ε| %.4f, noise level %.4f", got, level)
	}
	if o["asymmetric"].AsymMeanAbsErr >= o["fair"].AsymMeanAbsErr || o["asymmetric"].AsymTransfers == 0 {
		t.Errorf("on asymmetric patterns, asymmetric %.4f does not beat fair %.4f", o["asymmetric"].AsymMeanAbsErr, o["fair"].AsymMeanAbsErr)
	}
	if o["asymmetric"].MeanAbsErr >= o["hockney"].MeanAbsErr {
		t.Errorf("asymmetric %.4f does not beat hockney %.4f", o["asymmetric"].MeanAbsErr, o["hockney"].MeanAbsErr)
	}
	asym := ModelRows(preds, "asymmetric")
	if n := o["asymmetric"].Transfers; n != len(asym) || n == 0 {
		t.Errorf("%d transfers scored, %d rows", n, len(asym))
	}
	for _, r := range asym {
		if r.Experiment != "random" || r.Reps != reps || math.Abs(r.Err) > 5*noise {
			t.Fatalf("row %+v", r)
		}
	}
	t.Logf("overall: %+v", acc.Overall.Models)
}

func TestMaxMinGroundTruth(t *testing.T) {
	cl, rows := simulated(t, "maxmin", 0.02, 10)
	_, acc, err := Validate(context.Background(), cl, rows, contention.DefaultParams(), nil, contention.Models(), experiments.WithRole(experiments.HeldOut))
	if err != nil {
		t.Fatal(err)
	}
	o := byModel(acc.Overall)
	for _, m := range contention.Models() {
		switch name := m.Name(); {
		case name == "fair":
			// Algorithm 1 without the asymmetric property, with shares capped on every resource
			// and the most constrained transfer served first, allocates max-min fairly on these
			// trees: the two agree to the last digit here.
			if math.Abs(o[name].MeanAbsErr-o["maxmin"].MeanAbsErr) > 1e-9 {
				t.Errorf("fair %.6f and maxmin %.6f differ", o[name].MeanAbsErr, o["maxmin"].MeanAbsErr)
			}
		case slices.Contains(contention.LearnedNames(), name):
			// Without fitted parameters the learned models are max-min itself.
			if math.Abs(o[name].MeanAbsErr-o["maxmin"].MeanAbsErr) > 1e-9 {
				t.Errorf("%s without parameters %.6f and maxmin %.6f differ", name, o[name].MeanAbsErr, o["maxmin"].MeanAbsErr)
			}
		case name != "maxmin" && o[name].MeanAbsErr <= o["maxmin"].MeanAbsErr:
			t.Errorf("on maxmin ground truth, %s (%.4f) is as good as maxmin (%.4f)", name, o[name].MeanAbsErr, o["maxmin"].MeanAbsErr)
		}
	}
}

func TestInconsistentRepetitions(t *testing.T) {
	cl, _ := cluster.LoadNamed("ccpe-testbed")
	rows := []datasets.Transfer{
		{Experiment: "random", PatternID: "N10-d1-000", Rep: 0, FlowID: 0, Src: "X1", Dst: "Y1", Bytes: 100, TStart: 0, TEnd: 1},
		{Experiment: "random", PatternID: "N10-d1-000", Rep: 1, FlowID: 0, Src: "X1", Dst: "Y2", Bytes: 100, TStart: 0, TEnd: 1},
	}
	if _, _, err := Validate(context.Background(), cl, rows, contention.DefaultParams(), nil, contention.Models(), experiments.WithRole(experiments.HeldOut)); err == nil {
		t.Error("a transfer that changes between repetitions was accepted")
	}
}

// Validate writes one row per held-out transfer and model, the transfers in pattern order and
// the models in the order given, each row's error its own prediction's; Errors and ModelRows
// select one model's.
func TestRowsLongFormat(t *testing.T) {
	cl, rows := simulated(t, "maxmin", 0.02, 3)
	models := contention.Models()
	preds, acc, err := Validate(context.Background(), cl, rows, contention.DefaultParams(), nil, models, experiments.WithRole(experiments.HeldOut))
	if err != nil {
		t.Fatal(err)
	}
	if len(preds) == 0 || len(preds)%len(models) != 0 {
		t.Fatalf("%d rows for %d models", len(preds), len(models))
	}
	for i, r := range preds {
		first := preds[i-i%len(models)]
		if r.Model != models[i%len(models)].Name() || r.PatternID != first.PatternID || r.FlowID != first.FlowID {
			t.Fatalf("row %d: %s %s/%d, want %s of %s/%d", i, r.Model, r.PatternID, r.FlowID, models[i%len(models)].Name(), first.PatternID, first.FlowID)
		}
		if r.Err != SignedError(r.Predicted, r.Measured) {
			t.Errorf("row %d: error %g, its prediction gives %g", i, r.Err, SignedError(r.Predicted, r.Measured))
		}
	}
	for _, m := range models {
		errs := Errors(preds, m.Name(), nil)
		ma, ok := acc.Overall.Model(m.Name())
		if !ok || len(errs) != ma.Transfers || len(ModelRows(preds, m.Name())) != len(errs) {
			t.Errorf("%s: %d errors, %d rows, accuracy over %d transfers", m.Name(), len(errs), len(ModelRows(preds, m.Name())), ma.Transfers)
		}
		// The accuracy sums setting by setting, the rows in pattern order: equal to rounding.
		if abs, _, _ := SummarizeErrors(errs); !scalar.EqualWithinRel(abs, ma.MeanAbsErr, 1e-12) {
			t.Errorf("%s: mean |ε| %g from the rows, %g in the accuracy", m.Name(), abs, ma.MeanAbsErr)
		}
	}
}

// TestValidateRefusesCalibrationExperiments: scoring static_sync would score penalty-table on
// the graphs its table was built from (0.32% "error" before the guard moved here).
func TestValidateRefusesCalibrationExperiments(t *testing.T) {
	cl, rows := simulated(t, "asymmetric", 0.02, 3)
	for _, held := range [][]string{{experiments.StaticSync}, {experiments.P2PSweep}, {experiments.Random, experiments.BidirNIC}, {"no_such"}} {
		if _, _, err := Validate(context.Background(), cl, rows, contention.DefaultParams(), nil, contention.Models(), held); err == nil {
			t.Errorf("Validate(held out %v) accepted a calibration or unknown experiment", held)
		}
	}
}

// TestValidateParallelIsSerial: patterns are predicted on all cores; the rows and the
// accuracy are those of a serial run, in the same order.
func TestValidateParallelIsSerial(t *testing.T) {
	cl, rows := simulated(t, "asymmetric", 0.02, 3)
	held := experiments.WithRole(experiments.HeldOut)
	prev := runtime.GOMAXPROCS(1)
	serialRows, serialAcc, err := Validate(context.Background(), cl, rows, contention.DefaultParams(), nil, contention.Models(), held)
	runtime.GOMAXPROCS(max(4, prev))
	if err != nil {
		t.Fatal(err)
	}
	parRows, parAcc, err := Validate(context.Background(), cl, rows, contention.DefaultParams(), nil, contention.Models(), held)
	runtime.GOMAXPROCS(prev)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(serialRows, parRows) || !reflect.DeepEqual(serialAcc, parAcc) {
		t.Error("the parallel validation differs from the serial one")
	}
}

// TestNoiseLimitMatchesAPerfectPredictor draws transfers whose repetitions scatter normally
// around a known expectation and checks that the noise limit computed from the repetitions
// alone is what the perfect predictor (the expectation itself) scores against the means.
func TestNoiseLimitMatchesAPerfectPredictor(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	const mu, sigma, reps, transfers = 1.0, 0.15, 3, 20000
	var nl noiseTally
	var absErr, within float64
	for range transfers {
		x := make([]float64, reps)
		for k := range x {
			x[k] = mu + sigma*rng.NormFloat64()
		}
		m, sd := stat.MeanStdDev(x, nil)
		a, w, ok := noiseTerms(m, sd, reps)
		if !ok {
			t.Fatal("three repetitions gave no noise terms")
		}
		nl.abs, nl.within = append(nl.abs, a), append(nl.within, w)
		e := (mu - m) / m
		absErr += math.Abs(e) / transfers
		if math.Abs(e) <= Within {
			within += 1.0 / transfers
		}
	}
	got := nl.limit()
	// The formulas take x̄ for μ in the denominator and average a nonlinear function of s:
	// 5% on the mean |ε| and 3 points on the share are what that costs at σ/μ = 15%.
	if math.Abs(got.MeanAbsErr-absErr)/absErr > 0.05 || math.Abs(got.Within10-within) > 0.03 {
		t.Errorf("noise limit: mean |ε| %.4f, within %.3f; the perfect predictor scored %.4f and %.3f", got.MeanAbsErr, got.Within10, absErr, within)
	}
	if _, _, ok := noiseTerms(1, 0, 1); ok {
		t.Error("one repetition gave noise terms")
	}
}

func TestSituationOf(t *testing.T) {
	cl, err := cluster.LoadNamed("ccpe-testbed")
	if err != nil {
		t.Fatal(err)
	}
	flows := []contention.Flow{
		{Src: "X1", Dst: "X2"}, // alone on its path; X2 sends (to X3): acknowledgements busy
		{Src: "X2", Dst: "X3"}, // shares X3 with X4→X3; X2 receives X1→X2: busy
		{Src: "X4", Dst: "X3"}, // shares X3; X4 receives nothing, X3 sends nothing: quiet
		{Src: "X5", Dst: "Y1"}, // shares X5 with X5→X6, the backbone X→Y with X7→Y2: quiet
		{Src: "X5", Dst: "X6"}, // shares X5: quiet
		{Src: "X7", Dst: "Y2"}, // shares the backbone X→Y; Y2 sends Y2→X8: busy
		{Src: "Y2", Dst: "X8"}, // alone: the only transfer Y→X
		{Src: "Y3", Dst: "Y4"}, // the same pair twice: every part shared, quiet
		{Src: "Y3", Dst: "Y4"},
		{Src: "Y5", Dst: "Y6"}, // alone and quiet
	}
	want := []string{"alone/ack-busy", "receiver/ack-busy", "receiver/ack-quiet", "sender+core/ack-quiet", "sender/ack-quiet",
		"core/ack-busy", "alone/ack-busy", "sender+receiver/ack-quiet", "sender+receiver/ack-quiet", "alone/ack-quiet"}
	sit, err := situationOf(cl, flows)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range sit {
		if got := situationName(s); got != want[i] {
			t.Errorf("flow %d (%s→%s): %s, want %s", i, flows[i].Src, flows[i].Dst, got, want[i])
		}
	}
}

// TestGroupsAddUp checks the accuracy per situation and per size class against the
// predictions' rows: every held-out transfer in exactly one group of each, each model's figures
// those of its rows there.
func TestGroupsAddUp(t *testing.T) {
	cl, rows := simulated(t, "maxmin", 0.02, 3)
	var models []contention.Model
	for _, name := range []string{"maxmin", "hockney"} {
		m, _ := contention.ModelByName(name)
		models = append(models, m)
	}
	preds, acc, err := Validate(context.Background(), cl, rows, contention.DefaultParams(), nil, models, experiments.WithRole(experiments.HeldOut))
	if err != nil {
		t.Fatal(err)
	}
	// The rows' situations, from their patterns' flows, and size classes.
	type key struct{ experiment, pattern string }
	byPattern := map[key][]contention.Flow{}
	for _, r := range ModelRows(preds, models[0].Name()) {
		k := key{r.Experiment, r.PatternID}
		byPattern[k] = append(byPattern[k], contention.Flow{Src: r.Src, Dst: r.Dst})
	}
	type scores struct{ errs, secs []float64 }
	want := map[string]map[string]*scores{} // group → model → its rows' errors
	for _, r := range preds {
		sits, err := situationOf(cl, byPattern[key{r.Experiment, r.PatternID}])
		if err != nil {
			t.Fatal(err)
		}
		for _, group := range []string{situationName(sits[r.FlowID]), sizeName(sizeClass(float64(r.Bytes)))} {
			if want[group] == nil {
				want[group] = map[string]*scores{}
			}
			s := want[group][r.Model]
			if s == nil {
				s = &scores{}
				want[group][r.Model] = s
			}
			s.errs = append(s.errs, r.Err)
			s.secs = append(s.secs, math.Abs(r.Predicted-r.Measured))
		}
	}
	noise := 0 // the group's noise-limit transfers, added up by check
	check := func(name string, g GroupAccuracy) int {
		if len(g.Models) != len(models) {
			t.Fatalf("%s: %d models", name, len(g.Models))
		}
		for _, m := range g.Models {
			s := want[name][m.Model]
			abs, bias, within := SummarizeErrors(s.errs)
			sorted := slices.Sorted(slices.Values(s.secs))
			med := sorted[len(sorted)/2]
			if len(sorted)%2 == 0 {
				med = (sorted[len(sorted)/2-1] + med) / 2
			}
			if len(s.errs) != g.Transfers || abs != m.MeanAbsErr || bias != m.MeanErr || within != m.Within10 || m.MedianAbsErrS == nil || med != *m.MedianAbsErrS {
				t.Errorf("%s %s: %+v, rows give %d transfers, %g, %g, %g, %g s", name, m.Model, m, len(s.errs), abs, bias, within, med)
			}
		}
		noise += g.NoiseLimit.Transfers
		return g.Transfers
	}
	// Every transfer in one group of each kind, and so is every transfer the noise limit
	// counts (those with two repetitions or more).
	total := 0
	for _, s := range acc.Situations {
		total += check(s.Situation, s.GroupAccuracy)
	}
	transfers := len(preds) / len(models) // a row per transfer and model
	if total != transfers || len(acc.Situations) < 4 || noise != acc.Overall.NoiseLimit.Transfers {
		t.Fatalf("%d transfers (%d with a noise term) in %d situations, %d transfers in the rows (%d)", total, noise, len(acc.Situations), transfers, acc.Overall.NoiseLimit.Transfers)
	}
	total, noise = 0, 0
	var names []string
	for _, s := range acc.Sizes {
		total += check(s.Size, s.GroupAccuracy)
		names = append(names, s.Size)
	}
	if total != transfers || noise != acc.Overall.NoiseLimit.Transfers {
		t.Fatalf("%d transfers (%d with a noise term) in %d size classes, %d transfers in the rows (%d)", total, noise, len(acc.Sizes), transfers, acc.Overall.NoiseLimit.Transfers)
	}
	// The default truth's random patterns draw 1, 5, 10 and 20 MB (simulate.DefaultTruth).
	if want := []string{"[512 KiB, 1 MiB)", "[4 MiB, 8 MiB)", "[8 MiB, 16 MiB)", "[16 MiB, 32 MiB)"}; !slices.Equal(names, want) {
		t.Errorf("size classes %v, want %v", names, want)
	}
}

// TestSizeClasses checks the classes against their definition, [2^k, 2^(k+1)) bytes, at both
// ends of classes and of the range.
func TestSizeClasses(t *testing.T) {
	for _, c := range []struct {
		bytes  float64
		name   string
		lo, hi int64
	}{
		{0, "[0 B, 1 B)", 0, 1},
		{0.5, "[0 B, 1 B)", 0, 1},
		{math.NaN(), "[0 B, 1 B)", 0, 1},
		{1, "[1 B, 2 B)", 1, 2},
		{1000, "[512 B, 1 KiB)", 512, 1024},
		{1 << 20, "[1 MiB, 2 MiB)", 1 << 20, 2 << 20},
		{3 << 20, "[2 MiB, 4 MiB)", 2 << 20, 4 << 20},
		{1<<20 - 1, "[512 KiB, 1 MiB)", 512 << 10, 1 << 20},
		{1<<62 - 1024, "[2 EiB, 4 EiB)", 1 << 61, 1 << 62},
		{1 << 62, "[4 EiB, ∞)", 1 << 62, 0},
		{math.MaxInt64, "[4 EiB, ∞)", 1 << 62, 0},
		{1e30, "[4 EiB, ∞)", 1 << 62, 0},
	} {
		k := sizeClass(c.bytes)
		lo, hi := sizeBounds(k)
		if got := sizeName(k); got != c.name || lo != c.lo || hi != c.hi {
			t.Errorf("%g bytes: %q [%d, %d), want %q [%d, %d)", c.bytes, got, lo, hi, c.name, c.lo, c.hi)
		}
	}
}

func TestMedian(t *testing.T) {
	x := []float64{5, 1, 4}
	for _, c := range []struct {
		x    []float64
		want float64
	}{{nil, 0}, {[]float64{2}, 2}, {x, 4}, {[]float64{3, 1, 4, 2}, 2.5}} {
		if got := median(c.x); got != c.want {
			t.Errorf("median(%v) = %g, want %g", c.x, got, c.want)
		}
	}
	if x[0] != 5 || x[1] != 1 {
		t.Errorf("median changed its input: %v", x)
	}
}

// An older accuracy.json has no median error in time: the report shows n/a
// there, not 0.0 ms, and the median where the file has it.
func TestGroupTablesMedian(t *testing.T) {
	med := 0.0125
	acc := &Accuracy{Default: "maxmin", Situations: []SituationAccuracy{
		{Situation: "alone/ack-busy", GroupAccuracy: GroupAccuracy{Transfers: 3, Models: []GroupModel{{Model: "maxmin", Within10: 1}}}},
		{Situation: "sender/ack-busy", GroupAccuracy: GroupAccuracy{Transfers: 2, Models: []GroupModel{{Model: "maxmin", MedianAbsErrS: &med}}}},
	}}
	tables := acc.GroupTables()
	if len(tables) != 1 || tables[0].ID != "situations" || len(tables[0].Rows) != 2 {
		t.Fatalf("tables %+v, want the situations' only", tables)
	}
	old, cur := tables[0].Rows[0], tables[0].Rows[1]
	if !old.HasDefault || old.HasMedian || !cur.HasMedian || cur.MedianMs != 12.5 {
		t.Errorf("without a median %+v, with one %+v", old, cur)
	}
	var text strings.Builder
	if err := acc.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []*regexp.Regexp{regexp.MustCompile(`alone/ack-busy .* \+0\.00%  +—  +maxmin`), regexp.MustCompile(`sender/ack-busy .* 12\.5 ms  +maxmin`)} {
		if !want.MatchString(text.String()) {
			t.Errorf("the text report lacks %s:\n%s", want, text.String())
		}
	}
}

// predictions.parquet in the wide format of older runs reads as long rows, a row per model it
// has columns for; in the long format it reads back as written.
func TestReadPredictionsBothFormats(t *testing.T) {
	dir := t.TempDir()
	wide := []wideRow{{HeldOut: HeldOut{Experiment: "random", PatternID: "N10-d1-000", FlowID: 0, Src: "X1", Dst: "Y1", Bytes: 100,
		Setting: "N10-d1", Reps: 3, Measured: 2}, PredMaxMin: 2.2, ErrMaxMin: 0.1, PredAckPathAlpha: 1.9, ErrAckPathAlpha: -0.05}}
	path := dir + "/wide.parquet"
	if err := datasets.WriteParquetFile(path, widePredictionsTable, wide); err != nil {
		t.Fatal(err)
	}
	rows, err := ReadPredictions(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 12 {
		t.Fatalf("%d rows from one wide row, want one per model of the wide format (12)", len(rows))
	}
	mm, aa := ModelRows(rows, "maxmin"), ModelRows(rows, "ackpath-alpha")
	if len(mm) != 1 || mm[0].Predicted != 2.2 || mm[0].Err != 0.1 || len(aa) != 1 || aa[0].Err != -0.05 || aa[0].Measured != 2 {
		t.Errorf("maxmin %+v, ackpath-alpha %+v", mm, aa)
	}
	long := dir + "/long.parquet"
	if err := datasets.WriteParquetFile(long, PredictionsTable, rows); err != nil {
		t.Fatal(err)
	}
	back, err := ReadPredictions(long)
	if err != nil || !reflect.DeepEqual(back, rows) {
		t.Errorf("long format read back %v (%v), wrote %v", back, err, rows)
	}
	if _, err := ReadPredictions(dir + "/none.parquet"); err == nil {
		t.Error("a missing file was read")
	}
}
