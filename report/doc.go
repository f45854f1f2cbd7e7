// Package report writes what a reader sees of runs: a run's report.html with its figures and
// health panel (health.json), the comparison of runs with its trends (compare.html,
// compare.json), and the calibration and comparison as text tables for the terminal.
package report
