package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/estimate"
	"github.com/commcal/commcal/experiments"
	"github.com/commcal/commcal/internal/atomicio"
	"github.com/commcal/commcal/internal/badinput"
	"github.com/commcal/commcal/internal/provenance"
	"github.com/commcal/commcal/validate"
)

// env is what every command's run function gets beside its options: where to print, the
// structured logger, the creation time written into outputs, and whether stderr is a
// terminal (progress bars).
type env struct {
	stdout, stderr io.Writer
	log            *slog.Logger
	when           time.Time
	terminal       bool
}

// envFrom builds the environment from the global flags (--log-level, --log-format, --quiet)
// and SOURCE_DATE_EPOCH.
func envFrom(c *cli.Context) (env, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(c.String("log-level"))); err != nil {
		return env{}, usagef("--log-level: %v", err)
	}
	when, err := provenance.Created()
	if err != nil {
		return env{}, usagef("%v", err)
	}
	e := env{stdout: c.App.Writer, stderr: c.App.ErrWriter, when: when, terminal: isTerminal(c.App.ErrWriter)}
	if c.Bool("quiet") {
		e.stdout, e.terminal, lvl = io.Discard, false, slog.LevelError
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch c.String("log-format") {
	case "text":
		e.log = slog.New(slog.NewTextHandler(e.stderr, opts))
	case "json":
		e.log = slog.New(slog.NewJSONHandler(e.stderr, opts))
	default:
		return env{}, usagef("--log-format %q: want text or json", c.String("log-format"))
	}
	return e, nil
}

// isTerminal reports whether w is a terminal, for progress bars.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progress returns a row counter drawn on stderr when it is a terminal, and a function that
// clears it; elsewhere both do nothing and the structured log says what happened.
func (e env) progress(what string) (func(int64), func()) {
	if !e.terminal {
		return nil, func() {}
	}
	bar := progressbar.NewOptions64(-1, progressbar.OptionSetWriter(e.stderr),
		progressbar.OptionSetDescription(what), progressbar.OptionShowCount(), progressbar.OptionSetItsString("rows"),
		progressbar.OptionShowIts(), progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
	return func(n int64) { bar.Set64(n) }, func() { bar.Clear() }
}

// countBar is a bar of what (measurements, datasets) done out of a total, drawn on stderr from
// the first count on, for a terminal; clear removes it.
func (e env) countBar(what string) (set func(done, total int), clear func()) {
	var bar *progressbar.ProgressBar
	return func(done, total int) {
			if bar == nil {
				bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(e.stderr),
					progressbar.OptionSetDescription(what), progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(true))
			}
			bar.Set(done)
		}, func() {
			if bar != nil {
				bar.Clear()
			}
		}
}

// printJSON prints v as commcal's stable JSON.
func (e env) printJSON(v any) error {
	data, err := datasets.EncodeJSON(v)
	if err != nil {
		return err
	}
	_, err = e.stdout.Write(data)
	return err
}

// outputOptions are --out and what may happen to an existing output.
type outputOptions struct {
	Out         string
	Force, Wait bool
}

// outputPolicy says how a command treats an existing --out.
type outputPolicy int

const (
	// replaceOutput replaces an earlier commcal output (run, estimate, validate, compare).
	replaceOutput outputPolicy = iota
	// keepOutput needs --force even for an earlier commcal output (ingest, simulate, measure:
	// a dataset may be the only copy of a measurement).
	keepOutput
)

// outFlags are --out (with its environment variable and default) and the flags that decide
// what may happen to an existing output: --force and --wait.
func outFlags(env, value, usage string) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Value: value, EnvVars: []string{env}, Usage: usage},
		&cli.BoolFlag{Name: "force", Usage: "replace an existing --out that commcal did not write, or an earlier dataset (never an input)"},
		&cli.BoolFlag{Name: "wait", EnvVars: []string{"COMMCAL_WAIT"}, Usage: "wait for another commcal writing the same --out instead of failing"},
	}
}

func outputFrom(c *cli.Context) outputOptions {
	return outputOptions{Out: c.String("out"), Force: c.Bool("force"), Wait: c.Bool("wait")}
}

// claim claims --out (atomicio.Claim: never an input, never something commcal did not write
// unless --force, locked against a concurrent run). inputs are every path the command reads;
// empty ones are skipped.
func (o outputOptions) claim(ctx context.Context, policy outputPolicy, inputs ...string) (*atomicio.Claimed, error) {
	if o.Out == "" {
		return nil, usagef("--out is required")
	}
	return claimWaiting(atomicio.Claim(ctx, atomicio.Target{Path: o.Out, Inputs: inputs, Force: o.Force,
		ReplaceNeedsForce: policy == keepOutput, Wait: o.Wait}))
}

