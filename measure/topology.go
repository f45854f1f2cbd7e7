package measure

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/engine"
	"github.com/commcal/commcal/internal/atomicio"
)

// namePrefix starts the name of every namespace commcal makes, followed by its run's ID,
// "<pid>x<random>", and the namespace's role: "ccal4711x1f2e-n3". The process ID tells a
// crashed run's leftovers (their process is gone) from a run still going, which Cleanup leaves
// alone.
const namePrefix = "ccal"

// netnsDir is where iproute2 and netns keep named namespaces.
const netnsDir = "/var/run/netns"

// Shaping sets how the emulated links are shaped: every nominal rate of the description is
// multiplied by Scale (0.1 turns 1 Gbit/s NICs into 100 Mbit/s and a 10 Gbit/s backbone into
// 1 Gbit/s, the same ratio as the papers' testbed at a tenth of the cost in CPU).
type Shaping struct {
	Scale float64
	// Latency bounds the queue of each token bucket (its limit is rate × latency + burst).
	Latency float64 // seconds
	// HostRate, when above 0, bounds each node's host: what the node sends and what it
	// receives pass together through one token bucket at HostRate × its shaped NIC rate, so
	// that a node sending and receiving at once shares that budget between the two (at 1, a
	// same-peer exchange takes twice as long as a one-way transfer), as a real host bound by
	// what it can process does. 0 leaves the two directions of a NIC independent.
	HostRate float64
}

// MaxHostRate bounds Shaping.HostRate: a node's traffic in and out together never reaches
// twice its NIC rate, so a bucket at that rate or above never binds.
const MaxHostRate = 2

// The peak rate of a node's NIC (its veth end, nodeNIC) as a multiple of its rate, and the
// peak bucket: two Ethernet frames of the veth's 1500-byte MTU with their headers (setupEnd).
const (
	nodeNIC   = "eth0"
	peakRatio = 1.25
	peakBurst = 2 * 1514
)

// DefaultShaping is a tenth of the nominal rates, with queues of 20 ms.
var DefaultShaping = Shaping{Scale: 0.1, Latency: 0.02}

// Emulation is a cluster built out of network namespaces: one per node, one per rack switch
// (a Linux bridge inside), and one for the core router under a core topology; veth pairs join
// them, every direction shaped by a token-bucket filter, and with a host bound
// (Shaping.HostRate) one more bucket per node that both directions of its NIC go through.
type Emulation struct {
	ID      string
	Cluster *cluster.Cluster
	Shaping Shaping
	nodeNS  map[string]netns.NsHandle
	nodeIP  map[string]net.IP
	nsName  map[string]string // each node's namespace by name
	names   []string          // namespaces created, for teardown
	handles []netns.NsHandle
	lock    *atomicio.Lock // the machine's emulation lock, held until Close
}

// ShapedRate is the rate a resource of the description is shaped to, in bits per second.
func (e *Emulation) ShapedRate(nominal float64) float64 { return nominal * e.Shaping.Scale }

// Available says whether this process can build emulations, and if not, why.
func Available() error {
	if os.Geteuid() != 0 {
		return errors.New("measure: needs root (network namespaces, veth pairs and qdiscs)")
	}
	if _, err := os.Stat("/proc/self/ns/net"); err != nil {
		return fmt.Errorf("measure: no network namespaces: %w", err)
	}
	return nil
}

// newRunID names a run after its process, with random bits for runs of one process.
func newRunID() string {
	b := make([]byte, 2)
	rand.Read(b)
	return fmt.Sprintf("%dx%s", os.Getpid(), hex.EncodeToString(b))
}

// owner is the process of the run that made a namespace, and whether the name says.
func owner(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, namePrefix)
	if !ok {
		return 0, false
	}
	pid, _, ok := strings.Cut(rest, "x")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(pid)
	return n, err == nil && n > 0
}

