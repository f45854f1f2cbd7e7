// Package export writes commcal's data in the input formats of other tools: a cluster and its
// calibration as a SimGrid platform with the configurations under which SimGrid computes
// commcal's max-min sharing and SMPI reproduces the segmented Hockney fit (SimGrid), and
// tables as CSV for readers without Parquet (WriteCSV).
package export
