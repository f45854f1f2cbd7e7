package datasets

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/internal/atomicio"
	"github.com/commcal/commcal/internal/badinput"
)

// ManifestFile is the name of a dataset's manifest inside its directory.
const ManifestFile = "manifest.json"

// ManifestFormat versions the manifest's layout.
const ManifestFormat = "commcal-dataset/1"

// Manifest records what a dataset holds and where it came from.
type Manifest struct {
	Format  string `json:"format"`
	Tool    string `json:"tool"`
	Version string `json:"version"`
	// Created is RFC 3339 UTC. It is the one field that changes between runs on the same input;
	// set SOURCE_DATE_EPOCH to pin it (the reproducible-builds convention).
	Created string              `json:"created"`
	Cluster cluster.Description `json:"cluster"`
	Sources []SourceInfo        `json:"sources"`
	Tables  []TableInfo         `json:"tables"`
	Synth   *SynthesisInfo      `json:"synthesis,omitempty"`
	// Measured describes how a measured dataset (commcal measure, commcal agent) was made.
	Measured *MeasurementInfo `json:"measured,omitempty"`
	Notes    []string         `json:"notes,omitempty"`
	// HockneyBreaks are the message sizes (B) at which the MPI stack changes protocol, from a
	// SimGrid breakpoints file among the sources; estimate starts Hockney's segments there
	// unless told otherwise.
	HockneyBreaks []float64 `json:"hockney_breaks_bytes,omitempty"`
	// MPILibrary is the MPI library that ran the measured collectives, one of
	// schedule.Libraries ("openmpi", "mpich"), as the user said at ingest (empty: not said).
	// Validation expands the collectives table's rows by that library's default rules
	// (auto:LIBRARY) unless told otherwise; no log format names its library.
	MPILibrary string `json:"mpi_library,omitempty"`
}

// MeasurementInfo is how a dataset was measured: the launcher, every host and its TCP
// settings, how well the clocks agreed and how far the starts spread.
type MeasurementInfo struct {
	// Launcher is how the agents were started: "emulated", "slurm", "openmpi", "pmi" or "flags".
	Launcher string         `json:"launcher"`
	Hosts    []MeasuredHost `json:"hosts"`
	// Socket settings of every data connection.
	Congestion   string `json:"congestion,omitempty"`
	SocketBuffer int    `json:"socket_buffer,omitempty"`
	// SyncErrorS bounds the error of the clock offsets (the largest over agents and resyncs).
	SyncErrorS float64 `json:"sync_error_s"`
	// Start skew over every repetition: how late the last thread began after the common start.
	Repetitions int     `json:"repetitions"`
	SkewMedianS float64 `json:"skew_median_s"`
	SkewP99S    float64 `json:"skew_p99_s"`
	SkewMaxS    float64 `json:"skew_max_s"`
	// RepetitionsFile lists every repetition with its skew (JSON, in the dataset directory).
	RepetitionsFile string  `json:"repetitions_file,omitempty"`
	Measurements    int     `json:"measurements"`
	Converged       int     `json:"converged"`
	ElapsedS        float64 `json:"elapsed_s"`
}

// MeasuredHost is one agent of a measurement.
type MeasuredHost struct {
	Node string `json:"node"`
	Host string `json:"host"`
	Rank int    `json:"rank"`
	// OffsetS is the agent's clock offset to the coordinator's (at the last estimate).
	OffsetS float64           `json:"offset_s"`
	Info    map[string]string `json:"info,omitempty"`
}

// SourceInfo is one input file of a dataset.
type SourceInfo struct {
	Path   string `json:"path"`
	Format string `json:"format"`
	// Table names the table the rows went to; several, comma-separated, for a benchmark
	// output of several blocks; empty for a file of no rows (a note says what it holds).
	Table  string `json:"table"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
	Rows   int64  `json:"rows"`
	// Provenance says where outside data came from (licence, origin), when known.
	Provenance string `json:"provenance,omitempty"`
	// Notes say how a benchmark's output became rows: one-way or round trip, units, what a
	// row is an average of, what was left out.
	Notes []string `json:"notes,omitempty"`
}

// TableInfo is one table file of a dataset.
type TableInfo struct {
	Name   string `json:"name"`
	File   string `json:"file"`
	Rows   int64  `json:"rows"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// SynthesisInfo marks a dataset made by the generator: its seed, noise and truth file.
type SynthesisInfo struct {
	Seed      uint64  `json:"seed"`
	Noise     float64 `json:"noise"`
	TruthFile string  `json:"truth_file"`
}

// Rows returns the number of rows of a table, 0 when the dataset does not have it.
func (m *Manifest) Rows(table string) int64 {
	for _, t := range m.Tables {
		if t.Name == table {
			return t.Rows
		}
	}
	return 0
}

// EncodeJSON renders v as indented JSON with a final newline. Struct fields keep their
// declared order and Go prints floats in their shortest exact form, so the same value always
// gives the same bytes.
func EncodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteJSONFile writes v atomically as indented JSON in a stable layout (fields in declared
// order, floats in their shortest exact form).
func WriteJSONFile(path string, v any) error {
	data, err := EncodeJSON(v)
	if err != nil {
		return fmt.Errorf("datasets: %w", err)
	}
	if err := atomicio.WriteFile(path, data); err != nil {
		return fmt.Errorf("datasets: %w", err)
	}
	return nil
}

func fileSHA256(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	return readerSHA256(f)
}

func readerSHA256(r io.Reader) (string, int64, error) {
	h := sha256.New()
	n, err := io.Copy(h, r)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// quote quotes a value for a message, cut to badinput.MaxQuote bytes: a value from the input
// may be of any length.
func quote(s string) string { return badinput.Quote(s) }

func list(vals []string) string { return strings.Join(vals, ", ") }

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
