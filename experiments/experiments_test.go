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
	if !slices.Equal(held, []Name{Random, Alltoallv, Exchange, Cycle}) {
		t.Errorf("held out = %v", held)
	}
}

func TestAsRole(t *testing.T) {
	for _, tc := range []struct {
		name Name
		role Role
		want Name
		ok   bool
	}{
		{RandomCalibration, HeldOut, Random, true},
		{Random, Calibration, RandomCalibration, true},
		{Exchange, HeldOut, Exchange, true},
		{ExchangeCalibration, HeldOut, Exchange, true},
		{Cycle, Calibration, CycleCalibration, true},
		{P2PSweep, Calibration, P2PSweep, true},
		{P2PSweep, HeldOut, "", false},
		{Alltoallv, Calibration, "", false},
		{"nope", HeldOut, "", false},
	} {
		got, ok := AsRole(tc.name, tc.role)
		if got != tc.want || ok != tc.ok {
			t.Errorf("AsRole(%s, %d) = %q, %v; want %q, %v", tc.name, tc.role, got, ok, tc.want, tc.ok)
		}
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
