package estimate

import (
	"slices"
	"testing"

	"github.com/commcal/commcal/contention"
)

// Every registered model has a fitter: some stage of Calibrate fits the parameter set it
// reads, so that a model added to the registry cannot be validated with parameters nothing
// fitted. And every one says what it computes and where it comes from.
func TestEveryRegisteredModelHasAFitter(t *testing.T) {
	fitted := map[contention.ParamSet]string{}
	for _, st := range calibrationStages {
		for _, ps := range st.fits {
			fitted[ps] = st.name
		}
	}
	names := map[string]bool{}
	for _, s := range contention.Registry() {
		if names[s.Name()] {
			t.Errorf("%s: registered twice", s.Name())
		}
		names[s.Name()] = true
		if _, ok := fitted[s.Params]; !ok {
			t.Errorf("%s: no stage of Calibrate fits its parameters (%q)", s.Name(), s.Params)
		}
		if s.Doc == "" || s.Citation == "" {
			t.Errorf("%s: doc %q, citation %q: want both", s.Name(), s.Doc, s.Citation)
		}
		if _, learned := s.Model.(contention.Learned); learned != (s.Params == contention.ParamsLearned) {
			t.Errorf("%s: a learned model reads learned parameters and no other model does (%q)", s.Name(), s.Params)
		}
	}
	if !names[contention.DefaultModel] {
		t.Errorf("the default model %s is not registered", contention.DefaultModel)
	}
	if got := contention.LearnedNames(); !slices.Contains(got, contention.DefaultModel) {
		t.Errorf("learned models %v: the default model is one of them", got)
	}
}
