package engine

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/experiments"
	"github.com/commcal/commcal/internal/badinput"
)

// endless is an endless line of one byte, counting what was read of it.
type endless struct {
	b    byte
	read int
}

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = e.b
	}
	e.read += len(p)
	return len(p), nil
}

// TestReadLineBound: a line up to the limit is read whole; a longer one, even endless, is
// refused after reading at most the limit and one buffer, with a message quoting its start cut.
func TestReadLineBound(t *testing.T) {
	const limit = 1000
	for _, tc := range []struct {
		name string
		in   string
		want string // the line, or the error's text
		err  bool
	}{
		{"at the limit", strings.Repeat("a", limit) + "\n", strings.Repeat("a", limit), false},
		{"one past the limit", strings.Repeat("b", limit+1) + "\n", `not the commcal control protocol: a line longer than 1000 bytes, starting "` + strings.Repeat("b", 64) + `"`, true},
		{"cut by the end", `{"type":"pi`, "EOF", true},
		{"two lines", "x\ny\n", "x", false},
	} {
		got, err := readLine(bufio.NewReader(strings.NewReader(tc.in)), limit)
		switch {
		case tc.err && (err == nil || err.Error() != tc.want):
			t.Errorf("%s: %q, %v; want the error %q", tc.name, got, err, tc.want)
		case !tc.err && (err != nil || string(got) != tc.want):
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	src := &endless{b: '{'}
	_, err := readLine(bufio.NewReader(src), MaxHandshakeLine)
	var pe *protocolError
	if !errors.As(err, &pe) || len(err.Error()) > 200 {
		t.Errorf("an endless line: %v", err)
	}
	if src.read > MaxHandshakeLine+2*4096 {
		t.Errorf("read %d bytes of an endless line, the limit is %d", src.read, MaxHandshakeLine)
	}
}

// TestParseLineRefuses: every check of a control line, with the message it gives; each
// message stays short whatever the line holds.
func TestParseLineRefuses(t *testing.T) {
	long := strings.Repeat("x", 10<<20)
	for _, tc := range []struct {
		name, line, want string
	}{
		{"empty", "", "not the commcal control protocol: an empty line"},
		{"not JSON", "HTTP/1.1 400 Bad Request", "not the commcal control protocol: not JSON: invalid character 'H' looking for beginning of value (byte 1)"},
		{"two objects", `{"type":"ping","seq":1} {"type":"ping"}`, `not the commcal control protocol: "{\"type\":\"ping\"}" after the message`},
		{"unknown field, 10 MB long", `{"type":"ping","` + long + `":1}`, `not the commcal control protocol: unknown field "` + strings.Repeat("x", 64) + `"… (10485760 bytes)`},
		{"a 10 MB number", `{"type":"ping","seq":` + strings.Repeat("9", 10<<20) + `}`, `not the commcal control protocol: field seq: the number "` + strings.Repeat("9", 64) + `"… (10485760 bytes) where int belongs`},
		{"wrong type of value", `{"type":"hello","addrs":"10.0.0.1"}`, "not the commcal control protocol: field addrs: string where []string belongs"},
		{"unknown type, 10 MB long", `{"type":"` + long + `"}`, `not the commcal control protocol: unknown message type "` + strings.Repeat("x", 64) + `"… (10485760 bytes)`},
		{"null", `null`, `not the commcal control protocol: unknown message type ""`},
		{"negative rank", `{"type":"hello","rank":-3}`, "not the commcal control protocol: hello message: rank -3 is negative"},
		{"negative program", `{"type":"abort","prog":-1}`, "not the commcal control protocol: abort message: prog -1 is negative"},
		{"nonce not hex", `{"type":"challenge","nonce":"zz"}`, `not the commcal control protocol: challenge message: nonce "zz" is not at most 128 hexadecimal digits`},
		{"host with a newline", `{"type":"hello","host":"a\nb"}`, `not the commcal control protocol: hello message: host "a\nb" contains the control character U+000A at byte 1`},
		{"node of 300 bytes", `{"type":"hello","node":"` + strings.Repeat("n", 300) + `"}`, `not the commcal control protocol: hello message: node "` + strings.Repeat("n", 64) + `"… (300 bytes) is 300 bytes long, at most 255`},
		{"address not an IP", `{"type":"hello","addrs":["10.0.0.1","node01"]}`, `not the commcal control protocol: hello message: addrs "node01" is not an IP address`},
		{"too many addresses", `{"type":"hello","addrs":[` + strings.Repeat(`"10.0.0.1",`, 1024) + `"10.0.0.2"]}`, "not the commcal control protocol: hello message: addrs 1025 addresses: at most 1024"},
		{"info value too long", `{"type":"hello","info":{"kernel":"` + strings.Repeat("k", 2000) + `"}}`, `not the commcal control protocol: hello message: info kernel "` + strings.Repeat("k", 64) + `"… (2000 bytes) is not UTF-8 text of at most 1024 bytes`},
		{"data port out of range", `{"type":"ready","data_addr":"99999"}`, `not the commcal control protocol: ready message: data_addr "99999" is not PORT or IP:PORT with a port in 1…65535`},
		{"data host not an IP", `{"type":"ready","data_addr":"node01:7000"}`, `not the commcal control protocol: ready message: data_addr "node01:7000" is not PORT or IP:PORT`},
		{"dial without a port", `{"type":"prepare","prog":1,"dial":[{"conn":0,"addr":"10.0.0.1"}]}`, `not the commcal control protocol: prepare message: dial addr "10.0.0.1" is not HOST:PORT`},
		{"negative accept", `{"type":"prepare","prog":1,"accept":[-2]}`, "not the commcal control protocol: prepare message: accept -2 is negative"},
		{"unknown op", `{"type":"prepare","prog":1,"threads":[{"ops":[{"kind":"fork","bytes":1}]}]}`, `not the commcal control protocol: prepare message: op kind "fork" is not send, recv, unpack or batch`},
		{"part in a send", `{"type":"prepare","prog":1,"threads":[{"ops":[{"kind":"send","bytes":1,"parts":[{"kind":"send","bytes":1}]}]}]}`, `not the commcal control protocol: prepare message: op kind "send" has parts, which only a batch has`},
		{"unpack in a batch", `{"type":"prepare","prog":1,"threads":[{"ops":[{"kind":"batch","bytes":0,"parts":[{"kind":"unpack","bytes":1}]}]}]}`, `not the commcal control protocol: prepare message: batch part kind "unpack" is not send or recv`},
		{"empty batch", `{"type":"prepare","prog":1,"threads":[{"ops":[{"kind":"batch","bytes":0}]}]}`, `not the commcal control protocol: prepare message: batch "without parts" holds no send or receive`},
		{"negative part", `{"type":"prepare","prog":1,"threads":[{"ops":[{"kind":"batch","bytes":0,"parts":[{"kind":"recv","bytes":-3}]}]}]}`, "not the commcal control protocol: prepare message: op bytes -3 is negative"},
		{"negative bytes", `{"type":"prepare","prog":1,"threads":[{"ops":[{"kind":"send","bytes":-1}]}]}`, "not the commcal control protocol: prepare message: op bytes -1 is negative"},
		{"congestion name too long", `{"type":"welcome","socket":{"congestion":"` + strings.Repeat("c", 40) + `","timeout":1}}`, `not the commcal control protocol: welcome message: socket congestion "` + strings.Repeat("c", 40) + `" is not a congestion control's name (at most 16 letters)`},
		{"no timeout", `{"type":"welcome","socket":{"timeout":0}}`, `not the commcal control protocol: welcome message: socket "buffer 0, timeout 0s" want a buffer of 0 or more and a positive timeout`},
	} {
		m, err := parseLine([]byte(tc.line))
		var pe *protocolError
		if err == nil || !errors.As(err, &pe) || err.Error() != tc.want {
			t.Errorf("%s: %+v, %v\n want %q", tc.name, m, err, tc.want)
		}
		if err != nil && len(err.Error()) > 300 {
			t.Errorf("%s: a message of %d bytes", tc.name, len(err.Error()))
		}
	}
}

// TestParseLineAccepts: every message commcal sends reads back as sent.
func TestParseLineAccepts(t *testing.T) {
	for _, m := range controlSamples() {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := parseLine(b)
		if err != nil {
			t.Errorf("%s: %v", b, err)
			continue
		}
		if again, _ := json.Marshal(got); !bytes.Equal(again, b) {
			t.Errorf("read back as %s, sent %s", again, b)
		}
	}
}

// controlSamples are messages of every type, as a coordinator and an agent send them.
func controlSamples() []*message {
	tok := NewToken()
	return []*message{
		{Type: msgChallenge, Proto: ProtocolVersion, Nonce: newNonce()},
		{Type: msgHello, Proto: ProtocolVersion, Nonce: newNonce(), MAC: tok.mac("agent", "x"), Rank: 3, Size: 8, Host: "node03.cluster",
			Addrs: []string{"10.0.0.3", "fd00::3", "127.0.0.1"}, Node: "n3", Info: map[string]string{"kernel": "6.8.0", "tcp_rmem": "4096 131072 6291456"}},
		{Type: msgWelcome, MAC: tok.mac("coordinator", "x"), Node: "n3", Socket: &SocketOptions{Congestion: "cubic", Buffer: 1 << 20, Timeout: time.Minute}, DataHost: "10.0.0.3"},
		{Type: msgRefuse, Reason: "wrong token"},
		{Type: msgReady, DataAddr: "41234"},
		{Type: msgReady, DataAddr: "[fd00::3]:41234"},
		{Type: msgReady, Prog: 7},
		{Type: msgPing, Seq: 16},
		{Type: msgPong, Seq: 16, Time: 123456789},
		{Type: msgPrepare, Prog: 7, Dial: []dialSpec{{Conn: 0, Addr: "10.0.0.4:41000"}}, Accept: []int{1},
			Threads: []threadSpec{{Ops: []Op{{Kind: Send, Conn: 0, Bytes: 1 << 20}, {Kind: Recv, Conn: 1, Bytes: 1}, {Kind: Unpack, Bytes: 1 << 20}}}}},
		{Type: msgStart, Prog: 7, Time: -5},
		{Type: msgDone, Prog: 7, Timings: [][]OpTiming{{{Start: 1, End: 2, Busy: 1}}}},
		{Type: msgError, Prog: 7, Reason: "connecting to 10.0.0.4:41000: connection refused"},
		{Type: msgAbort, Prog: 7},
		{Type: msgShutdown},
	}
}

// FuzzControlLine: any line either reads as a message that writes back to a line reading the
// same, or is refused with a protocol error of bounded length; nothing panics.
func FuzzControlLine(f *testing.F) {
	for _, m := range controlSamples() {
		b, _ := json.Marshal(m)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		m, err := parseLine(line)
		if err != nil {
			var pe *protocolError
			if !errors.As(err, &pe) {
				t.Fatalf("%q: an error that is not a protocol error: %v", line, err)
			}
			if len(err.Error()) > badinput.MaxMessage {
				t.Fatalf("%q: a message of %d bytes", line, len(err.Error()))
			}
			return
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("%q read as %+v, which does not write: %v", line, m, err)
		}
		m2, err := parseLine(b)
		if err != nil {
			t.Fatalf("%q read as %s, which does not read back: %v", line, b, err)
		}
		if b2, _ := json.Marshal(m2); !bytes.Equal(b, b2) {
			t.Fatalf("%s read back as %s", b, b2)
		}
	})
}

// TestLargestMessagesFitTheLineLimit measures the longest prepare and done messages of a
// catalogue spanning every node (scatter and gather from one root, ping-pong across the whole
// bisection, fairness into one node) with 255-byte addresses and 19-digit sizes, and checks
// them against MaxRunLine with its documented margin: at most 350 and 90 bytes per agent.
func TestLargestMessagesFitTheLineLimit(t *testing.T) {
	const n = 64
	var a, b []string
	for i := range n / 2 {
		a, b = append(a, fmt.Sprintf("a%03d", i)), append(b, fmt.Sprintf("b%03d", i))
	}
	cl, err := cluster.New(cluster.Description{Name: "wide", NICRateBps: 1e9,
		Backbone: &cluster.Backbone{Topology: cluster.TopologyCable, Kind: cluster.KindElectrical, RateBps: 1e10},
		Racks:    []cluster.Rack{{Name: "A", Nodes: a}, {Name: "B", Nodes: b}}})
	if err != nil {
		t.Fatal(err)
	}
	cat := experiments.DefaultCatalogue
	cat.LMO.Bytes = 0 // one-to-two is cubic in the nodes; its messages are small
	// The largest sizes a catalogue may hold (experiments' bounds), which print the longest.
	cat.Designs.Random = []experiments.RandomDesign{{Nodes: n, D: 3, Patterns: 1, Sizes: []int64{experiments.MaxMessageBytes}}}
	cat.Designs.FairnessMaxK = n/2 - 1
	cat.Collectives.Sizes = []int64{experiments.MaxMessageBytes}
	cat.PingPong.Pairs = []int{n / 2}
	ms, err := measurements(&cat, cl)
	if err != nil {
		t.Fatal(err)
	}
	addr := strings.Repeat("h", 255) + ":65535"
	longest := 0
	for _, m := range ms {
		parts, err := agentParts(m.program, math.MaxInt64, func(string) (string, bool) { return addr, true })
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range parts {
			prep, d := controlLines(t, p)
			if prep > 350*n || d > 90*n {
				t.Errorf("%s %s: prepare %d bytes, done %d for %d agents: past the measured 350 and 90 per agent", m.experiment, m.id, prep, d, n)
			}
			longest = max(longest, prep, d)
		}
	}
	if longest > MaxRunLine(n) || longest < 100*n {
		t.Errorf("the longest message takes %d bytes, the limit for %d agents is %d", longest, n, MaxRunLine(n))
	}
	if MaxRunLine(1<<30) != MaxRunLine(MaxAgents) || MaxRunLine(MaxAgents) != 65<<20 {
		t.Errorf("MaxRunLine is not bounded by MaxAgents: %d", MaxRunLine(1<<30))
	}
}

// controlLines returns the length of an agent's part of a program as the prepare the
// coordinator sends it, and as the done it answers with every operation's timings at their
// longest (19 digits and a sign).
func controlLines(t *testing.T, p *part) (prepare, done int) {
	t.Helper()
	prep, err := json.Marshal(p.m)
	if err != nil {
		t.Fatal(err)
	}
	d := &message{Type: msgDone, Prog: math.MaxInt64}
	for _, th := range p.m.Threads {
		ts := make([]OpTiming, len(th.Ops))
		for i := range ts {
			ts[i] = OpTiming{Start: math.MinInt64, End: math.MinInt64, Busy: math.MinInt64}
		}
		d.Timings = append(d.Timings, ts)
	}
	back, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return len(prep), len(back)
}
