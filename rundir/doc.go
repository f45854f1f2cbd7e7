// Package rundir defines the run directory, what `commcal run` writes and compare, plot and
// export read back: its files, their schemas and format tags, and reading and writing them.
// A run directory holds
//
//	dataset/              the normalised dataset (Parquet tables + manifest.json)
//	summary.json          tables, sources and per-experiment statistics
//	summary.txt           the same, as the tables printed on the terminal
//	measurements.parquet  every measurement's mean, 95% CI and stopping-rule status
//	calibration.json      every fitted parameter with its 95% CI (and lmo_*.parquet)
//	predictions.parquet   every held-out transfer, measured and predicted by every model
//	accuracy.json         per setting (|N|, d) and model, the columns of CCPE 2014 Table II;
//	                      per situation (what else a transfer's pattern sends where it goes)
//	                      and per transfer size (powers of two)
//	health.json           what the report's health panel shows: alarms, skipped estimators,
//	                      implausible fits, stopping-rule status, start skew, drift
//	figures/              every figure as PNG, SVG and PDF
//	report.html           one file: health, tables, figures inline, provenance
//
// Files that are present are read strictly: one that cannot be read, of another format or
// inconsistent with the others is bad input naming it.
package rundir
