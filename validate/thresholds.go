package validate

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/internal/badinput"
)

// Threshold is an accuracy alarm on one model's overall held-out accuracy: the share of
// transfers within ±10% must not fall below MinWithin10, or the mean |ε| must not rise above
// MaxMeanAbsErr (NaN: not checked).
type Threshold struct {
	Model         string
	MinWithin10   float64
	MaxMeanAbsErr float64
}

// AllModels in a threshold applies it to every model.
const AllModels = "all"

// ParseThreshold reads "MODEL:VALUE" (for example "asymmetric:0.8" or "all:90%") as a
// threshold on the share within ±10% (below is true: --fail-below) or on the mean |ε|
// (--fail-above-error). Values are fractions, or percentages with a % sign.
func ParseThreshold(spec string, below bool) (Threshold, error) {
	model, val, ok := strings.Cut(spec, ":")
	flag := "--fail-above-error"
	if below {
		flag = "--fail-below"
	}
	if !ok || model == "" || val == "" {
		return Threshold{}, badinput.Errorf("", "%s %q: want MODEL:VALUE, for example asymmetric:0.8 or all:90%%", flag, spec)
	}
	names := append(contention.Names(), AllModels)
	if !slices.Contains(names, model) {
		return Threshold{}, badinput.Errorf("", "%s %q: unknown model %q (models: %s)", flag, spec, model, strings.Join(names, ", "))
	}
	scale := 1.0
	if v, pct := strings.CutSuffix(val, "%"); pct {
		val, scale = v, 0.01
	}
	x, err := strconv.ParseFloat(val, 64)
	x *= scale
	if err != nil || !(x >= 0) || math.IsInf(x, 0) || (below && x > 1) {
		return Threshold{}, badinput.Errorf("", "%s %q: the value must be a fraction in [0, 1] or a percentage", flag, spec)
	}
	th := Threshold{Model: model, MinWithin10: math.NaN(), MaxMeanAbsErr: math.NaN()}
	if below {
		th.MinWithin10 = x
	} else {
		th.MaxMeanAbsErr = x
	}
	return th, nil
}

// Check returns one line per threshold crossed by the overall accuracy. A model with no
// scored transfer crosses every threshold set on it: an alarm must not be silenced by
// missing data.
func (a *Accuracy) Check(ths []Threshold) []string {
	var breaches []string
	for _, th := range ths {
		for _, name := range contention.Names() {
			if th.Model != AllModels && th.Model != name {
				continue
			}
			m, ok := a.Overall.Model(name)
			if !ok || m.Transfers == 0 {
				breaches = append(breaches, fmt.Sprintf("%s: no held-out transfer was scored, so its accuracy cannot be checked", name))
				continue
			}
			if m.Within10 < th.MinWithin10 {
				breaches = append(breaches, fmt.Sprintf("%s: %.1f%% of held-out transfers within ±10%%, below the threshold %.1f%%",
					name, 100*m.Within10, 100*th.MinWithin10))
			}
			if m.MeanAbsErr > th.MaxMeanAbsErr {
				breaches = append(breaches, fmt.Sprintf("%s: mean |ε| %.2f%%, above the threshold %.2f%%",
					name, 100*m.MeanAbsErr, 100*th.MaxMeanAbsErr))
			}
		}
	}
	return breaches
}
