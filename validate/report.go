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
	if err := a.writeGroups(w); err != nil {
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

// writeGroups prints the accuracy per situation and per size class.
func (a *Accuracy) writeGroups(w io.Writer) error {
	sits := make([]namedGroup, len(a.Situations))
	for i, s := range a.Situations {
		sits[i] = namedGroup{s.Situation, &s.GroupAccuracy}
	}
	if err := a.writeGroup(w, "situation (all settings)", sits,
		"the data path's parts shared with other transfers going the same way, or alone; ack-busy: its sender receives or its receiver sends another transfer"); err != nil {
		return err
	}
	sizes := make([]namedGroup, len(a.Sizes))
	for i, s := range a.Sizes {
		sizes[i] = namedGroup{s.Size, &s.GroupAccuracy}
	}
	return a.writeGroup(w, "size (all settings)", sizes,
		"bytes per transfer, by power of two; a median error in time that stays flat as sizes grow is a delay, not a share of the rate")
}

// namedGroup is a group of transfers and the name it is printed under.
type namedGroup struct {
	name string
	acc  *GroupAccuracy
}

// writeGroup prints one table of groups: each group's noise limit, the default model's share
// within ±10%, mean |ε|, bias and median error in time, and the best model's
// (GroupAccuracy.Best); then what its names mean.
func (a *Accuracy) writeGroup(w io.Writer, title string, groups []namedGroup, legend string) error {
	if len(groups) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s\ttransfers\tnoise limit\t%s *\tbias\tmedian |error|\tbest model\t\n", title, a.Default)
	share := func(within, abs float64) string { return fmt.Sprintf("%.1f%% / %.2f%%", 100*within, 100*abs) }
	for _, g := range groups {
		def, bias, secs := "—", "—", "—"
		if m, ok := g.acc.Model(a.Default); ok {
			def, bias = share(m.Within10, m.MeanAbsErr), fmt.Sprintf("%+.2f%%", 100*m.MeanErr)
			secs = fmt.Sprintf("%.1f ms", 1e3*m.MedianAbsErrS)
		}
		best := g.acc.Best()
		nl := "—"
		if g.acc.NoiseLimit.Transfers > 0 {
			nl = share(g.acc.NoiseLimit.Within10, g.acc.NoiseLimit.MeanAbsErr)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s %s\t\n", g.name, g.acc.Transfers, nl, def, bias, secs, best.Model, share(best.Within10, best.MeanAbsErr))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "(share within ±10%% / mean |ε|; %s)\n", legend)
	return err
}
