package pipeline

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/estimate"
	"github.com/commcal/commcal/internal/badinput"
)

// Files of the estimation stage.
const (
	CalibrationFile = "calibration.json"
	LMONodesFile    = "lmo_nodes.parquet"
	LMOLinksFile    = "lmo_links.parquet"
)

// LMONodeRow is one node's LMO delays, as written to lmo_nodes.parquet.
type LMONodeRow struct {
	Node       string  `col:"node" doc:"node"`
	C          float64 `col:"c_s" unit:"s" doc:"fixed processing delay"`
	CLow       float64 `col:"c_ci_low_s" unit:"s" doc:"95% CI of C, lower bound"`
	CHigh      float64 `col:"c_ci_high_s" unit:"s" doc:"95% CI of C, upper bound"`
	CTripletSD float64 `col:"c_triplet_sd_s" unit:"s" doc:"spread of C over the node's triplets"`
	T          float64 `col:"t_s_per_byte" unit:"s/B" doc:"per-byte processing delay"`
	TLow       float64 `col:"t_ci_low_s_per_byte" unit:"s/B" doc:"95% CI of t, lower bound"`
	THigh      float64 `col:"t_ci_high_s_per_byte" unit:"s/B" doc:"95% CI of t, upper bound"`
}

// LMOLinkRow is one link's LMO rate, as written to lmo_links.parquet.
type LMOLinkRow struct {
	I      string  `col:"i" doc:"node"`
	J      string  `col:"j" doc:"node"`
	Rate   float64 `col:"rate_bps" unit:"bit/s" doc:"transmission rate"`
	Low    float64 `col:"ci_low_bps" unit:"bit/s" doc:"95% CI, lower bound"`
	High   float64 `col:"ci_high_bps" unit:"bit/s" doc:"95% CI, upper bound (+Inf when unbounded)"`
	Values int64   `col:"sizes" unit:"1" doc:"message sizes averaged"`
}

var (
	lmoNodesTable = datasets.DefineTable[LMONodeRow]("lmo_nodes")
	lmoLinksTable = datasets.DefineTable[LMOLinkRow]("lmo_links")
)

// Estimate calibrates every model parameter a dataset's calibration experiments allow, and
// stamps the calibration with the tool, its version and the creation time.
func Estimate(cl *cluster.Cluster, in estimate.Inputs, defaults contention.Params, weighted bool, created time.Time) *estimate.Calibration {
	cal := estimate.Calibrate(cl, in, defaults, weighted)
	cal.Tool, cal.Version, cal.Created = "commcal", Version, created.UTC().Format(time.RFC3339)
	return cal
}

// WriteCalibration writes calibration.json and, when the LMO model was fitted, its per-node
// and per-pair tables into dir.
func WriteCalibration(dir string, cal *estimate.Calibration) error {
	if err := datasets.WriteJSONFile(filepath.Join(dir, CalibrationFile), cal); err != nil {
		return err
	}
	if cal.LMO == nil {
		return nil
	}
	nodes := make([]LMONodeRow, len(cal.LMO.Nodes))
	for i, n := range cal.LMO.Nodes {
		nodes[i] = LMONodeRow{Node: n.Name, C: n.C.Value, CLow: n.C.CILow, CHigh: n.C.CIHigh, CTripletSD: n.CTripletSD,
			T: n.T.Value, TLow: n.T.CILow, THigh: n.T.CIHigh}
	}
	links := make([]LMOLinkRow, len(cal.LMO.Links))
	for i, l := range cal.LMO.Links {
		links[i] = LMOLinkRow{I: l.I, J: l.J, Rate: l.RateBps.Value, Low: l.RateBps.CILow, High: l.RateBps.CIHigh, Values: int64(l.RateBps.N)}
	}
	if err := datasets.WriteParquetFile(filepath.Join(dir, LMONodesFile), lmoNodesTable, nodes); err != nil {
		return err
	}
	return datasets.WriteParquetFile(filepath.Join(dir, LMOLinksFile), lmoLinksTable, links)
}

// ReadCalibration reads a calibration.json strictly; any problem is bad input naming the file.
func ReadCalibration(path string) (*estimate.Calibration, error) {
	var cal estimate.Calibration
	if err := datasets.ReadJSONFile(path, &cal); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, badinput.Errorf(path, "no calibration here: %w", err)
		}
		return nil, badinput.Wrap(path, err)
	}
	if err := checkedCalibration(path, &cal); err != nil {
		return nil, err
	}
	return &cal, nil
}

// WriteCalibrationText prints a calibration's parameters with their intervals.
func WriteCalibrationText(w io.Writer, cal *estimate.Calibration) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "parameter\testimate\t95% CI\tn")
	for _, r := range calibrationRows(cal) {
		if r.Summary != nil {
			fmt.Fprintf(tw, "%s\t%s\n", r.Name, strings.Join(r.Summary, "\t"))
			continue
		}
		fmt.Fprintf(tw, "%s\t%s %s\t[%s, %s]\t%d\n", r.Name, num(r.P.Value), r.Unit, num(r.P.CILow), num(r.P.CIHigh), r.P.N)
	}
	tw.Flush()
	for _, s := range cal.Skipped {
		fmt.Fprintf(&b, "skipped %s: %s\n", s.Estimator, s.Reason)
	}
	for _, warn := range cal.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", warn)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// num prints a number in 4 significant digits, and infinities as ∞.
func num(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "∞"
	case math.IsInf(v, -1):
		return "-∞"
	}
	return fmt.Sprintf("%.4g", v)
}