// claimWaiting adds, to a claim that found its output busy, the flag that waits for it (for
// the commands that have --wait).
func claimWaiting(c *atomicio.Claimed, err error) (*atomicio.Claimed, error) {
	if errors.Is(err, atomicio.ErrBusy) {
		err = fmt.Errorf("%w, or pass --wait", err)
	}
	return c, err
}

// build builds the directory --out through fill, in a temporary sibling exchanged with it
// when fill succeeds and removed when it fails.
func (o outputOptions) build(fill func(tmp string) error) error {
	return atomicio.BuildDir(o.Out, fill)
}

// paramsOptions are the model parameters the command line gives: a --params file and the
// single values that override it (nil when not given).
type paramsOptions struct {
	File                     string
	Efficiency, ContraFactor *float64
}

// paramsFlags are the flags of the commands that run the contention models.
func paramsFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "params", EnvVars: []string{"COMMCAL_PARAMS"},
			Usage: "contention parameters as JSON (efficiency, ceiling_bps, nic_bps, backbone_bps, contra_factor, latency_s, ...): the defaults a calibration starts from"},
		&cli.Float64Flag{Name: "efficiency", Usage: "share of nominal link rates delivered as goodput (default 0.94)"},
		&cli.Float64Flag{Name: "contra-factor", Usage: "φ of asymmetric-fitted, from 0 (fair) to 1 (asymmetric); default: the calibration's, else 1"},
	}
}

func paramsFrom(c *cli.Context) paramsOptions {
	return paramsOptions{File: c.String("params"), Efficiency: ifSet(c, "efficiency", c.Float64),
		ContraFactor: ifSet(c, "contra-factor", c.Float64)}
}

// ifSet is flag name's value read by get when the command line or the environment sets it,
// else nil: an override of a value that comes from elsewhere (a file, a truth).
func ifSet[T any](c *cli.Context, name string, get func(string) T) *T {
	if !c.IsSet(name) {
		return nil
	}
	v := get(name)
	return &v
}

// override applies the single values given on the command line to parameters (calibrated
// ones too: the command line wins).
func (o paramsOptions) override(p *contention.Params) {
	if o.Efficiency != nil {
		p.Efficiency = *o.Efficiency
	}
	if o.ContraFactor != nil {
		p.ContraFactor = *o.ContraFactor
	}
}

// load reads --params (range-checked, the file named in errors) and applies the single
// values over it.
func (o paramsOptions) load() (contention.Params, error) {
	p := contention.DefaultParams()
	if o.File != "" {
		data, err := datasets.ReadJSONFileData(o.File, &p)
		if err != nil {
			return p, badinput.Wrap(o.File, err)
		}
		// A null would read as 0, the default: refused as a calibration's are.
		if key, line := estimate.UnflaggedNull(data, &contention.Params{}); line > 0 {
			return p, badinput.Errorf(o.File, "line %d, key %s: null, want a value or the key left out", line, badinput.Quote(key))
		}
		if err := p.Validate(); err != nil {
			return p, badinput.Wrap(o.File, err)
		}
	}
	o.override(&p)
	if !(p.Efficiency > 0 && p.Efficiency <= 1) || !(p.ContraFactor >= 0 && p.ContraFactor <= 1) {
		return p, usagef("--efficiency must lie in (0, 1] and --contra-factor in [0, 1]")
	}
	return p, nil
}

// heldOutFlag lists the experiments scored by validation.
func heldOutFlag() cli.Flag {
	return &cli.StringFlag{Name: "held-out", Value: strings.Join(experiments.WithRole(experiments.HeldOut), ","), EnvVars: []string{"COMMCAL_HELD_OUT"},
		Usage: "experiments scored (never used for fitting), comma-separated"}
}

// collectivesFlag chooses the algorithms of measured collectives when validating.
func collectivesFlag() cli.Flag {
	return &cli.StringFlag{Name: "collective-algorithms", EnvVars: []string{"COMMCAL_COLLECTIVE_ALGORITHMS"},
		Usage: "how the collectives table's all-to-alls, all-gathers and broadcasts are expanded into rounds: auto:openmpi or auto:mpich (that library's default rules), or an algorithm's name (see docs/models.md, Collectives); the schedules table's follow the algorithm each names (default: auto: and the MPI library the dataset names, else " + validate.DefaultAlgorithms + ", with a warning)"}
}

// collectiveAlgorithms reads --collective-algorithms.
func collectiveAlgorithms(c *cli.Context) (string, error) {
	v := c.String("collective-algorithms")
	if v == "" {
		return "", nil
	}
	if err := validate.ParseAlgorithms(v); err != nil {
		return "", usagef("--collective-algorithms: %v", err)
	}
	return v, nil
}

