package datasets

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// keyRunRows is how many key hashes are sorted in memory before they go to disk: 8 MiB.
const keyRunRows = 1 << 20

// keyRef says where a row with a given key came from, and the key's two 64-bit hashes.
type keyRef struct {
	h1, h2 uint64
	src    int32
	row    int64
	line   int64
}

const keyRefSize = 8 + 8 + 4 + 8 + 8

// keyIndex finds duplicate keys among any number of rows in bounded memory. Every row's
// reference goes to a scratch file in input order. The first hashes are sorted in runs of
// keyRunRows, spilled to disk when there is more than one run, and merged: a hash seen twice
// makes its rows suspects (almost never, on good data). Only then is the reference file read
// again, comparing suspects on both hashes. Two different keys agree on both 64-bit hashes
// with probability about n²/2¹²⁹ (10⁻²⁷ for a million rows).
type keyIndex struct {
	dir     string
	runRows int
	h1s     []uint64 // the current run, unsorted
	scratch []uint64 // radixSort's second buffer
	runs    []string // sorted runs on disk
	refs    *os.File
	refw    *bufio.Writer
	buf     [keyRefSize]byte
}

func newKeyIndex(dir string, runRows int) (*keyIndex, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(dir, "refs"))
	if err != nil {
		return nil, err
	}
	return &keyIndex{dir: dir, runRows: runRows, refs: f, refw: bufio.NewWriterSize(f, 1<<16)}, nil
}

func (k *keyIndex) add(r keyRef) error {
	b := k.buf[:0]
	b = binary.LittleEndian.AppendUint64(b, r.h1)
	b = binary.LittleEndian.AppendUint64(b, r.h2)
	b = binary.LittleEndian.AppendUint32(b, uint32(r.src))
	b = binary.LittleEndian.AppendUint64(b, uint64(r.row))
	b = binary.LittleEndian.AppendUint64(b, uint64(r.line))
	if _, err := k.refw.Write(b); err != nil {
		return err
	}
	if len(k.h1s) == cap(k.h1s) && len(k.h1s) >= 1<<16 {
		// A table this large is likely to fill the run: make room for all of it at once
		// rather than copying it at every doubling.
		k.h1s = slices.Grow(k.h1s, k.runRows-len(k.h1s))
	}
	k.h1s = append(k.h1s, r.h1)
	if len(k.h1s) == k.runRows {
		return k.spill()
	}
	return nil
}

// sortRun sorts the current run.
func (k *keyIndex) sortRun() {
	if cap(k.scratch) < len(k.h1s) {
		k.scratch = make([]uint64, len(k.h1s), cap(k.h1s))
	}
	radixSort(k.h1s, k.scratch[:len(k.h1s)])
}

// radixSort sorts a in place (scratch, as long as a, is overwritten): eight stable counting
// sorts by bytes, least significant first. The keys are hashes, evenly spread, where this is
// about 3× faster than a comparison sort on 2²⁰ keys.
func radixSort(a, scratch []uint64) {
	if len(scratch) != len(a) {
		panic("datasets: radixSort scratch differs in length")
	}
	src, dst := a, scratch
	for shift := 0; shift < 64; shift += 8 {
		var start [256]int // where each byte value's keys go in dst
		for _, v := range src {
			start[byte(v>>shift)]++
		}
		pos := 0
		for d, c := range start {
			start[d] = pos
			pos += c
		}
		for _, v := range src {
			d := byte(v >> shift)
			dst[start[d]] = v
			start[d]++
		}
		src, dst = dst, src
	}
	// After an even number of passes the sorted keys are back in a.
}

// spill sorts the current run and writes it to disk.
func (k *keyIndex) spill() error {
	k.sortRun()
	path := filepath.Join(k.dir, fmt.Sprintf("run%d", len(k.runs)))
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<16)
	var b [8]byte
	for _, h := range k.h1s {
		binary.LittleEndian.PutUint64(b[:], h)
		w.Write(b[:])
	}
	err = w.Flush()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	k.runs = append(k.runs, path)
	k.h1s = k.h1s[:0]
	return err
}

// suspects returns the first hashes that occur more than once.
func (k *keyIndex) suspects() (map[uint64]bool, error) {
	dup := map[uint64]bool{}
	if len(k.runs) == 0 {
		k.sortRun()
		for i := 1; i < len(k.h1s); i++ {
			if k.h1s[i] == k.h1s[i-1] {
				dup[k.h1s[i]] = true
			}
		}
		return dup, nil
	}
	if len(k.h1s) > 0 {
		if err := k.spill(); err != nil {
			return nil, err
		}
	}
	// Merge the sorted runs; the number of runs is small (rows / keyRunRows), so the
	// smallest head is found by a linear scan.
	type head struct {
		r   *bufio.Reader
		f   *os.File
		val uint64
		ok  bool
	}
	heads := make([]*head, len(k.runs))
	defer func() {
		for _, h := range heads {
			if h != nil {
				h.f.Close()
			}
		}
	}()
	next := func(h *head) error {
		var b [8]byte
		if _, err := io.ReadFull(h.r, b[:]); err != nil {
			if errors.Is(err, io.EOF) {
				h.ok = false
				return nil
			}
			return err
		}
		h.val, h.ok = binary.LittleEndian.Uint64(b[:]), true
		return nil
	}
	for i, p := range k.runs {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		heads[i] = &head{r: bufio.NewReaderSize(f, 1<<16), f: f}
		if err := next(heads[i]); err != nil {
			return nil, err
		}
	}
	prev, have := uint64(0), false
	for {
		var min *head
		for _, h := range heads {
			if h.ok && (min == nil || h.val < min.val) {
				min = h
			}
		}
		if min == nil {
			return dup, nil
		}
		if have && min.val == prev {
			dup[prev] = true
		}
		prev, have = min.val, true
		if err := next(min); err != nil {
			return nil, err
		}
	}
}

// duplicate returns the first and second occurrence of the key whose second occurrence comes
// first in input order, if any key repeats.
func (k *keyIndex) duplicate() (first, second keyRef, found bool, err error) {
	if err := k.refw.Flush(); err != nil {
		return first, second, false, err
	}
	dup, err := k.suspects()
	if err != nil || len(dup) == 0 {
		return first, second, false, err
	}
	if _, err := k.refs.Seek(0, io.SeekStart); err != nil {
		return first, second, false, err
	}
	r := bufio.NewReaderSize(k.refs, 1<<16)
	seen := map[[2]uint64]keyRef{}
	var b [keyRefSize]byte
	for {
		if _, err := io.ReadFull(r, b[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return first, second, false, nil
			}
			return first, second, false, err
		}
		ref := keyRef{
			h1:   binary.LittleEndian.Uint64(b[0:]),
			h2:   binary.LittleEndian.Uint64(b[8:]),
			src:  int32(binary.LittleEndian.Uint32(b[16:])),
			row:  int64(binary.LittleEndian.Uint64(b[20:])),
			line: int64(binary.LittleEndian.Uint64(b[28:])),
		}
		if !dup[ref.h1] {
			continue
		}
		id := [2]uint64{ref.h1, ref.h2}
		if prev, ok := seen[id]; ok { // input order: the first repeat found is the earliest
			return prev, ref, true, nil
		}
		seen[id] = ref
	}
}

// close removes the scratch files.
func (k *keyIndex) close() {
	k.refs.Close()
	os.RemoveAll(k.dir)
	k.h1s, k.scratch = nil, nil
}
