package datasets

import (
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
)

func TestKeyIndexAcrossRuns(t *testing.T) {
	for _, runRows := range []int{1 << 20, 7, 2} { // one run in memory; several spilled runs
		k, err := newKeyIndex(filepath.Join(t.TempDir(), "keys"), runRows)
		if err != nil {
			t.Fatal(err)
		}
		// 50 distinct keys, then a repeat of key 30 (row 51) and of key 10 (row 52), and a
		// key whose first hash collides with key 5's but whose second differs (row 53).
		for i := 0; i < 50; i++ {
			k.add(keyRef{h1: uint64(i * 977), h2: uint64(i), src: 0, row: int64(i + 1)})
		}
		k.add(keyRef{h1: 5 * 977, h2: 999, src: 1, row: 1})
		k.add(keyRef{h1: 30 * 977, h2: 30, src: 1, row: 2})
		k.add(keyRef{h1: 10 * 977, h2: 10, src: 1, row: 3})
		first, second, found, err := k.duplicate()
		if err != nil || !found {
			t.Fatalf("runRows %d: found %v, err %v", runRows, found, err)
		}
		if first.row != 31 || first.src != 0 || second.row != 2 || second.src != 1 {
			t.Errorf("runRows %d: duplicate %+v / %+v, want rows 31 and 2 of the second file", runRows, first, second)
		}
		k.close()
	}
	k, _ := newKeyIndex(filepath.Join(t.TempDir(), "keys"), 3)
	for i := 0; i < 20; i++ {
		k.add(keyRef{h1: uint64(i % 10), h2: uint64(i), row: int64(i)}) // first hashes repeat, keys do not
	}
	if _, _, found, err := k.duplicate(); found || err != nil {
		t.Errorf("distinct keys reported as duplicates (err %v)", err)
	}
	k.close()
}

func TestDirWriterFindsDuplicatesWhenSpilling(t *testing.T) {
	cl := testCluster(t, "ccpe-testbed")
	_, g := simulateDir(t, cl, 1)
	w, err := NewDirWriter(filepath.Join(t.TempDir(), "ds"), false, cl, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.keyRun = 16
	rows := append(g.Transfers, g.Transfers[100])
	if err := WriteRows(w, TransfersTable, "gen", rows); err != nil {
		t.Fatal(err)
	}
	err = w.Commit(&Manifest{Format: ManifestFormat})
	ie, ok := IsInputError(err)
	if !ok || ie.Kind != ErrDuplicateKey || ie.Loc.Row != int64(len(rows)) {
		t.Fatalf("got %v, want a duplicate key at row %d", err, len(rows))
	}
}

func TestRadixSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 2, 1000, 1 << 17} {
		a := make([]uint64, n)
		for i := range a {
			switch i % 3 {
			case 0:
				a[i] = rng.Uint64()
			case 1:
				a[i] = rng.Uint64() & 0xffff // only the lowest digit
			default:
				a[i] = a[i/2] // repeats
			}
		}
		want := slices.Clone(a)
		slices.Sort(want)
		radixSort(a, make([]uint64, n))
		if !slices.Equal(a, want) {
			t.Errorf("%d keys: radixSort differs from slices.Sort", n)
		}
	}
}