// heldOut reads --held-out: held-out experiments only (experiments.CheckHeldOut).
func heldOut(c *cli.Context) ([]string, error) {
	var out []string
	for _, e := range strings.Split(c.String("held-out"), ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	if err := experiments.CheckHeldOut(out); err != nil {
		return nil, usagef("--held-out %s: %v", c.String("held-out"), err)
	}
	return out, nil
}

// clusterFlag is --cluster, with a note on when it may be left out ("" when it may not).
func clusterFlag(note string) cli.Flag {
	usage := "cluster description (.toml or .json) or a built-in cluster (" + strings.Join(cluster.Examples(), ", ") + ")"
	if note != "" {
		usage += "; " + note
	}
	return &cli.StringFlag{Name: "cluster", Aliases: []string{"c"}, EnvVars: []string{"COMMCAL_CLUSTER"}, Usage: usage}
}

// loadCluster loads a cluster description or built-in cluster; a command that cannot do
// without one says so.
func loadCluster(ref string) (*cluster.Cluster, error) {
	if ref == "" {
		return nil, usagef("--cluster is required")
	}
	cl, err := cluster.LoadNamed(ref)
	if err != nil {
		return nil, badinput.Wrap(ref, err)
	}
	return cl, nil
}

// sourceOptions say how to read measurement logs (ingest, run).
type sourceOptions struct {
	Cluster, Format, Table, Src, Dst, Experiment, Pattern, Ranks, Role, MPILibrary string
}

// sourceFlags are the flags of the commands that read measurement logs (ingest, run).
func sourceFlags() []cli.Flag {
	return []cli.Flag{
		clusterFlag("may be left out when every input is a commcal dataset directory"),
		&cli.StringFlag{Name: "format", Value: datasets.FormatAuto, EnvVars: []string{"COMMCAL_FORMAT"},
			Usage: "input format: " + strings.Join(datasets.Formats, ", ")},
		&cli.StringFlag{Name: "table", Usage: "table of CSV/Parquet inputs (default: inferred from the columns): " +
			strings.Join(datasets.TableNames(), ", ")},
		&cli.StringFlag{Name: "src", Usage: "node of rank 0 (the sender) of MPI benchmark and SimGrid outputs, sending node of iperf3 runs (iperf3 default: by address)"},
		&cli.StringFlag{Name: "dst", Usage: "node of rank 1 (the receiver) of MPI benchmark and SimGrid outputs, receiving node of iperf3 runs"},
		&cli.StringFlag{Name: "ranks", Usage: "nodes of the MPI ranks, rank 0 first, of outputs that do not name them (saturation logs, multi-pair and collective benchmarks): a comma-separated list, or @FILE with one node per line"},
		&cli.StringFlag{Name: "role", Usage: "role of every transfer of benchmark outputs: " + strings.Join(datasets.Roles, " or ") + " (default: each format's own; see docs/formats.md)"},
		&cli.StringFlag{Name: "experiment", Usage: "experiment of iperf3 transfers (default p2p_sweep)"},
		&cli.StringFlag{Name: "pattern", Usage: `pattern_id of iperf3 transfers (default "src>dst:bytes")`},
		&cli.StringFlag{Name: "mpi-library", EnvVars: []string{"COMMCAL_MPI_LIBRARY"}, Usage: "the MPI library that ran the measured collectives: " +
			strings.Join(datasets.MPILibraries(), " or ") + "; kept in the manifest, it chooses how validation expands them into rounds (auto:LIBRARY) unless --collective-algorithms says otherwise. No log format names it"},
	}
}

func sourcesFrom(c *cli.Context) sourceOptions {
	return sourceOptions{Cluster: c.String("cluster"), Format: c.String("format"), Table: c.String("table"), Src: c.String("src"),
		Dst: c.String("dst"), Experiment: c.String("experiment"), Pattern: c.String("pattern"), Ranks: c.String("ranks"), Role: c.String("role"),
		MPILibrary: c.String("mpi-library")}
}

// rankNodes reads --ranks: a comma-separated list of nodes, or @FILE with one node per line
// (blank lines and lines starting with # are skipped).
func rankNodes(v string) ([]string, error) {
	if v == "" {
		return nil, nil
	}
	text := v
	if name, ok := strings.CutPrefix(v, "@"); ok {
		b, err := readSmallFile(name, maxRanksFile)
		if err != nil {
			return nil, badinput.Wrap(name, fmt.Errorf("--ranks: %w", err))
		}
		var nodes []string
		for l := range strings.Lines(string(b)) {
			l = strings.TrimSpace(l)
			if l != "" && !strings.HasPrefix(l, "#") {
				nodes = append(nodes, l)
			}
		}
		text = strings.Join(nodes, ",")
	}
	nodes := strings.Split(text, ",")
	for i, n := range nodes {
		nodes[i] = strings.TrimSpace(n)
		if nodes[i] == "" {
			return nil, usagef("--ranks: rank %d has no node (want a comma-separated list of nodes, rank 0 first)", i)
		}
	}
	return nodes, nil
}

// maxRanksFile bounds the size of a --ranks file (a million ranks of short names).
const maxRanksFile = 64 << 20

// readSmallFile reads a file of at most limit bytes.
func readSmallFile(name string, limit int64) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return b, nil
}

