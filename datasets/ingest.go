package datasets

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/experiments"
)

// Source formats.
const (
	FormatAuto    = "auto"
	FormatParquet = "parquet"
	FormatCSV     = "csv"
	FormatIperf3  = "iperf3"
	FormatSimGrid = "simgrid"
	FormatOSU     = "osu"
	FormatIMB     = "imb"
	FormatSKaMPI  = "skampi"
	FormatNetPIPE = "netpipe"
	FormatMPIBlib = "mpiblib"
	// FormatSaturation is SimGrid platform-calibration's saturation test (saturation.go).
	FormatSaturation = "saturation"
)

// Formats lists the source formats ingest understands (FormatAuto guesses among them).
var Formats = []string{FormatAuto, FormatParquet, FormatCSV, FormatIperf3, FormatSimGrid,
	FormatOSU, FormatIMB, FormatSKaMPI, FormatNetPIPE, FormatMPIBlib, FormatSaturation}

// textReaders are the adapters of the MPI benchmarks' text outputs (see text.go).
var textReaders = map[string]func(*textReader, []textLine) (*textOut, error){
	FormatOSU:        readOSU,
	FormatIMB:        readIMB,
	FormatSKaMPI:     readSKaMPI,
	FormatNetPIPE:    readNetPIPE,
	FormatMPIBlib:    readMPIBlib,
	FormatSaturation: readSaturation,
}

// Source is one input file and how to read it.
type Source struct {
	// Path names the file in messages and in the manifest; unless Open is set it is opened
	// from the file system.
	Path string
	Open func() (fs.File, error)
	// Format is one of Formats; FormatAuto decides from the extension, then the content.
	Format string
	// Table forces the table of a CSV or Parquet file; empty infers it from the columns.
	Table string
	// Src and Dst name the two nodes of a SimGrid ping-pong (Src sends first), and override
	// the address-to-node mapping of an iperf3 run (Src sends the forward transfer; the
	// reverse transfer of a --bidir run goes from Dst to Src).
	Src, Dst string
	// Ranks names the node of each MPI rank, in rank order (one rank per entry), for outputs
	// of more than two processes that do not name their nodes (a saturation log, a multi-pair
	// or collective benchmark). Src and Dst stand for ranks 0 and 1 when Ranks is empty.
	// Given for a source of another format (a table, iperf3, SimGrid), it is refused
	// (ErrUnusedFlag).
	Ranks []string
	// MPILibrary is the MPI library the manifest of the dataset directory this source comes
	// from names (ExpandSources); empty for a log.
	MPILibrary string
	// Role, when set, is the role every transfer of a benchmark's text output takes:
	// RoleCalibration or RoleHeldOut; a pattern whose design has no experiment of that role
	// (a point-to-point sweep held out) is refused. Empty keeps each adapter's labels. Given
	// for a source of another format, it is refused as Ranks is.
	Role string
	// Experiment and PatternID label iperf3 transfers; the defaults are p2p_sweep and
	// "src>dst:bytes", and for a --bidir run bidir_nic (bidir_backbone between racks) and
	// "src<>dst:bytes". Repetitions of one pattern are numbered in source order.
	Experiment, PatternID string
	// Provenance is copied into the manifest.
	Provenance string
	// SHA256, when set, is the SHA-256 the file must have (ExpandSources sets it from a
	// dataset directory's manifest): a file that differs is checksum-mismatch.
	SHA256 string
}

func (s Source) open() (fs.File, error) {
	if s.Open != nil {
		return s.Open()
	}
	return os.Open(s.Path)
}

// IngestOptions configures Ingest.
type IngestOptions struct {
	Cluster *cluster.Cluster
	Sources []Source
	Out     string
	Force   bool // replace an existing Out
	Version string
	Created time.Time
	// BatchRows is the number of rows per record batch (default 65536).
	BatchRows int
	Mem       memory.Allocator
	Logger    *slog.Logger
	// Progress, when set, is called after each batch with the rows ingested so far.
	Progress func(rows int64)
	Notes    []string
	// MPILibrary is the MPI library that ran the measured collectives (CheckMPILibrary), for
	// the manifest; empty keeps the one the dataset directories among the sources name, if
	// they agree.
	MPILibrary string
}

