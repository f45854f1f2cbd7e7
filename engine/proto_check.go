package engine

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"unicode/utf8"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/internal/badinput"
)

// Bounds of a control message's fields that grow with the sender's host rather than with the
// run, so that a peer cannot make the receiver keep or print more than a line allows.
const (
	// maxNameBytes bounds the host of a dial address, as a cluster description bounds a name
	// (a DNS name has at most 253 bytes); host and node names are checked as the description
	// checks them (nameProblem).
	maxNameBytes = 255
	// maxHostAddrs bounds the addresses a hello lists.
	maxHostAddrs = 1024
	// maxInfo bounds the host settings a hello reports (hostInfo reads eight), and each value.
	maxInfo, maxInfoValue = 64, 1024
	// maxHexField bounds a nonce or a MAC in hex digits (an HMAC-SHA256 takes 64).
	maxHexField = 128
	// maxCongestion is the longest TCP congestion control name Linux takes (TCP_CA_NAME_MAX).
	maxCongestion = 16
)

// knownTypes are the message types of the protocol.
var knownTypes = map[string]bool{msgChallenge: true, msgHello: true, msgWelcome: true, msgRefuse: true, msgReady: true,
	msgPing: true, msgPong: true, msgPrepare: true, msgStart: true, msgDone: true, msgError: true, msgAbort: true, msgShutdown: true}

// check refuses a message whose fields no commcal sends: an unknown type, a negative rank,
// size, sequence, program, connection or byte count, a name that is not one, an address that
// is not one, a field of a host's that passes its bound. Reason is free text, cut when shown.
func (m *message) check() error {
	if !knownTypes[m.Type] {
		return fmt.Errorf("unknown message type %s", badinput.Quote(m.Type))
	}
	bad := func(field string, value any, what string) error {
		if s, ok := value.(string); ok {
			value = badinput.Quote(s)
		}
		return fmt.Errorf("%s message: %s %v %s", m.Type, field, value, what)
	}
	for _, f := range []struct {
		name string
		v    int64
	}{{"proto", int64(m.Proto)}, {"rank", int64(m.Rank)}, {"size", int64(m.Size)}, {"seq", int64(m.Seq)}, {"prog", m.Prog}} {
		if f.v < 0 {
			return bad(f.name, f.v, "is negative")
		}
	}
	for _, f := range []struct{ name, v string }{{"nonce", m.Nonce}, {"mac", m.MAC}} {
		if len(f.v) > maxHexField || !isHex(f.v) {
			return bad(f.name, f.v, fmt.Sprintf("is not at most %d hexadecimal digits", maxHexField))
		}
	}
	for _, f := range []struct{ name, v string }{{"host", m.Host}, {"node", m.Node}, {"data_host", m.DataHost}} {
		if p := nameProblem(f.v); p != "" {
			return bad(f.name, f.v, p)
		}
	}
	if err := m.checkHost(bad); err != nil {
		return err
	}
	return m.checkProgram(bad)
}

// checkHost checks what a hello and a ready say of the agent's host: its addresses, its
// settings, its data listener.
func (m *message) checkHost(bad func(string, any, string) error) error {
	if len(m.Addrs) > maxHostAddrs {
		return bad("addrs", len(m.Addrs), fmt.Sprintf("addresses: at most %d", maxHostAddrs))
	}
	for _, a := range m.Addrs {
		if _, err := netip.ParseAddr(a); err != nil {
			return bad("addrs", a, "is not an IP address")
		}
	}
	if len(m.Info) > maxInfo {
		return bad("info", len(m.Info), fmt.Sprintf("settings: at most %d", maxInfo))
	}
	for k, v := range m.Info {
		if p := nameProblem(k); p != "" || k == "" {
			return bad("info key", k, "is not a setting's name")
		}
		if len(v) > maxInfoValue || !utf8.ValidString(v) {
			return bad("info "+k, v, fmt.Sprintf("is not UTF-8 text of at most %d bytes", maxInfoValue))
		}
	}
	if m.DataAddr != "" {
		if _, _, err := splitDataAddr(m.DataAddr); err != nil {
			return bad("data_addr", m.DataAddr, err.Error())
		}
	}
	if s := m.Socket; s != nil {
		if len(s.Congestion) > maxCongestion || !isPrintableASCII(s.Congestion) {
			return bad("socket congestion", s.Congestion, fmt.Sprintf("is not a congestion control's name (at most %d letters)", maxCongestion))
		}
		if s.Buffer < 0 || s.Timeout <= 0 {
			return bad("socket", fmt.Sprintf("buffer %d, timeout %v", s.Buffer, s.Timeout), "want a buffer of 0 or more and a positive timeout")
		}
	}
	return nil
}

// checkProgram checks a prepare's connections and threads.
func (m *message) checkProgram(bad func(string, any, string) error) error {
	for _, d := range m.Dial {
		if d.Conn < 0 {
			return bad("dial conn", d.Conn, "is negative")
		}
		if host, ok := dialHostPort(d.Addr); !ok || len(host) > maxNameBytes {
			return bad("dial addr", d.Addr, "is not HOST:PORT")
		}
	}
	for _, a := range m.Accept {
		if a < 0 {
			return bad("accept", a, "is negative")
		}
	}
	for _, th := range m.Threads {
		for _, op := range th.Ops {
			if err := checkOpFields(op, bad); err != nil {
				return err
			}
			switch {
			case op.Kind == Batch && len(op.Parts) == 0:
				return bad("batch", "without parts", "holds no send or receive")
			case op.Kind != Batch && len(op.Parts) > 0:
				return bad("op kind", string(op.Kind), "has parts, which only a batch has")
			}
			for _, part := range op.Parts {
				if part.Kind != Send && part.Kind != Recv {
					return bad("batch part kind", string(part.Kind), "is not send or recv")
				}
				if err := checkOpFields(part, bad); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// checkOpFields checks one operation's kind, connection and size.
func checkOpFields(op Op, bad func(string, any, string) error) error {
	switch {
	case op.Kind != Send && op.Kind != Recv && op.Kind != Unpack && op.Kind != Batch:
		return bad("op kind", string(op.Kind), "is not send, recv, unpack or batch")
	case op.Conn < 0:
		return bad("op conn", op.Conn, "is negative")
	case op.Bytes < 0:
		return bad("op bytes", op.Bytes, "is negative")
	}
	return nil
}

// CheckName says whether s can be a host or node name in a control message: at most 255
// bytes of UTF-8 without control characters.
func CheckName(s string) error {
	if p := nameProblem(s); p != "" {
		return errors.New(p)
	}
	return nil
}

// nameProblem is what keeps s (which may be empty: the field is absent) from being a host or
// node name: its length, or a byte no name holds, as a cluster description says
// (cluster.NameTextProblem).
func nameProblem(s string) string { return cluster.NameTextProblem(s) }

// dialHostPort splits an address to dial, HOST:PORT with a host and a port in 1…65535; ok
// is false when s is not one.
func dialHostPort(s string) (host string, ok bool) {
	host, port, err := net.SplitHostPort(s)
	n, perr := strconv.Atoi(port)
	return host, err == nil && perr == nil && host != "" && n >= 1 && n <= 65535
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

func isPrintableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}
