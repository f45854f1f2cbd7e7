package validate

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteText prints the accuracy as one aligned table: a line per setting and model.
func (a *Accuracy) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "setting\tpatterns\tmodel\ttransfers\tsteps\tmean |ε|\tSE\tbias\t|ε| ≤ 10%\tasym. transfers\tasym. mean |ε|")
	rows := append(append([]SettingAccuracy(nil), a.Settings...), a.Overall)
	for _, s := range rows {
		for i, m := range s.Models {
			setting, pats := s.Setting, fmt.Sprint(s.Patterns)
			if i > 0 {
				setting, pats = "", ""
			}
			name := m.Model
			if name == a.Default {
				name += " *"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.1f\t%.2f%%\t%.2f%%\t%+.2f%%\t%.1f%%\t%d\t%.2f%%\n", setting, pats, name,
				m.Transfers, m.MeanSteps, 100*m.MeanAbsErr, 100*m.SEAbsErr, 100*m.MeanErr, 100*m.Within10, m.AsymTransfers, 100*m.AsymMeanAbsErr)
		}
		if nl := s.NoiseLimit; nl.Transfers > 0 {
			fmt.Fprintf(tw, "\t\t(noise limit)\t%d\t\t%.2f%%\t\t\t%.1f%%\t\t\n", nl.Transfers, 100*nl.MeanAbsErr, 100*nl.Within10)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := a.writeSituations(w); err != nil {
		return err
	}
	if a.Default != "" {
		fmt.Fprintf(w, "* the default model (selected by cross-validation on real TCP calibration experiments; see the README)\n")
	}
	for _, warn := range a.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	return nil
}

// writeSituations prints the accuracy per situation: each situation's noise limit, the default
// model's share within ±10%, mean |ε| and bias, and the best model's (SituationAccuracy.Best).
func (a *Accuracy) writeSituations(w io.Writer) error {
	if len(a.Situations) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "situation (all settings)\ttransfers\tnoise limit\t%s *\tbias\tbest model\t\n", a.Default)
	share := func(within, abs float64) string { return fmt.Sprintf("%.1f%% / %.2f%%", 100*within, 100*abs) }
	for _, s := range a.Situations {
		def, bias := "—", "—"
		if m, ok := s.Model(a.Default); ok {
			def, bias = share(m.Within10, m.MeanAbsErr), fmt.Sprintf("%+.2f%%", 100*m.MeanErr)
		}
		best := s.Best()
		nl := "—"
		if s.NoiseLimit.Transfers > 0 {
			nl = share(s.NoiseLimit.Within10, s.NoiseLimit.MeanAbsErr)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s %s\t\n", s.Situation, s.Transfers, nl, def, bias, best.Model, share(best.Within10, best.MeanAbsErr))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "(share within ±10% / mean |ε|; the data path's parts shared with other transfers going the same way, or alone; ack-busy: its sender receives or its receiver sends another transfer)")
	return nil
}