// Ingest reads every source, checks every row against the schemas and the cluster, and writes
// a dataset directory at opts.Out with its manifest. On any error nothing is left at Out (an
// earlier dataset there is kept) and the error is an *InputError when the input is at fault.
func Ingest(ctx context.Context, opts IngestOptions) (*Manifest, error) {
	if opts.Cluster == nil {
		panic("datasets: Ingest without a cluster")
	}
	if len(opts.Sources) == 0 {
		return nil, fmt.Errorf("datasets: nothing to ingest")
	}
	if opts.BatchRows <= 0 {
		opts.BatchRows = 1 << 16
	}
	lib, err := mpiLibrary(opts)
	if err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Mem == nil {
		opts.Mem = memory.DefaultAllocator
	}
	w, err := NewDirWriter(opts.Out, opts.Force, opts.Cluster, opts.Mem)
	if err != nil {
		return nil, err
	}
	ing := &ingester{ctx: ctx, opts: opts, w: w, reps: map[string]int64{}, flows: map[string][]string{}}
	m := &Manifest{Format: ManifestFormat, Tool: "commcal", Version: opts.Version,
		Created: opts.Created.UTC().Format(time.RFC3339), Cluster: opts.Cluster.Description(), Notes: opts.Notes}
	for _, src := range opts.Sources {
		if err := ctx.Err(); err != nil {
			w.Abort()
			return nil, err
		}
		info, err := ing.source(ctx, src)
		if err != nil {
			w.Abort()
			return nil, err
		}
		opts.Logger.Debug("ingested", "source", src.Path, "format", info.Format, "table", info.Table, "rows", info.Rows)
		m.Sources = append(m.Sources, info)
	}
	if ing.total == 0 && len(ing.aux) > 0 {
		// Only files that hold no transfer time (SimGrid's single-call timings, breakpoints):
		// refuse the first with what it is.
		w.Abort()
		return nil, ing.aux[0]
	}
	m.HockneyBreaks = ing.breaks
	m.MPILibrary = lib
	if err := w.Commit(m); err != nil {
		return nil, err
	}
	return m, nil
}

// mpiLibrary is the manifest's MPI library: opts.MPILibrary, checked, or else the one every
// source names (each a table of a dataset directory naming the same library). Sources that
// name different libraries, or one and none (a log, a dataset that names none), are refused:
// which library ran their collectives is for --mpi-library to say.
func mpiLibrary(opts IngestOptions) (string, error) {
	if opts.MPILibrary != "" {
		if err := CheckMPILibrary(opts.MPILibrary); err != nil {
			return "", inputErr(Location{File: "--mpi-library"}, "", ErrUnsupported, "%v", err)
		}
		return opts.MPILibrary, nil
	}
	first := opts.Sources[0]
	for _, src := range opts.Sources[1:] {
		if src.MPILibrary != first.MPILibrary {
			a, b := first, src
			if a.MPILibrary == "" {
				a, b = b, a
			}
			names := "it names no MPI library"
			if b.MPILibrary != "" {
				names = "it names the MPI library " + b.MPILibrary
			}
			return "", inputErr(Location{File: manifestOf(b)}, "", ErrUnsupported, "%s, %s names %s: give --mpi-library to say which ran the collectives",
				names, manifestOf(a), a.MPILibrary)
		}
	}
	return first.MPILibrary, nil
}

// manifestOf names where a source's MPI library comes from: its dataset's manifest, or the
// log itself.
func manifestOf(src Source) string {
	if src.MPILibrary == "" && src.SHA256 == "" {
		return src.Path
	}
	return filepath.Join(filepath.Dir(src.Path), ManifestFile)
}

