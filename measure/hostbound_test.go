package measure

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/commcal/commcal/contention"
)

// TestHostBound measures one-way transfers, two disjoint pairs, a same-peer exchange and a
// directed cycle on the 2×2 cluster, its hosts unbound and bound at 1 × the NIC rate, and
// bounds the later transfer's time over the one-way time. Disjoint pairs never share a host:
// about 1 either way. Unbound, a NIC's two directions have their own buckets, yet an exchange
// or a cycle still takes somewhat longer than one transfer, more under load: hence the wide
// bound of 0.9 to 1.6. Bound, a node that sends and receives at once shares one NIC's rate
// between the two, so the later transfer ends when both messages have crossed its bucket, at
// about twice the one-way time. The runs behind these bounds are in
// docs/journal/host-bound.md.
func TestHostBound(t *testing.T) {
	needRoot(t)
	const m = 4 << 20
	oneWay := []contention.Flow{{Src: "a1", Dst: "b1", Bytes: m}}
	pairs := []contention.Flow{{Src: "a1", Dst: "b1", Bytes: m}, {Src: "a2", Dst: "b2", Bytes: m}}
	exchange := []contention.Flow{{Src: "a1", Dst: "b1", Bytes: m}, {Src: "b1", Dst: "a1", Bytes: m}}
	cycle := []contention.Flow{{Src: "a1", Dst: "b1", Bytes: m}, {Src: "b1", Dst: "a2", Bytes: m}, {Src: "a2", Dst: "b2", Bytes: m}, {Src: "b2", Dst: "a1", Bytes: m}}
	later := func(x []float64) float64 { return slices.Max(x) }
	for _, c := range []struct {
		name     string
		hostRate float64
		// the bounds of the later transfer's time over the one-way time
		pairs, coupled [2]float64
	}{
		{"unbound", 0, [2]float64{0.9, 1.15}, [2]float64{0.9, 1.6}},
		{"bound at the NIC rate", 1, [2]float64{0.9, 1.15}, [2]float64{1.7, 2.3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.hostRate > 0 {
				needIfb(t)
			}
			sh := DefaultShaping
			sh.HostRate = c.hostRate
			em, co := deploy(t, twoByTwo(t), sh)
			alone := meanOf(repeat(t, co, oneWay, 3), later)
			nic := em.ShapedRate(1e9)
			// A bucket at the NIC rate also carries the node's acknowledgements: 2% of it.
			if rate := m * 8 / alone; rate < 0.85*nic || rate > nic {
				t.Errorf("one transfer at %.1f Mbit/s, NIC shaped to %.0f", rate/1e6, nic/1e6)
			}
			for _, p := range []struct {
				name   string
				flows  []contention.Flow
				within [2]float64
			}{{"two disjoint pairs", pairs, c.pairs}, {"a same-peer exchange", exchange, c.coupled}, {"a directed cycle", cycle, c.coupled}} {
				r := meanOf(repeat(t, co, p.flows, 3), later) / alone
				if r < p.within[0] || r > p.within[1] {
					t.Errorf("the later transfer of %s took %.2f × the one-way time, want %.2f to %.2f", p.name, r, p.within[0], p.within[1])
				}
				t.Logf("%s: %.2f × the one-way time (%.1f Mbit/s alone)", p.name, r, m*8/alone/1e6)
			}
		})
	}
	// The host buckets live in the switches' namespaces and go with them.
	links, err := netlink.LinkList()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range links {
		if _, ok := l.(*netlink.Ifb); ok && strings.HasPrefix(l.Attrs().Name, "h") {
			t.Errorf("ifb %s left in the machine's namespace", l.Attrs().Name)
		}
	}
}

// TestHostRateRefused checks Build refuses a host bound that cannot bind or is negative,
// before it builds anything (or asks for root).
func TestHostRateRefused(t *testing.T) {
	for _, r := range []float64{-1, MaxHostRate, 3} {
		sh := DefaultShaping
		sh.HostRate = r
		em, err := Build(context.Background(), twoByTwo(t), sh)
		if err == nil {
			em.Close()
			t.Errorf("host rate %g accepted", r)
		} else if !strings.Contains(err.Error(), fmt.Sprintf("host rate %g", r)) {
			t.Errorf("host rate %g: %v", r, err)
		}
		if left := Leftovers(); len(left) != 0 {
			t.Errorf("host rate %g: left %v", r, left)
		}
	}
}

// needIfb skips a test where the kernel cannot make ifb devices (the module missing), which
// a host bound needs, naming what is missing, and fails it on CI (as need does for a
// program): it adds one and removes it at once.
func needIfb(t *testing.T) {
	t.Helper()
	probe := &netlink.Ifb{LinkAttrs: netlink.LinkAttrs{Name: "ccprobe-ifb"}}
	if err := netlink.LinkAdd(probe); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no ifb devices in this kernel on CI (modprobe ifb): %v", err)
		}
		t.Skipf("skipped: no ifb devices in this kernel (modprobe ifb): %v", err)
	}
	if err := netlink.LinkDel(probe); err != nil {
		t.Fatalf("removing the probe ifb: %v", err)
	}
}
