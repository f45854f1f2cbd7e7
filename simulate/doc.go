// Package simulate writes synthetic datasets with known ground truth: it draws every table's
// measurements from true model parameters (a Truth, embedding the experiment catalogue
// `commcal measure` uses) with seeded multiplicative noise, so that estimators can be checked
// for recovery.
package simulate
