package engine

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/commcal/commcal/internal/badinput"
)

// CheckDataListen checks an agent's data listener address (AgentConfig.DataListen): an IP
// address, the name of a network interface (its first address is taken) or nothing (every
// interface), each with an optional :PORT (absent or 0: any free port). "*" and the unspecified
// addresses (0.0.0.0, ::) also mean every interface.
func CheckDataListen(s string) error {
	_, _, _, err := parseDataListen(s)
	return err
}

// parseDataListen splits a data listener address into an IP address (invalid: none), an
// interface name (empty: none) and a port; neither an address nor a name is every interface.
func parseDataListen(s string) (ip netip.Addr, iface string, port int, err error) {
	host, p, serr := net.SplitHostPort(s)
	if serr != nil {
		// No port: the whole is the host (an IPv6 address holds colons of its own).
		host, p = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"), "0"
	}
	if port, err = strconv.Atoi(p); err != nil || port < 0 || port > 65535 {
		return ip, "", 0, fmt.Errorf("port %s: want a port in 0…65535 (0: any)", badinput.Quote(p))
	}
	if host == "" || host == "*" {
		return ip, "", port, nil
	}
	if ip, err = netip.ParseAddr(host); err == nil {
		if ip.IsUnspecified() {
			ip = netip.Addr{}
		}
		return ip, "", port, nil
	}
	if !isInterfaceName(host) {
		return netip.Addr{}, "", 0, fmt.Errorf("%s is neither an IP address nor a network interface's name", badinput.Quote(host))
	}
	return netip.Addr{}, host, port, nil
}

// isInterfaceName says whether s can name a Linux network interface (at most 15 bytes, no
// slash, colon or space) and does not read as a mistyped IP address (digits and dots alone).
func isInterfaceName(s string) bool {
	if len(s) == 0 || len(s) > 15 || s == "." || s == ".." || !isPrintableASCII(s) || strings.ContainsAny(s, "/:") {
		return false
	}
	return strings.Trim(s, "0123456789.") != ""
}

// ResolveDataListen is the address to listen on for a data listener address, "HOST:PORT"
// with HOST empty for every interface; an interface is looked up where the caller runs (the
// agent's namespace).
func ResolveDataListen(s string) (string, error) {
	ip, iface, port, err := parseDataListen(s)
	if err != nil {
		return "", err
	}
	host := ""
	switch {
	case iface != "":
		if host, err = interfaceAddr(iface); err != nil {
			return "", err
		}
	case ip.IsValid():
		host = ip.String()
	}
	return net.JoinHostPort(host, strconv.Itoa(port)), nil
}

// interfaceAddr is a network interface's first IPv4 address, else its first IPv6 address
// that is not link-local.
func interfaceAddr(name string) (string, error) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return "", fmt.Errorf("no network interface %s here", name)
	}
	addrs, err := ifi.Addrs()
	if err != nil {
		return "", fmt.Errorf("network interface %s: %w", name, err)
	}
	var v6 string
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok || ipn.IP.IsLinkLocalUnicast() {
			continue
		}
		if ipn.IP.To4() != nil {
			return ipn.IP.String(), nil
		}
		if v6 == "" {
			v6 = ipn.IP.String()
		}
	}
	if v6 == "" {
		return "", fmt.Errorf("network interface %s has no address to listen on", name)
	}
	return v6, nil
}

// defaultDataListen is where an agent's data listener binds when no address is given (HOST:0,
// HOST empty for every interface): in a network namespace of its own, every interface of it
// (the control channel is outside); else the node's data address the coordinator sends data to
// (nodeHost), when this host has it; else the address this agent reaches the coordinator from
// (control), unless that is loopback (rank 0's own agent, whose peers reach it elsewhere).
func defaultDataListen(netns, nodeHost string, own []string, control net.Addr) string {
	host := ""
	switch {
	case netns != "":
	case nodeHost != "":
		if slices.ContainsFunc(own, func(a string) bool { return sameIP(a, nodeHost) }) {
			host = nodeHost
		}
	default:
		if ta, ok := control.(*net.TCPAddr); ok && !ta.IP.IsLoopback() && !ta.IP.IsUnspecified() {
			host = ta.IP.String()
		}
	}
	return net.JoinHostPort(host, "0")
}

// sameIP says whether a and b are IP addresses and the same one.
func sameIP(a, b string) bool {
	x, errA := netip.ParseAddr(a)
	y, errB := netip.ParseAddr(b)
	return errA == nil && errB == nil && x.Unmap() == y.Unmap()
}

// dataAddrOf is what a ready says of a listener: its port when it listens on every
// interface, its HOST:PORT when on one address.
func dataAddrOf(ln net.Listener) string {
	ta := ln.Addr().(*net.TCPAddr)
	if ta.IP.IsUnspecified() {
		return strconv.Itoa(ta.Port)
	}
	return net.JoinHostPort(ta.IP.String(), strconv.Itoa(ta.Port))
}

// splitDataAddr reads a ready's data address: PORT (the listener is on every interface) or
// IP:PORT (on that address only), the port in 1…65535.
func splitDataAddr(s string) (host string, port int, err error) {
	p := s
	if h, hp, err := net.SplitHostPort(s); err == nil {
		if _, err := netip.ParseAddr(h); err != nil {
			return "", 0, errors.New("is not PORT or IP:PORT")
		}
		host, p = h, hp
	}
	if port, err = strconv.Atoi(p); err != nil || port < 1 || port > 65535 {
		return "", 0, errors.New("is not PORT or IP:PORT with a port in 1…65535")
	}
	return host, port, nil
}
