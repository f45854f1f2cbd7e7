package estimate

import "fmt"

// Estimates lists every estimate of the calibration that has an interval (every Param it
// holds), each under the name Calibration.NotIdentified uses for it:
//
//	hockney/<class>/alpha_s, hockney/<class>/beta_s_per_byte
//	hockney-segments/<class>/<from>-<to>/alpha_s, …/beta_s_per_byte
//	fairness/<experiment>/ceiling_bps, …/capacity_bps, …/saturation_k
//	learned/<model>/<key> (LearnedFit.Estimates)
//	lmo/node/<node>/c_s, …/t_s_per_byte
//	lmo/link/<i>-<j>/rate_bps, …/inverse_rate_s_per_byte
//	thresholds/kappa1_s_per_byte, thresholds/kappa2_s_per_byte
//	l/a_s, l/b_s_per_byte, l/c_s_per_pair, l/d_s_per_byte_pair, l/point/<pairs>/<bytes>/l_s
//
// in the order of the stages. φ (contra/phi) and the threshold sizes (thresholds/s_bytes,
// m1_bytes, m2_bytes) are not Params and are not listed; NotIdentified names them so.
func (c *Calibration) Estimates() []NamedParam {
	var out []NamedParam
	add := func(name string, p Param) { out = append(out, NamedParam{Name: name, Param: p}) }
	for _, h := range c.Hockney {
		add("hockney/"+string(h.Class)+"/alpha_s", h.Alpha)
		add("hockney/"+string(h.Class)+"/beta_s_per_byte", h.Beta)
	}
	for _, sh := range c.HockneySegments {
		for _, seg := range sh.Segments {
			add(SegmentName(sh.Class, seg)+"/alpha_s", seg.Alpha)
			add(SegmentName(sh.Class, seg)+"/beta_s_per_byte", seg.Beta)
		}
	}
	for _, f := range c.Fairness {
		add("fairness/"+f.Experiment+"/ceiling_bps", f.Ceiling)
		add("fairness/"+f.Experiment+"/capacity_bps", f.Capacity)
		add("fairness/"+f.Experiment+"/saturation_k", f.Saturation)
	}
	for _, f := range c.Learned {
		for _, e := range f.Estimates() {
			add("learned/"+f.Model+"/"+e.Name, e.Param)
		}
	}
	if l := c.LMO; l != nil {
		for _, n := range l.Nodes {
			add("lmo/node/"+n.Name+"/c_s", n.C)
			add("lmo/node/"+n.Name+"/t_s_per_byte", n.T)
		}
		for _, k := range l.Links {
			add(LMOLinkName(k)+"/rate_bps", k.RateBps)
			add(LMOLinkName(k)+"/inverse_rate_s_per_byte", k.InverseRate)
		}
	}
	if t := c.Thresholds; t != nil {
		if t.Kappa1 != nil {
			add(thresholdKappa1, *t.Kappa1)
		}
		if t.Kappa2 != nil {
			add(thresholdKappa2, *t.Kappa2)
		}
	}
	if l := c.L; l != nil {
		add("l/a_s", l.A)
		add("l/b_s_per_byte", l.B)
		add("l/c_s_per_pair", l.C)
		add("l/d_s_per_byte_pair", l.D)
		for _, pt := range l.Points {
			add(LPointName(pt)+"/l_s", pt.L)
		}
	}
	return out
}

// Identified says whether the estimate of the given name (Estimates) is used as fitted:
// NotIdentified does not list it.
func (c *Calibration) Identified(name string) bool {
	for _, u := range c.NotIdentified {
		if u.Parameter == name {
			return false
		}
	}
	return true
}

// String is the not-identified parameter as one line: the parameter, why, and what stands in
// for it.
func (u Unidentified) String() string {
	s := fmt.Sprintf("%s: %s", u.Parameter, u.Reason)
	if u.Fallback != "" {
		s += " (instead: " + u.Fallback + ")"
	}
	return s
}
