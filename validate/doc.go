// Package validate scores the contention models' predictions against transfers held out of the
// calibration (design §6): per-transfer signed errors and, per setting and model, the columns
// of Table II of Zhu et al. (CCPE 2014). Its stage is not built yet; `commcal validate` says so.
package validate
