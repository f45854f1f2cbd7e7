package experiments

import (
	"slices"
	"testing"
)

func TestRolesPartitionTheSet(t *testing.T) {
	all := All()
	cal, held := WithRole(Calibration), WithRole(HeldOut)
	if len(cal)+len(held) != len(all) {
		t.Fatalf("%d calibration + %d held-out != %d experiments", len(cal), len(held), len(all))
	}
	for _, n := range held {
		if slices.Contains(cal, n) {
			t.Errorf("%s is both calibration and held out", n)
		}
	}
	if !slices.Equal(held, []Name{Random, Alltoallv}) {
		t.Errorf("held out = %v", held)
	}
}

func TestCheckHeldOut(t *testing.T) {
	for _, tc := range []struct {
		names []string
		ok    bool
	}{
		{[]string{Random}, true},
		{[]string{Random, Alltoallv}, true},
		{[]string{StaticSync}, false}, // the penalty table is built from it
		{[]string{P2PSweep}, false},
		{[]string{BidirNIC, Random}, false},
		{[]string{"randm"}, false},
		{nil, false},
	} {
		if err := CheckHeldOut(tc.names); (err == nil) != tc.ok {
			t.Errorf("CheckHeldOut(%v) = %v, want ok=%v", tc.names, err, tc.ok)
		}
	}
}