type ingester struct {
	ctx   context.Context // checked between batches, so that Ctrl-C stops a long file
	opts  IngestOptions
	w     *DirWriter
	total int64
	reps  map[string]int64 // repetitions per pattern (iperf3, text adapters)
	// flows are the flows of each text adapter's pattern (by experiment and ID), as its first
	// repetition had them (ingester.sameFlows).
	flows map[string][]string
	// aux are the refusals of sources that hold no transfer time, in source order: the first
	// is the error when no source has rows.
	aux []*InputError
	// breaks are the protocol thresholds of a SimGrid breakpoints file.
	breaks []float64
}

// emit checks and writes one batch of built rows.
func (ing *ingester) emit(t *Table, rb *rowBuilder, loc batchLoc, src int32) (int64, error) {
	rec := rb.record()
	defer rec.Release()
	return rec.NumRows(), ing.put(t, rec, nil, loc, src)
}

// batcher writes the rows of a file as they are built, in batches of BatchRows, with the
// input line of each row for messages.
type batcher struct {
	ing   *ingester
	t     *Table
	rb    *rowBuilder
	file  string
	idx   int32
	first int64   // the 1-based row of the batch's first row
	lines []int64 // the input line of each row of the batch
}

// add records the line of the row just built, and writes the batch when it is full.
func (b *batcher) add(line int64) error {
	b.lines = append(b.lines, line)
	if len(b.lines) == b.ing.opts.BatchRows {
		return b.flush()
	}
	return nil
}

// finish writes the rows of the last batch, if any.
func (b *batcher) finish() error {
	if len(b.lines) > 0 {
		return b.flush()
	}
	return nil
}

func (b *batcher) flush() error {
	n, err := b.ing.emit(b.t, b.rb, batchLoc{file: b.file, firstRow: b.first, lines: b.lines}, b.idx)
	b.first += n
	b.lines = b.lines[:0]
	return err
}

// put checks and writes one record (dicts as DirWriter.write says), reports progress, and
// stops when the context is done.
func (ing *ingester) put(t *Table, rec arrow.Record, dicts []*array.Dictionary, loc batchLoc, src int32) error {
	if err := ing.ctx.Err(); err != nil {
		return err
	}
	if err := ing.w.write(t, rec, dicts, loc, src); err != nil {
		return err
	}
	ing.total += rec.NumRows()
	if ing.opts.Progress != nil {
		ing.opts.Progress(ing.total)
	}
	return nil
}

func (ing *ingester) source(ctx context.Context, src Source) (SourceInfo, error) {
	info := SourceInfo{Path: src.Path, Provenance: src.Provenance}
	f, err := src.open()
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return info, inputErr(Location{File: src.Path}, "", ErrMissingFile, "no such file")
		}
		return info, fmt.Errorf("datasets: %w", err)
	}
	defer f.Close()
	info.SHA256, info.Bytes, err = readerSHA256(f)
	if err != nil {
		return info, fmt.Errorf("datasets: %s: %w", src.Path, err)
	}
	loc := Location{File: src.Path}
	if src.SHA256 != "" && src.SHA256 != info.SHA256 {
		return info, inputErr(loc, "", ErrChecksumMismatch, "checksum mismatch: manifest says SHA-256 %s, file has %s", src.SHA256, info.SHA256)
	}
	if info.Bytes == 0 {
		return info, inputErr(loc, "", ErrEmptyFile, "the file is empty")
	}
	rs, err := rewind(f, src)
	if err != nil {
		return info, err
	}
	info.Format = src.Format
	if info.Format == "" || info.Format == FormatAuto {
		if info.Format, err = detectFormat(src.Path, rs); err != nil {
			return info, err
		}
	}
	if err := textFlagsOnly(src, info.Format); err != nil {
		return info, err
	}
	idx := ing.w.source(src.Path)
	var t *Table
	switch info.Format {
	case FormatParquet:
		t, info.Rows, err = ing.parquet(ctx, src, rs, idx)
	case FormatCSV:
		t, info.Rows, err = ing.csv(src, rs, idx)
	case FormatSimGrid:
		head := make([]byte, 8192)
		n, _ := io.ReadFull(rs, head)
		if _, err := rs.Seek(0, io.SeekStart); err != nil {
			return info, fmt.Errorf("datasets: %s: %w", src.Path, err)
		}
		if looksSaturation(string(head[:n])) {
			return info, inputErr(Location{File: src.Path}, "", ErrUnknownFormat,
				"rank,op,size,start_ms,duration_ms lines: a log of platform-calibration's saturation test, not of its calibration program; give --format saturation")
		}
		if kind := simgridKind(src.Path, head[:n]); kind != "pingpong" && kind != "" {
			err = ing.textSource(src, rs, idx, kind, &info)
			break
		}
		t, info.Rows, err = ing.simgrid(src, rs, idx)
	case FormatIperf3:
		t, info.Rows, err = ing.iperf3(src, rs, idx)
	default:
		if textReaders[info.Format] == nil {
			return info, fmt.Errorf("datasets: %s: unknown format %q (want one of %s)", src.Path, info.Format, list(Formats))
		}
		err = ing.textSource(src, rs, idx, "", &info)
	}
	if err != nil {
		return info, err
	}
	if t != nil {
		info.Table = t.Name
	}
	return info, nil
}

