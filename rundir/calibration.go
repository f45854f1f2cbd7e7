package rundir

import (
	"path/filepath"
	"slices"

	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/estimate"
	"github.com/commcal/commcal/internal/badinput"
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

// LMOLinkRow is one link's LMO rate, as written to lmo_links.parquet: every pair has a row
// with the fitted 1/β_ij the LMO model computes with, and the rate 8β_ij where the calibration
// identifies it. Where it does not (1/β_ij ≤ 0, an interval of 1/β_ij reaching 0, a rate
// above the line rate), the rate columns hold 0 and NotIdentified says why, so that no row
// holds an infinite rate.
type LMOLinkRow struct {
	I             string  `col:"i" doc:"node"`
	J             string  `col:"j" doc:"node"`
	Rate          float64 `col:"rate_bps" unit:"bit/s" doc:"transmission rate 8β_ij; 0 where not_identified is set"`
	Low           float64 `col:"ci_low_bps" unit:"bit/s" doc:"95% CI, lower bound; 0 where not_identified is set"`
	High          float64 `col:"ci_high_bps" unit:"bit/s" doc:"95% CI, upper bound; 0 where not_identified is set"`
	Values        int64   `col:"sizes" unit:"1" doc:"message sizes averaged"`
	InverseRate   float64 `col:"inverse_rate_s_per_byte" unit:"s/B" doc:"fitted 1/β_ij, which the LMO model computes with"`
	InverseLow    float64 `col:"inverse_ci_low_s_per_byte" unit:"s/B" doc:"95% CI of 1/β_ij, lower bound"`
	InverseHigh   float64 `col:"inverse_ci_high_s_per_byte" unit:"s/B" doc:"95% CI of 1/β_ij, upper bound"`
	NotIdentified string  `col:"not_identified" doc:"why the rate is not identified (calibration.json's not_identified); empty where it is"`
}

var (
	lmoNodesTable = datasets.DefineTable[LMONodeRow]("lmo_nodes")
	lmoLinksTable = datasets.DefineTable[LMOLinkRow]("lmo_links")
)

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
	why := map[string]string{}
	for _, u := range cal.NotIdentified {
		why[u.Parameter] = u.Reason
	}
	links := make([]LMOLinkRow, len(cal.LMO.Links))
	for i, l := range cal.LMO.Links {
		links[i] = LMOLinkRow{I: l.I, J: l.J, Values: int64(l.RateBps.N),
			InverseRate: l.InverseRate.Value, InverseLow: l.InverseRate.CILow, InverseHigh: l.InverseRate.CIHigh,
			NotIdentified: why[estimate.LMOLinkName(l)+"/rate_bps"]}
		if links[i].NotIdentified == "" {
			links[i].Rate, links[i].Low, links[i].High = l.RateBps.Value, l.RateBps.CILow, l.RateBps.CIHigh
		}
	}
	if err := datasets.WriteParquetFile(filepath.Join(dir, LMONodesFile), lmoNodesTable, nodes); err != nil {
		return err
	}
	return datasets.WriteParquetFile(filepath.Join(dir, LMOLinksFile), lmoLinksTable, links)
}

// ReadCalibration reads a calibration.json strictly; any problem is bad input naming the file.
// Beyond the JSON's structure (no unknown key, no key twice) it refuses a null that no
// estimate's nonfinite flag accounts for (estimate.UnflaggedNull: JSON decoding would read it
// as 0), another tool's or format's calibration, parameters out of their ranges, and a
// transfer spread that is not one (ratios finite, positive and increasing).
func ReadCalibration(path string) (*estimate.Calibration, error) {
	var cal estimate.Calibration
	data, err := datasets.ReadJSONFileData(path, &cal)
	if err != nil {
		return nil, badinput.Wrap(path, err)
	}
	if key, line := estimate.UnflaggedNull(data, &cal); line > 0 {
		return nil, badinput.Errorf(path, "line %d, key %s: null, want a value or the key left out (null stands only for an estimate's value or bound that its \"nonfinite\" flag names)", line, badinput.Quote(key))
	}
	if err := checkedCalibration(path, &cal); err != nil {
		return nil, err
	}
	cal.ModelSpreads = nil
	return &cal, nil
}

// calibrationTool is the tool key of the calibrations commcal writes.
const calibrationTool = "commcal"

// checkedCalibration reports what is wrong with a calibration read from a file.
func checkedCalibration(path string, cal *estimate.Calibration) error {
	if !slices.Contains(estimate.CalibrationFormats, cal.Format) {
		return badinput.Errorf(path, "format %s, want %q (a calibration commcal writes)", badinput.Quote(cal.Format), estimate.CalibrationFormat)
	}
	if cal.Tool != "" && cal.Tool != calibrationTool {
		return badinput.Errorf(path, "tool %s, want %q: the calibration of another tool, whose keys mean other things", badinput.Quote(cal.Tool), calibrationTool)
	}
	if cal.Cluster == "" {
		return badinput.Errorf(path, "no cluster named")
	}
	if err := cal.Params.Validate(); err != nil {
		return badinput.Errorf(path, "params: %w", err)
	}
	if t := cal.PenaltyTable(); t != nil {
		if err := t.Validate(); err != nil {
			return badinput.Errorf(path, "penalty table: %w", err)
		}
	}
	if err := cal.Spread.Spread().Check(); err != nil {
		return badinput.Errorf(path, "transfer_spread: %w", err)
	}
	return nil
}