// alive says whether a process exists (signal 0 checks without sending; EPERM means it
// exists under another user).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// namespaces lists commcal's namespaces for which keep says yes.
func namespaces(keep func(name string) bool) ([]string, error) {
	entries, err := os.ReadDir(netnsDir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("measure: %w", err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), namePrefix) && keep(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// Cleanup removes the namespaces of earlier runs that did not tear down (a crash, a kill):
// those whose process is gone, or whose name carries no process (older versions). A run still
// going, in this process or another, keeps its namespaces. It returns how many it removed.
func Cleanup() (int, error) {
	stale, err := namespaces(func(name string) bool {
		pid, ok := owner(name)
		return !ok || (pid != os.Getpid() && !alive(pid))
	})
	if err != nil {
		return 0, err
	}
	for i, name := range stale {
		if err := netns.DeleteNamed(name); err != nil {
			return i, fmt.Errorf("measure: removing leftover namespace %s: %w", name, err)
		}
	}
	return len(stale), nil
}

// Leftovers lists the namespaces of this process's emulations still present.
func Leftovers() []string {
	out, _ := namespaces(func(name string) bool {
		pid, ok := owner(name)
		return ok && pid == os.Getpid()
	})
	return out
}

// CheckHostRate refuses a host bound (Shaping.HostRate) that cannot be one: below 0, or at
// or above MaxHostRate, where a host never binds. Its message names no package: Build and the
// command line each say where it comes from.
func CheckHostRate(h float64) error {
	if !(h >= 0 && h < MaxHostRate) {
		return fmt.Errorf("host rate %g × the NIC rate: want 0 (hosts unbound) or above 0 and below %d (at %d a host never binds)", h, MaxHostRate, MaxHostRate)
	}
	return nil
}

// Build creates the emulation of a cluster. On error everything made so far is removed.
//
// One emulation runs on a machine at a time: two side by side would share its CPUs and
// measure each other. Build waits (until ctx is done) for the machine's emulation lock, an
// flock on EmulationLock held until Close.
func Build(ctx context.Context, cl *cluster.Cluster, sh Shaping) (em *Emulation, err error) {
	if err := CheckHostRate(sh.HostRate); err != nil {
		return nil, fmt.Errorf("measure: %w", err)
	}
	if err := Available(); err != nil {
		return nil, err
	}
	if len(cl.Nodes()) > 250*200 {
		return nil, fmt.Errorf("measure: %d nodes is more than the emulation's address plan holds", len(cl.Nodes()))
	}
	lock, err := lockEmulation(ctx)
	if err != nil {
		return nil, err
	}
	em = &Emulation{ID: newRunID(), Cluster: cl, Shaping: sh, nodeNS: map[string]netns.NsHandle{}, nodeIP: map[string]net.IP{}, nsName: map[string]string{}, lock: lock}
	defer func() {
		if err != nil {
			em.Close()
			em = nil
		}
	}()
	racks := cl.Racks()
	sw := make([]netns.NsHandle, len(racks))
	for r := range racks {
		if sw[r], err = em.newNS(fmt.Sprintf("sw%d", r)); err != nil {
			return nil, err
		}
		if err := addBridge(sw[r]); err != nil {
			return nil, err
		}
	}
	for i, n := range cl.Nodes() {
		ns, err := em.newNS(fmt.Sprintf("n%d", i))
		if err != nil {
			return nil, err
		}
		em.nodeNS[n.Name] = ns
		em.nsName[n.Name] = em.names[len(em.names)-1]
		ip := net.IPv4(10, 233, byte(i/250), byte(i%250+1))
		em.nodeIP[n.Name] = ip
		rate := n.NICRateBps * sh.Scale
		// eth0 in the node (shaped: the node's NIC out), pN in its switch (shaped: NIC in).
		port := fmt.Sprintf("p%d", i)
		if err := em.link(ns, nodeNIC, sw[n.RackIndex], port, rate, rate); err != nil {
			return nil, fmt.Errorf("measure: node %s: %w", n.Name, err)
		}
		if err := addAddr(ns, nodeNIC, ip); err != nil {
			return nil, fmt.Errorf("measure: node %s: %w", n.Name, err)
		}
		if sh.HostRate > 0 {
			if err := em.boundHost(sw[n.RackIndex], i, port, rate*sh.HostRate); err != nil {
				return nil, fmt.Errorf("measure: host bound of node %s: %w", n.Name, err)
			}
		}
	}
	if b := cl.Description().Backbone; b != nil && len(racks) > 1 {
		switch b.Topology {
		case cluster.TopologyCable:
			rate := b.RateBps * sh.Scale
			if err := em.link(sw[0], "bb0", sw[1], "bb0", rate, rate); err != nil {
				return nil, fmt.Errorf("measure: backbone: %w", err)
			}
		case cluster.TopologyCore:
			core, err := em.newNS("core")
			if err != nil {
				return nil, err
			}
			if err := addBridge(core); err != nil {
				return nil, err
			}
			for r, rk := range cl.Description().Racks {
				rate := rk.UplinkRateBps
				if rate == 0 {
					rate = b.RateBps
				}
				if err := em.link(sw[r], "up0", core, fmt.Sprintf("r%d", r), rate*sh.Scale, rate*sh.Scale); err != nil {
					return nil, fmt.Errorf("measure: uplink of %s: %w", rk.Name, err)
				}
			}
		}
	}
	return em, nil
}

// newNS makes a named namespace with its loopback up, leaving the calling thread where it was.
func (e *Emulation) newNS(suffix string) (netns.NsHandle, error) {
	name := fmt.Sprintf("%s%s-%s", namePrefix, e.ID, suffix)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		return 0, fmt.Errorf("measure: %w", err)
	}
	defer orig.Close()
	ns, err := netns.NewNamed(name)
	if serr := netns.Set(orig); serr != nil && err == nil {
		err = serr
	}
	if err != nil {
		return 0, fmt.Errorf("measure: namespace %s: %w", name, err)
	}
	e.names = append(e.names, name)
	e.handles = append(e.handles, ns)
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return 0, fmt.Errorf("measure: %w", err)
	}
	defer h.Close()
	lo, err := h.LinkByName("lo")
	if err == nil {
		err = h.LinkSetUp(lo)
	}
	if err != nil {
		return 0, fmt.Errorf("measure: loopback of %s: %w", name, err)
	}
	return ns, nil
}