// textSource reads a benchmark's text output (simgridKind set: a SimGrid calibration file
// that holds no transfer time) and writes its rows; info gets the tables, rows and notes.
func (ing *ingester) textSource(src Source, r io.Reader, idx int32, simgridKind string, info *SourceInfo) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("datasets: %s: %w", src.Path, err)
	}
	tr := &textReader{path: src.Path, src: src.Src, dst: src.Dst, ranks: src.Ranks, cl: ing.opts.Cluster}
	var o *textOut
	if simgridKind != "" {
		o, err = readSimGridAux(tr, simgridKind, data)
	} else {
		var lines []textLine
		if lines, err = splitLines(src.Path, data); err == nil {
			o, err = textReaders[info.Format](tr, lines)
		}
	}
	if err != nil {
		return err
	}
	if o.aux != nil {
		ing.aux = append(ing.aux, o.aux)
	}
	if o.breaks != nil {
		if ing.breaks != nil && !slices.Equal(ing.breaks, o.breaks) {
			return inputErr(Location{File: src.Path}, "", ErrCorrupt, "a second breakpoints file with other sizes (%s B, the first had %s B)",
				list(formatSizes(o.breaks)), list(formatSizes(ing.breaks)))
		}
		ing.breaks = o.breaks
	}
	if err := relabel(src, o); err != nil {
		return err
	}
	if tr.orderNote != "" {
		o.note("%s", tr.orderNote)
	}
	info.Notes = o.notes
	tables, rows, err := ing.text(src, o, idx)
	info.Table, info.Rows = strings.Join(tables, ","), rows
	return err
}

// The roles a Source may force on a text output's transfers.
const (
	RoleCalibration = "calibration"
	RoleHeldOut     = "held-out"
)

// Roles lists the values of Source.Role, empty (each adapter's labels) aside.
var Roles = []string{RoleCalibration, RoleHeldOut}

// relabel gives every transfer of a text output the experiment of src.Role: the held-out or
// the calibration experiment of the same design (experiments.AsRole).
func relabel(src Source, o *textOut) error {
	if src.Role == "" {
		return nil
	}
	want := experiments.Calibration
	if src.Role == RoleHeldOut {
		want = experiments.HeldOut
	}
	for i := range o.transfers {
		t := &o.transfers[i]
		twin, ok := experiments.AsRole(t.Experiment, want)
		if !ok {
			var line int64
			if ls := o.lines[TransfersTable]; i < len(ls) {
				line = ls[i]
			}
			return inputErr(Location{File: src.Path, Line: line}, "experiment", ErrUnsupported,
				"--role %s: %s patterns have no %s experiment (the random, exchange and cycle designs have both roles)", src.Role, t.Experiment, src.Role)
		}
		t.Experiment = twin
	}
	return nil
}

