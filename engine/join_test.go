package engine

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/internal/badinput"
)

// flood writes an endless line on c until the peer closes it, and returns how much it wrote.
func flood(c net.Conn) int {
	buf := []byte(strings.Repeat("{", 64<<10))
	n := 0
	c.SetWriteDeadline(time.Now().Add(20 * time.Second))
	for {
		k, err := c.Write(buf)
		n += k
		if err != nil {
			return n
		}
	}
}

// TestHostileCoordinatorLine: a "coordinator" that answers with an endless line is refused
// after the handshake's limit, with a short message; it cannot make the agent read more than
// the limit and the socket buffers.
func TestHostileCoordinatorLine(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var mu sync.Mutex
	most := 0
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				n := flood(c)
				c.Close()
				mu.Lock()
				most = max(most, n)
				mu.Unlock()
			}()
		}
	}()
	err = RunAgent(context.Background(), AgentConfig{Rank: 1, Size: 2, Host: "h", Token: NewToken(),
		Coordinator: []string{ln.Addr().String()}, ConnectTimeout: 300 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "not the commcal control protocol: a line longer than 65536 bytes, starting \"{{{{") || len(err.Error()) > 1000 {
		t.Fatalf("got %v", err)
	}
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if most > 16<<20 {
		t.Errorf("the agent took %d bytes of one line before refusing it", most)
	}
}

// TestStrangersDoNotStopTheJoin: connections that send an endless line or a line that is not
// a message are dropped, each after a bounded read, and the agents of the run still join.
func TestStrangersDoNotStopTheJoin(t *testing.T) {
	var wg sync.WaitGroup
	wrote := make([]int, 2)
	lr, err := startLoop(t, oneRack(t, "n1", "n2"), func(rank int, cfg *AgentConfig) {
		if rank != 0 {
			return
		}
		for i, line := range []string{"", `{"type":"hello","rank":-1}` + "\n"} {
			c, err := net.Dial("tcp", cfg.Coordinator[0])
			if err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				if line == "" {
					wrote[i] = flood(c)
					return
				}
				c.Write([]byte(line))
				var b [1]byte
				c.SetReadDeadline(time.Now().Add(20 * time.Second))
				for {
					if _, err := c.Read(b[:]); err != nil { // the coordinator closes it
						return
					}
				}
			}()
		}
	})
	if err != nil {
		t.Fatalf("join: %v", err)
	}
	wg.Wait()
	if wrote[0] > 16<<20 {
		t.Errorf("the coordinator took %d bytes of one line before refusing it", wrote[0])
	}
	lr.wait()
}