// ForgetTCPMetrics sets net.ipv4.tcp_no_metrics_save in every node's namespace: a closing
// connection no longer leaves its round-trip time, slow-start threshold and window in the
// kernel's per-destination cache, from which the next connection to the same node would start.
// With the cache, a transfer's ramp-up depends on what the campaign sent to its receiver
// before it (a congested pattern leaves a small threshold behind).
func (e *Emulation) ForgetTCPMetrics() error {
	for _, n := range e.Cluster.Nodes() {
		// Files under /proc/sys/net opened in the namespace are the namespace's.
		err := engine.InNetNS(e.nsName[n.Name], func() error {
			return os.WriteFile(engine.TCPNoMetricsSave, []byte("1\n"), 0o644)
		})
		if err != nil {
			return fmt.Errorf("measure: node %s: tcp_no_metrics_save: %w", n.Name, err)
		}
	}
	return nil
}

func addBridge(ns netns.NsHandle) error {
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return fmt.Errorf("measure: %w", err)
	}
	defer h.Close()
	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "br0"}}
	if err := h.LinkAdd(br); err != nil {
		return fmt.Errorf("measure: bridge: %w", err)
	}
	return h.LinkSetUp(br)
}

// link joins two namespaces with a veth pair, a side in b attached to b's bridge when it has
// one (a side in a too, when a is a switch), both ends up and shaped: rateA is a's egress (bits
// per second), rateB b's.
func (e *Emulation) link(a netns.NsHandle, nameA string, b netns.NsHandle, nameB string, rateA, rateB float64) error {
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: nameA, Namespace: netlink.NsFd(int(a))},
		PeerName: nameB, PeerNamespace: netlink.NsFd(int(b))}
	if err := netlink.LinkAdd(veth); err != nil {
		return fmt.Errorf("veth %s/%s: %w", nameA, nameB, err)
	}
	for _, end := range []struct {
		ns   netns.NsHandle
		name string
		rate float64
	}{{a, nameA, rateA}, {b, nameB, rateB}} {
		if err := e.setupEnd(end.ns, end.name, end.rate); err != nil {
			return err
		}
	}
	return nil
}