// textFlagsOnly refuses Source.Role and Source.Ranks (--role, --ranks) for a source of a
// format they do not apply to: they place and label the rows of benchmarks' text outputs
// (textReaders), while a table's rows (CSV, Parquet, a dataset's) name their nodes and
// experiment, and iperf3 and SimGrid files have flags of their own. Ignored, they would
// seem to have taken effect.
func textFlagsOnly(src Source, format string) error {
	if textReaders[format] != nil {
		return nil
	}
	var flag string
	switch {
	case src.Role != "":
		flag = "--role " + bounded(src.Role)
	case len(src.Ranks) > 0:
		flag = "--ranks"
	default:
		return nil
	}
	const rows = ", whose rows name their nodes and experiment"
	what := map[string]string{
		FormatParquet: "a Parquet table" + rows,
		FormatCSV:     "a CSV table" + rows,
		FormatIperf3:  "an iperf3 run (--src, --dst and --experiment set its transfer)",
		FormatSimGrid: "a SimGrid calibration file (--src and --dst name its two nodes)",
	}[format]
	if src.SHA256 != "" {
		what = "a commcal dataset's table" + rows // ExpandSources' source of a dataset directory
	}
	var texts []string
	for _, f := range Formats {
		if textReaders[f] != nil {
			texts = append(texts, f)
		}
	}
	return inputErr(Location{File: src.Path}, "", ErrUnusedFlag,
		"%s applies to the text outputs of MPI benchmarks (%s), not to %s: leave it out, or ingest those outputs on their own", flag, list(texts), what)
}

// readSeekerAt is what the Parquet reader needs; files and embedded files provide it.
type readSeekerAt interface {
	io.Reader
	io.ReaderAt
	io.Seeker
}

// rewind returns the opened file positioned at its start, reading it into memory only when
// the file cannot seek.
func rewind(f fs.File, src Source) (readSeekerAt, error) {
	if rs, ok := f.(readSeekerAt); ok {
		if _, err := rs.Seek(0, io.SeekStart); err != nil {
			return nil, fmt.Errorf("datasets: %s: %w", src.Path, err)
		}
		return rs, nil
	}
	f.Close()
	g, err := src.open()
	if err != nil {
		return nil, fmt.Errorf("datasets: %w", err)
	}
	defer g.Close()
	data, err := io.ReadAll(g)
	if err != nil {
		return nil, fmt.Errorf("datasets: %s: %w", src.Path, err)
	}
	return bytes.NewReader(data), nil
}

// detectFormat decides from the extension, then from the first bytes: Parquet's magic
// number, a JSON object (iperf3), a SimGrid calibration file (an "MPI_" operation, a
// breakpoints file, a list of sizes), a saturation log ("rank,MPI_op,size,start,duration"
// lines), the text output of OSU, IMB, SKaMPI, MPIBlib or NetPIPE (told by their title and
// header lines), or else a CSV with a header.
func detectFormat(path string, rs readSeekerAt) (string, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".parquet", ".pq":
		return FormatParquet, nil
	case ".json":
		return FormatIperf3, nil
	}
	head := make([]byte, 8192)
	n, _ := io.ReadFull(rs, head)
	head = head[:n]
	if _, err := rs.Seek(0, io.SeekStart); err != nil {
		return "", fmt.Errorf("datasets: %s: %w", path, err)
	}
	trimmed := bytes.TrimLeft(head, " \t\r\n\ufeff")
	switch {
	case bytes.HasPrefix(head, []byte("PAR1")):
		return FormatParquet, nil
	case bytes.HasPrefix(trimmed, []byte("{")):
		return FormatIperf3, nil
	case simgridKind(path, head) != "":
		return FormatSimGrid, nil
	case bytes.IndexByte(head[:min(len(head), 64)], 0) >= 0:
		// A NUL further on is a bad value of a text file, which its reader names.
		return "", inputErr(Location{File: path}, "", ErrUnknownFormat,
			"binary content that is not Parquet; give --format")
	}
	text := string(head)
	switch {
	case looksSaturation(text):
		return FormatSaturation, nil
	case looksOSU(text):
		return FormatOSU, nil
	case looksIMB(text):
		return FormatIMB, nil
	case looksSKaMPI(text):
		return FormatSKaMPI, nil
	case looksMPIBlib(text):
		return FormatMPIBlib, nil
	}
	if lines, err := splitLines(path, head); err == nil && looksNetPIPE(lines) {
		return FormatNetPIPE, nil
	}
	return FormatCSV, nil
}

