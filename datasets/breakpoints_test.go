package datasets

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestReadBreakpoints reads the real breakpoints file of SimGrid's calibration of graphene
// (the one in ../shared/data, copied here as the tool writes it) and refuses damaged ones.
func TestReadBreakpoints(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "breakpoints_eth")
	os.WriteFile(good, []byte("Limit, Name\n1420, Small\n32768, Medium\n65536, Asynchronous\n270000, Detached\n"), 0o644)
	got, err := ReadBreakpoints(good)
	if err != nil || !slices.Equal(got, []float64{1420, 32768, 65536, 270000}) {
		t.Fatalf("%v, %v", got, err)
	}
	for name, content := range map[string]string{
		"empty":      "Limit, Name\n",
		"not a size": "Limit, Name\n1420, Small\nlots, Big\n",
		"descending": "Limit, Name\n65536, A\n1420, B\n",
		"negative":   "Limit, Name\n-5, A\n",
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o644)
		if _, err := ReadBreakpoints(p); err == nil {
			t.Errorf("%s: accepted", name)
		} else {
			checkInputError(t, err, p)
		}
	}
}