// setupEnd attaches an interface to its namespace's bridge (if any), brings it up and shapes
// its egress with a token bucket: burst of max(64 KiB, 2 ms of traffic) so that the largest
// segmentation-offload packets pass, and a queue of Latency.
func (e *Emulation) setupEnd(ns netns.NsHandle, name string, rate float64) error {
	h, l, err := linkAt(ns, name)
	if err != nil {
		return err
	}
	defer h.Close()
	if br, err := h.LinkByName("br0"); err == nil {
		if err := h.LinkSetMaster(l, br); err != nil {
			return fmt.Errorf("attach %s: %w", name, err)
		}
	}
	if err := h.LinkSetUp(l); err != nil {
		return err
	}
	tbf := e.bucket(l.Attrs().Index, rate)
	// The bucket alone would let a burst of 64 KiB out at the veth's own speed, so that a
	// message smaller than that left an idle "100 Mbit/s NIC" in microseconds, which no NIC
	// does (and which turned the small messages of the Hockney sweeps and the LMO experiments
	// into measurements of the CPU). On a node's own end (its NIC sending), a peak rate
	// peakRatio × the rate with a peak bucket of two frames makes every packet leave at about
	// the link's rate, as from a real NIC; the qdisc cuts segmentation-offload packets into
	// frames for that. The other ends keep the plain bucket: the frames reach them already
	// paced, and a peak rate on every hop would cost the CPU the emulation needs (the
	// headroom check fell from about 95% to 80–86% of the shaped rate with it everywhere).
	if name == nodeNIC {
		tbf.Peakrate, tbf.Minburst = uint64(float64(tbf.Rate)*peakRatio), peakBurst
	}
	if err := h.QdiscAdd(tbf); err != nil {
		return fmt.Errorf("shaping %s at %.0f bit/s: %w", name, rate, err)
	}
	return nil
}

// bucket is the root token bucket of an interface shaped at rate (bits per second): a burst
// of max(64 KiB, 2 ms of traffic) and a queue of Latency.
func (e *Emulation) bucket(link int, rate float64) *netlink.Tbf {
	bytesPerSec := uint64(rate / 8)
	burst := max(uint32(64<<10), uint32(float64(bytesPerSec)*0.002))
	return &netlink.Tbf{
		QdiscAttrs: netlink.QdiscAttrs{LinkIndex: link, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT},
		Rate:       bytesPerSec,
		Limit:      uint32(float64(bytesPerSec)*e.Shaping.Latency) + burst,
		Buffer:     netlink.Xmittime(bytesPerSec, burst),
	}
}

// boundHost makes node i's host budget (Shaping.HostRate) in its rack switch's namespace sw:
// an ifb device h<i> with a token bucket at rate (bits per second), and on the node's switch
// port (p<i>) a clsact qdisc whose ingress (what the node sends) and egress (what it receives)
// each redirect every packet into h<i>. The ifb hands each packet back where it was taken, the
// ingress ones to the bridge, the egress ones to the port's own bucket (the NIC's receiving
// side). Data and acknowledgements of both directions thus share one bucket and one queue, in
// the order they come.
func (e *Emulation) boundHost(sw netns.NsHandle, i int, port string, rate float64) error {
	h, p, err := linkAt(sw, port)
	if err != nil {
		return err
	}
	defer h.Close()
	name := fmt.Sprintf("h%d", i)
	ifb := &netlink.Ifb{LinkAttrs: netlink.LinkAttrs{Name: name}}
	if err := h.LinkAdd(ifb); err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) { // the kernel knows no ifb devices
			return fmt.Errorf("ifb %s: %w (bound hosts need the kernel's ifb module: modprobe ifb)", name, err)
		}
		return fmt.Errorf("ifb %s: %w", name, err)
	}
	// LinkAdd fills in the new device's index, looking it up by name and dropping that
	// lookup's error: where it did not, the lookup again says why.
	idx := ifb.Attrs().Index
	if idx == 0 {
		l, err := h.LinkByName(name)
		if err != nil {
			return fmt.Errorf("ifb %s: made but not found: %w", name, err)
		}
		idx = l.Attrs().Index
	}
	if err := h.LinkSetUp(ifb); err != nil {
		return err
	}
	if err := h.QdiscAdd(e.bucket(idx, rate)); err != nil {
		return fmt.Errorf("shaping %s at %.0f bit/s: %w", name, rate, err)
	}
	pidx := p.Attrs().Index
	if err := h.QdiscAdd(&netlink.Clsact{QdiscAttrs: netlink.QdiscAttrs{LinkIndex: pidx, Handle: netlink.MakeHandle(0xffff, 0), Parent: netlink.HANDLE_CLSACT}}); err != nil {
		return fmt.Errorf("clsact on %s: %w", port, err)
	}
	for _, hook := range []uint32{netlink.HANDLE_MIN_INGRESS, netlink.HANDLE_MIN_EGRESS} {
		// A u32 filter without a selector matches every packet.
		f := &netlink.U32{FilterAttrs: netlink.FilterAttrs{LinkIndex: pidx, Parent: hook, Priority: 1, Protocol: unix.ETH_P_ALL},
			Actions: []netlink.Action{netlink.NewMirredAction(idx)}}
		if err := h.FilterAdd(f); err != nil {
			return fmt.Errorf("redirecting %s into %s: %w", port, name, err)
		}
	}
	return nil
}