// dataCluster is n1 … n3 with n1 at 127.0.0.1 (an address of this host's, so its agent binds
// its data listener there by default) and n2 at 127.0.0.2 (a loopback address that is no
// interface's: its agent listens on every interface), n3 without an address.
func dataCluster(t *testing.T, n1Addr string) *cluster.Cluster {
	cl, err := cluster.New(cluster.Description{Name: "loop", NICRateBps: 1e9,
		Racks: []cluster.Rack{{Name: "r", Nodes: []string{"n1", "n2", "n3"}}},
		Node:  []cluster.NodeSettings{{Name: "n1", Addr: n1Addr}, {Name: "n2", Addr: "127.0.0.2"}}})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// TestDataListen: where each agent's data listener binds, where the coordinator sends its
// data, and that data flows between all three.
func TestDataListen(t *testing.T) {
	lr, err := startLoop(t, dataCluster(t, "127.0.0.1"), func(rank int, cfg *AgentConfig) {
		if rank == 2 {
			cfg.DataListen = "lo" // an interface: its address
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, a := range lr.co.Agents() {
		host, _, _ := net.SplitHostPort(a.DataAddr)
		got[a.Node] = host
	}
	if want := map[string]string{"n1": "127.0.0.1", "n2": "127.0.0.2", "n3": "127.0.0.1"}; len(got) != 3 || got["n1"] != want["n1"] || got["n2"] != want["n2"] || got["n3"] != want["n3"] {
		t.Errorf("data addresses %v, want hosts %v", got, want)
	}
	// n1's listener is bound to 127.0.0.1 alone; n2's listens on every interface.
	for _, tc := range []struct {
		node  string
		reach bool
	}{{"n1", false}, {"n2", true}} {
		var addr string
		for _, a := range lr.co.Agents() {
			if a.Node == tc.node {
				_, port, _ := net.SplitHostPort(a.DataAddr)
				addr = net.JoinHostPort("127.0.0.3", port)
			}
		}
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if c != nil {
			c.Close()
		}
		if (err == nil) != tc.reach {
			t.Errorf("%s's data port at %s: dial error %v, want reachable %v", tc.node, addr, err, tc.reach)
		}
	}
	prog := &Program{Conns: []Conn{{From: "n1", To: "n2"}, {From: "n2", To: "n3"}, {From: "n3", To: "n1"}}, Threads: []Thread{
		{Node: "n1", Ops: []Op{{Kind: Send, Conn: 0, Bytes: 1 << 16}, {Kind: Recv, Conn: 2, Bytes: 1 << 16}}},
		{Node: "n2", Ops: []Op{{Kind: Recv, Conn: 0, Bytes: 1 << 16}, {Kind: Send, Conn: 1, Bytes: 1 << 16}}},
		{Node: "n3", Ops: []Op{{Kind: Recv, Conn: 1, Bytes: 1 << 16}, {Kind: Send, Conn: 2, Bytes: 1 << 16}}}}}
	if _, err := lr.co.Run(context.Background(), prog); err != nil {
		t.Fatalf("run: %v", err)
	}
	for i, err := range lr.wait() {
		if err != nil {
			t.Errorf("agent %d: %v", i, err)
		}
	}
}

// TestDataListenRefusals: a data listener the run cannot use ends the join naming the cause.
func TestDataListenRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, n1Addr, listen, want string
	}{
		{"bound elsewhere than the description's addr", "127.0.0.1", "127.0.0.4",
			"engine: agent rank 0 on host host-n1 (from 127.0.0.1:"},
		{"no such interface", "127.0.0.1", "nosuch0", "data listener: no network interface nosuch0 here"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lr, err := startLoop(t, dataCluster(t, tc.n1Addr), func(rank int, cfg *AgentConfig) {
				if rank == 0 {
					cfg.DataListen = tc.listen
				}
			})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("join: %v, want %q", err, tc.want)
			}
			if tc.listen == "127.0.0.4" && !strings.Contains(err.Error(), "its data listener is bound to 127.0.0.4 (--data-listen), which is not 127.0.0.1, the address node n1's data is sent to") {
				t.Errorf("join: %v", err)
			}
			lr.wait()
		})
	}
}

// TestParseDataListen: the forms of a data listener address, and what is refused.
func TestParseDataListen(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{"10.0.0.1", "10.0.0.1:0", ""},
		{"10.0.0.1:7000", "10.0.0.1:7000", ""},
		{"fd00::1", "[fd00::1]:0", ""},
		{"[fd00::1]:7000", "[fd00::1]:7000", ""},
		{"*", ":0", ""},
		{":7000", ":7000", ""},
		{"0.0.0.0", ":0", ""},
		{"::", ":0", ""},
		{"lo", "127.0.0.1:0", ""},
		{"lo:7000", "127.0.0.1:7000", ""},
		{"10.0.0.300", "", `"10.0.0.300" is neither an IP address nor a network interface's name`},
		{"10.0.0.1:99999", "", `port "99999": want a port in 0…65535 (0: any)`},
		{"a/b", "", `"a/b" is neither an IP address nor a network interface's name`},
		{"averyveryverylongname0", "", `"averyveryverylongname0" is neither an IP address nor a network interface's name`},
		{"nosuch0", "", "no network interface nosuch0 here"},
	} {
		got, err := ResolveDataListen(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: %q, %v; want the error %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// FuzzDataListen: any --data-listen value is an address to listen on (an IP address, an
// interface's name or every interface, and a port in 0…65535) or an error of bounded length.
func FuzzDataListen(f *testing.F) {
	for _, s := range []string{"10.0.0.1", "[fd00::1]:7000", "ib0:7001", "*", ":0", "10.0.0.300", "a/b", "x:99999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ip, iface, port, err := parseDataListen(s)
		if err != nil {
			if len(err.Error()) > badinput.MaxMessage {
				t.Fatalf("%q: a message of %d bytes", s, len(err.Error()))
			}
			return
		}
		if port < 0 || port > 65535 || ip.IsValid() && iface != "" || iface != "" && !isInterfaceName(iface) {
			t.Fatalf("%q: address %v, interface %q, port %d", s, ip, iface, port)
		}
	})
}
