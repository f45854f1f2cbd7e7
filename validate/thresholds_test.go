package validate

import (
	"math"
	"strings"
	"testing"

	"github.com/commcal/commcal/contention"
)

func TestThresholds(t *testing.T) {
	acc := &Accuracy{Overall: SettingAccuracy{Models: []ModelAccuracy{
		{Model: "asymmetric", Transfers: 100, MeanAbsErr: 0.118, Within10: 0.61},
		{Model: "maxmin", Transfers: 100, MeanAbsErr: 0.05, Within10: 0.95},
	}}}
	for _, tc := range []struct {
		specs    []string
		below    bool
		breaches []string // substrings, in order
	}{
		{[]string{"asymmetric:0.6"}, true, nil},
		{[]string{"asymmetric:0.7"}, true, []string{"asymmetric: 61.0% of held-out transfers within ±10%, below the threshold 70.0%"}},
		{[]string{"maxmin:90%"}, true, nil},
		{[]string{"asymmetric:0.1"}, false, []string{"asymmetric: mean |ε| 11.80%, above the threshold 10.00%"}},
		{[]string{"maxmin:0.1"}, false, nil},
		// fair was never scored: the alarm fires rather than staying silent.
		{[]string{"fair:0.1"}, false, []string{"fair: no held-out transfer was scored"}},
	} {
		var ths []Threshold
		for _, s := range tc.specs {
			th, err := ParseThreshold(s, tc.below)
			if err != nil {
				t.Fatal(err)
			}
			ths = append(ths, th)
		}
		got := acc.Check(ths)
		if len(got) != len(tc.breaches) {
			t.Errorf("%v: breaches %q, want %q", tc.specs, got, tc.breaches)
			continue
		}
		for i := range got {
			if !strings.Contains(got[i], tc.breaches[i]) {
				t.Errorf("%v: breach %q, want %q", tc.specs, got[i], tc.breaches[i])
			}
		}
	}
	all, _ := ParseThreshold("all:0.9", true)
	if n := len(acc.Check([]Threshold{all})); n != len(contention.Names())-1 { // every model but maxmin
		t.Errorf("all:0.9 gave %d breaches", n)
	}
	for _, bad := range []string{"asymmetric", "nosuch:0.5", "asymmetric:x", "asymmetric:1.5", ":0.5", "asymmetric:-1", "asymmetric:NaN"} {
		if th, err := ParseThreshold(bad, true); err == nil {
			t.Errorf("ParseThreshold(%q) = %+v", bad, th)
		}
	}
	if th, _ := ParseThreshold("maxmin:0.25", false); !math.IsNaN(th.MinWithin10) || th.MaxMeanAbsErr != 0.25 {
		t.Errorf("maxmin:0.25 → %+v", th)
	}
}
