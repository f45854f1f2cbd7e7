// Package export writes a cluster and its calibration in the input formats of other tools:
// a SimGrid platform with the configurations under which SimGrid computes commcal's max-min
// sharing and SMPI reproduces the segmented Hockney fit (SimGrid).
package export