func addAddr(ns netns.NsHandle, dev string, ip net.IP) error {
	h, l, err := linkAt(ns, dev)
	if err != nil {
		return err
	}
	defer h.Close()
	return h.AddrAdd(l, &netlink.Addr{IPNet: &net.IPNet{IP: ip, Mask: net.CIDRMask(16, 32)}})
}

// linkAt opens a netlink handle in namespace ns and finds the interface name there; the caller
// closes the handle (closed already when there is an error).
func linkAt(ns netns.NsHandle, name string) (*netlink.Handle, netlink.Link, error) {
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return nil, nil, err
	}
	l, err := h.LinkByName(name)
	if err != nil {
		h.Close()
		return nil, nil, err
	}
	return h, l, nil
}

// Offloads reports the segmentation-offload sizes of the first node's interface, which shape
// how TCP's segments meet the token buckets.
func (e *Emulation) Offloads() string {
	n := e.Cluster.Nodes()[0].Name
	h, err := netlink.NewHandleAt(e.nodeNS[n])
	if err != nil {
		return "unknown"
	}
	defer h.Close()
	l, err := h.LinkByName(nodeNIC)
	if err != nil {
		return "unknown"
	}
	a := l.Attrs()
	return fmt.Sprintf("GSO max %d B / %d segments, TSO max %d B, GRO max %d B, MTU %d B", a.GSOMaxSize, a.GSOMaxSegs, a.TSOMaxSize, a.GROMaxSize, a.MTU)
}

// Namespace is the name of a node's network namespace (where its agent makes its data
// connections), and NodeIP its address there.
func (e *Emulation) Namespace(node string) string { return e.nsName[node] }

// NodeIP is a node's address in the emulation.
func (e *Emulation) NodeIP(node string) net.IP { return e.nodeIP[node] }

// Close removes every namespace of the emulation (and with them their links and qdiscs).
func (e *Emulation) Close() error {
	var errs []error
	for _, h := range e.handles {
		h.Close()
	}
	for _, n := range e.names {
		if err := netns.DeleteNamed(n); err != nil {
			errs = append(errs, err)
		}
	}
	e.names, e.handles = nil, nil
	e.lock.Release()
	e.lock = nil
	return errors.Join(errs...)
}

// EmulationLock is the file whose flock makes emulations on one machine take turns.
var EmulationLock = filepath.Join(os.TempDir(), "commcal-emulation.lock")

// lockEmulation takes the machine's emulation lock, waiting until ctx is done.
func lockEmulation(ctx context.Context) (*atomicio.Lock, error) {
	l, err := atomicio.Acquire(ctx, EmulationLock, true)
	if err != nil {
		return nil, fmt.Errorf("measure: emulation lock: %w", err)
	}
	return l, nil
}
