// Package estimate fits the parameters of commcal's communication models to measurements,
// each with a 95% confidence interval and the number of observations behind it. It summarises
// repeated measurements and applies the benchmark's stopping rule; the closed-form fits
// (Hockney, fairness, asymmetry, LMO, thresholds, L, penalties) and the fits of the learned
// contention models through their own predictions (FitLearned) build on it, and Calibrate runs
// them all.
package estimate
