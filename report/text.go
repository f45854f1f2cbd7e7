package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/commcal/commcal/estimate"
)

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
		if r.NotIdentified != "" {
			fmt.Fprintf(tw, "%s\tnot identified\t\t%d\n", r.Name, r.P.N)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s %s\t[%s, %s]\t%d\n", r.Name, num(r.P.Value), r.Unit, num(r.P.CILow), num(r.P.CIHigh), r.P.N)
	}
	tw.Flush()
	// The LMO links, one per pair, are counted on one line; calibration.json and
	// lmo_links.parquet give each with why.
	links := 0
	for _, u := range cal.NotIdentified {
		if strings.HasPrefix(u.Parameter, "lmo/link/") {
			links++
			continue
		}
		fmt.Fprintf(&b, "not identified %s\n", u)
	}
	if links > 0 {
		fmt.Fprintf(&b, "not identified lmo/link/*/rate_bps: %d links (calibration.json and lmo_links.parquet say why for each)\n", links)
	}
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
