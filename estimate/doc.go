// Package estimate fits the parameters of commcal's communication models to measurements,
// each with a 95% confidence interval and the number of observations behind it (design §4).
// This far it summarises repeated measurements and applies the benchmark's stopping rule;
// the model fits (Hockney, fairness, asymmetry, LMO, thresholds, L, penalties) build on it.
package estimate