// load expands the input paths and settles the cluster: --cluster, or the one cluster of
// the dataset directories given.
func (o sourceOptions) load(paths []string) (*cluster.Cluster, []datasets.Source, error) {
	if !slices.Contains(datasets.Formats, o.Format) {
		return nil, nil, usagef("--format %q: want one of %s", o.Format, strings.Join(datasets.Formats, ", "))
	}
	if o.Table != "" {
		if _, ok := datasets.TableByName(o.Table); !ok {
			return nil, nil, usagef("--table %q: want one of %s", o.Table, strings.Join(datasets.TableNames(), ", "))
		}
	}
	if o.Role != "" && !slices.Contains(datasets.Roles, o.Role) {
		return nil, nil, usagef("--role %q: want one of %s", o.Role, strings.Join(datasets.Roles, ", "))
	}
	if o.MPILibrary != "" {
		if err := datasets.CheckMPILibrary(o.MPILibrary); err != nil {
			return nil, nil, usagef("--mpi-library: %v", err)
		}
	}
	ranks, err := rankNodes(o.Ranks)
	if err != nil {
		return nil, nil, err
	}
	base := datasets.Source{Format: o.Format, Table: o.Table, Src: o.Src, Dst: o.Dst, Ranks: ranks, Role: o.Role,
		Experiment: o.Experiment, PatternID: o.Pattern}
	srcs, err := datasets.ExpandSources(paths, base)
	if err != nil {
		return nil, nil, badinput.Wrap("", err)
	}
	if o.Cluster != "" {
		cl, err := loadCluster(o.Cluster)
		return cl, srcs, err
	}
	// No --cluster: every input must be a dataset directory, all of one cluster.
	var cl *cluster.Cluster
	for _, p := range paths {
		m, err := datasets.ReadManifest(p)
		if err != nil {
			return nil, nil, usagef("--cluster is required unless every input is a commcal dataset directory (%s is not)", p)
		}
		c2, err := cluster.New(m.Cluster)
		if err != nil {
			return nil, nil, badinput.Wrap(p, err)
		}
		if cl != nil && cl.Name() != c2.Name() {
			return nil, nil, usagef("inputs belong to clusters %s and %s; give --cluster", cl.Name(), c2.Name())
		}
		cl = c2
	}
	return cl, srcs, nil
}

// hockneyBreaksFlag gives the sizes at which Hockney's segments start.
func hockneyBreaksFlag() cli.Flag {
	return &cli.StringFlag{Name: "hockney-breaks", EnvVars: []string{"COMMCAL_HOCKNEY_BREAKS"},
		Usage: "sizes (B) at which Hockney's segments start, comma-separated, or SimGrid's *_breakpoints file (default: found by Bai–Perron)"}
}

// hockneyBreaks reads --hockney-breaks: a comma-separated list of sizes, or a file.
func hockneyBreaks(v string) ([]float64, error) {
	if v == "" {
		return nil, nil
	}
	if _, err := os.Stat(v); err == nil {
		return datasets.ReadBreakpoints(v)
	}
	var out []float64
	for _, f := range strings.Split(v, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(x > 0) || math.IsInf(x, 0) || (len(out) > 0 && x <= out[len(out)-1]) {
			return nil, usagef("--hockney-breaks %q: want increasing positive sizes in bytes, or a breakpoints file", v)
		}
		out = append(out, x)
	}
	return out, nil
}

// noVerifyFlag skips the checksums of a dataset's tables.
func noVerifyFlag() cli.Flag {
	return &cli.BoolFlag{Name: "no-verify", EnvVars: []string{"COMMCAL_NO_VERIFY"},
		Usage: "do not check the dataset's table files against the SHA-256 sums of its manifest"}
}

// openDataset opens a dataset directory given as an argument, its tables checked against
// the manifest's checksums unless noVerify; one that is not a dataset is bad input.
func openDataset(dir string, noVerify bool) (*datasets.Dataset, error) {
	ds, err := datasets.OpenWith(dir, datasets.OpenOptions{NoVerify: noVerify})
	return ds, badinput.Wrap(dir, err)
}
