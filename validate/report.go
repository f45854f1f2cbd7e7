package validate

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
)

// WriteText prints the accuracy as one aligned table: a line per setting and model.
func (a *Accuracy) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "setting\tpatterns\tmodel\ttransfers\tsteps\tmean |ε|\tSE\tbias\t|ε| ≤ 10%\tasym. transfers\tasym. mean |ε|")
	for _, s := range WithOverall(a.Settings, a.Overall) {
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
	if err := a.writeCollectives(w); err != nil {
		return err
	}
	if err := a.writeGroups(w); err != nil {
		return err
	}
	if err := a.writeInSample(w); err != nil {
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

// writeGroups prints the accuracy per situation and per size class (GroupTables).
func (a *Accuracy) writeGroups(w io.Writer) error {
	for _, t := range a.GroupTables() {
		if err := writeGroup(w, t); err != nil {
			return err
		}
	}
	return nil
}

// writeGroup prints one table of groups: each group's noise limit, the default model's share
// within ±10%, mean |ε|, bias and median error in time, and the best model's; then what its
// groups are. Everything it prints is in t.
func writeGroup(w io.Writer, t GroupTable) error {
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s (all settings)\ttransfers\tnoise limit\t%s *\tbias\tmedian |error|\tbest model\t\n", t.Column, t.Default)
	share := func(within, abs float64) string { return fmt.Sprintf("%.1f%% / %.2f%%", 100*within, 100*abs) }
	for _, r := range t.Rows {
		def, bias, ms, nl := "—", "—", "—", "—"
		if r.HasDefault {
			def, bias = share(r.DefaultModel.Within10, r.DefaultModel.MeanAbsErr), fmt.Sprintf("%+.2f%%", 100*r.DefaultModel.MeanErr)
		}
		if r.HasMedian {
			ms = fmt.Sprintf("%.1f ms", r.MedianMs)
		}
		if r.NoiseLimit.Transfers > 0 {
			nl = share(r.NoiseLimit.Within10, r.NoiseLimit.MeanAbsErr)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s %s\t\n", r.Name, r.Transfers, nl, def, bias, ms, r.BestModel.Model, share(r.BestModel.Within10, r.BestModel.MeanAbsErr))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "(share within ±10%% / mean |ε|; bias and median |predicted − measured|: the default model's. %s)\n", t.About)
	return err
}

// writeInSample prints, per setting, the noise limit, the default model's accuracy, its
// in-sample reach and the model that reaches furthest in sample; nothing without InSample.
func (a *Accuracy) writeInSample(w io.Writer) error {
	if a.InSample == nil {
		return nil
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "in-sample reach\tnoise limit\t%s * held out\tin sample\tbest in sample\t\n", a.Default)
	share := func(within, abs float64) string { return fmt.Sprintf("%.1f%% / %.2f%%", 100*within, 100*abs) }
	model := func(s SettingAccuracy, name string) string {
		if m, ok := s.Model(name); ok {
			return share(m.Within10, m.MeanAbsErr)
		}
		return "—"
	}
	held := WithOverall(a.Settings, a.Overall)
	for _, s := range WithOverall(a.InSample.Settings, a.InSample.Overall) {
		i := slices.IndexFunc(held, func(h SettingAccuracy) bool { return h.Setting == s.Setting })
		def := "—"
		if i >= 0 {
			def = model(held[i], a.Default)
		}
		nl, best := "—", "—"
		if s.NoiseLimit.Transfers > 0 {
			nl = share(s.NoiseLimit.Within10, s.NoiseLimit.MeanAbsErr)
		}
		if len(s.Models) > 0 {
			b := slices.MinFunc(s.Models, func(x, y ModelAccuracy) int { return BestFirst(x.Within10, x.MeanAbsErr, y.Within10, y.MeanAbsErr) })
			best = b.Model + " " + share(b.Within10, b.MeanAbsErr)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", s.Setting, nl, def, model(s, a.Default), best)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "(share within ±10% / mean |ε|. In sample: every model calibrated on the calibration experiments and these held-out transfers together, then scored on them — how far its form reaches with the parameters best for these patterns, a diagnostic, never an accuracy. Held out to in sample is what fitting on the calibration experiments costs; in sample to the noise limit is the model's form.)")
	return err
}
