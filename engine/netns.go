package engine

import (
	"fmt"
	"net"
	"runtime"

	"github.com/vishvananda/netns"
)

// TCPNoMetricsSave is the sysctl (per network namespace) that, at 1, keeps the kernel from
// saving a connection's round-trip time and slow-start threshold for the next one to the same
// host: what the manifest records of each node, and what measure's ForgetTCPMetrics sets.
const TCPNoMetricsSave = "/proc/sys/net/ipv4/tcp_no_metrics_save"

// InNetNS runs fn on a thread switched into the named network namespace (none: where the
// process is); sockets fn creates stay in that namespace afterwards. The control channel is
// never opened here, so an agent moved into an emulated node's namespace still reaches a
// coordinator outside it.
func InNetNS(name string, fn func() error) error {
	if name == "" {
		return fn()
	}
	errc := make(chan error, 1)
	go func() {
		// A goroutine of its own, locked to its thread: if the thread cannot return to its
		// namespace, the goroutine ends still locked and the runtime discards the thread.
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			errc <- err
			return
		}
		defer orig.Close()
		ns, err := netns.GetFromName(name)
		if err != nil {
			errc <- fmt.Errorf("network namespace %s: %w", name, err)
			return
		}
		defer ns.Close()
		if err := netns.Set(ns); err != nil {
			errc <- fmt.Errorf("entering network namespace %s: %w", name, err)
			return
		}
		ferr := fn()
		if err := netns.Set(orig); err != nil {
			errc <- fmt.Errorf("leaving network namespace %s: %w", name, err)
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// hostAddrs lists the unicast IP addresses of the namespace's interfaces, loopback last.
func hostAddrs(nsName string) ([]string, error) {
	var out, lo []string
	err := InNetNS(nsName, func() error {
		addrs, err := net.InterfaceAddrs()
		if err != nil {
			return err
		}
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok || ipn.IP.IsLinkLocalUnicast() || ipn.IP.IsMulticast() {
				continue
			}
			if ipn.IP.IsLoopback() {
				lo = append(lo, ipn.IP.String())
			} else {
				out = append(out, ipn.IP.String())
			}
		}
		return nil
	})
	return append(out, lo...), err
}