// inferTable picks the table whose columns the file has. With forced set, that table is used
// and a missing column is reported by name. Otherwise the table with the most of its columns
// present wins, and of those the one that misses fewest, then the first in Tables; if even it
// misses some, the first missing one is reported. The fewest misses name the likelier table
// when a file is short of columns: cluster, bytes and rep are three columns of transfers and
// of one_to_two, and the file is reported as one_to_two's, short of four, not seven.
func inferTable(loc Location, have []string, forced string) (*Table, error) {
	set := map[string]bool{}
	for _, h := range have {
		set[strings.TrimSpace(h)] = true
	}
	missing := func(t *Table) []string {
		var miss []string
		for _, c := range t.Columns {
			if !set[c.Name] {
				miss = append(miss, c.Name)
			}
		}
		return miss
	}
	if forced != "" {
		t, ok := TableByName(forced)
		if !ok {
			return nil, fmt.Errorf("datasets: unknown table %q (want one of %s)", forced, list(TableNames()))
		}
		if miss := missing(t); len(miss) > 0 {
			return nil, inputErr(loc, miss[0], ErrMissingColumn, "table %s needs column %q", t.Name, miss[0])
		}
		return t, nil
	}
	best, bestHave, bestMiss := (*Table)(nil), 0, 0
	for _, t := range Tables {
		miss := len(missing(t))
		n := len(t.Columns) - miss
		if n > bestHave || n == bestHave && miss < bestMiss {
			best, bestHave, bestMiss = t, n, miss
		}
	}
	if best == nil || bestHave < 3 {
		quoted := make([]string, len(have))
		for i, h := range have {
			quoted[i] = quote(h)
		}
		return nil, inputErr(loc, "", ErrUnknownTable, "columns %s fit none of the tables %s",
			list(quoted), list(TableNames()))
	}
	if miss := missing(best); len(miss) > 0 {
		return nil, inputErr(loc, miss[0], ErrMissingColumn, "looks like table %s but has no column %q", best.Name, miss[0])
	}
	return best, nil
}

// ExpandSources turns command-line paths into sources: a file is one source; a directory
// gives its files in name order (hidden files skipped); a commcal dataset directory (one with
// a manifest.json) gives its table files, each to match the manifest's SHA-256. Every source
// copies base's settings. A missing path or an empty directory is an *InputError.
func ExpandSources(paths []string, base Source) ([]Source, error) {
	var out []Source
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, inputErr(Location{File: p}, "", ErrMissingFile, "no such file or directory")
			}
			return nil, fmt.Errorf("datasets: %w", err)
		}
		if !st.IsDir() {
			s := base
			s.Path = p
			out = append(out, s)
			continue
		}
		if _, err := os.Stat(filepath.Join(p, ManifestFile)); err == nil {
			m, err := ReadManifest(p)
			if err != nil {
				return nil, err
			}
			for _, ti := range m.Tables {
				s := base
				s.Path, s.Format, s.Table, s.SHA256 = filepath.Join(p, ti.File), FormatParquet, ti.Name, ti.SHA256
				s.MPILibrary = m.MPILibrary
				out = append(out, s)
			}
			continue
		}
		var files []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if strings.HasPrefix(d.Name(), ".") && path != p {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.Type().IsRegular() {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("datasets: %w", err)
		}
		if len(files) == 0 {
			return nil, inputErr(Location{File: p}, "", ErrEmptyFile, "the directory holds no files")
		}
		sort.Strings(files)
		for _, f := range files {
			s := base
			s.Path = f
			out = append(out, s)
		}
	}
	return out, nil
}

// newBufReader buffers a text input generously; the text adapters read it line by line.
func newBufReader(r io.Reader) *bufio.Reader { return bufio.NewReaderSize(r, 1<<20) }
