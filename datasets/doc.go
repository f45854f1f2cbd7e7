// Package datasets owns commcal's measurement data: the Arrow schemas of its six tables
// (transfers, roundtrips, one_to_two, collectives, pingpong_pairs, schedules), the checks every
// row must pass, the adapters that read outside formats (Parquet, CSV with a header, iperf3
// --json output, SimGrid's calibration output, and the text outputs of OSU, IMB, SKaMPI,
// NetPIPE and MPIBlib, whose mapping to the tables text.go states), the dataset directory they
// are normalised into (Parquet tables plus manifest.json, written atomically). The generator
// of synthetic datasets is package simulate.
package datasets
