package engine

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/commcal/commcal/internal/badinput"
)

// ProtocolVersion is the control protocol's version; an agent and a coordinator of different
// versions refuse each other (build both from one commcal).
const ProtocolVersion = 3

// Control lines are read with a bound on their length before they are held in memory, so that
// a peer (or a stranger on the port) sending an endless line costs a bounded read, not memory.
const (
	// MaxHandshakeLine bounds a control line before the peer has proved the run's token: the
	// challenge, hello, welcome or refuse, and the ready naming the data listener. A hello
	// listing a thousand addresses takes about 40 KiB.
	MaxHandshakeLine = 64 << 10
	// runLineBase and runLinePerAgent bound a control line once both ends are authenticated
	// (MaxRunLine). The longest messages are a program's prepare and done, which grow with the
	// agents it spans: measured on every experiment of a catalogue spanning all nodes, with
	// 255-byte node addresses and 19-digit sizes, a prepare takes at most 350 bytes and a done
	// 90 bytes per agent (a scatter's or gather's root), so 1 KiB per agent leaves room. A
	// collective's schedule gives each rank a batch per round and a connection per peer, which
	// the 1 MiB base holds up to the largest a catalogue allows
	// (TestSchedulePreparesFitTheControlLine).
	runLineBase     = 1 << 20
	runLinePerAgent = 1 << 10
	// MaxAgents is the most agents a run has: one per node of a cluster description, which
	// holds at most 65,536 nodes.
	MaxAgents = 1 << 16
)

// MaxRunLine is the longest control line of a run of the given number of agents once both
// ends are authenticated: 1 MiB and 1 KiB per agent (65 MiB for MaxAgents).
func MaxRunLine(agents int) int {
	return runLineBase + runLinePerAgent*min(max(agents, 1), MaxAgents)
}

// Message types of the control protocol, in the order a run uses them.
const (
	msgChallenge = "challenge" // coordinator → agent: protocol version, run nonce
	msgHello     = "hello"     // agent → coordinator: rank, host, addresses, proof of the token
	msgWelcome   = "welcome"   // coordinator → agent: its proof, the node, socket settings
	msgRefuse    = "refuse"    // coordinator → agent: why it may not join
	msgReady     = "ready"     // agent → coordinator: its data listener is open; or a program's connections are
	msgPing      = "ping"      // coordinator → agent: clock exchange
	msgPong      = "pong"      // agent → coordinator: the agent's clock
	msgPrepare   = "prepare"   // coordinator → agent: open a program's connections
	msgStart     = "start"     // coordinator → agent: run the program's threads at a time of the agent's clock
	msgDone      = "done"      // agent → coordinator: the threads' timings
	msgError     = "error"     // agent → coordinator: the program failed here
	msgAbort     = "abort"     // coordinator → agent: drop the program
	msgShutdown  = "shutdown"  // coordinator → agent: the run is over (Reason set: it failed)
)

// message is every control message; the type says which fields it uses.
type message struct {
	Type  string `json:"type"`
	Proto int    `json:"proto,omitempty"`
	Nonce string `json:"nonce,omitempty"`
	MAC   string `json:"mac,omitempty"`
	// hello
	Rank  int               `json:"rank,omitempty"`
	Size  int               `json:"size,omitempty"`
	Host  string            `json:"host,omitempty"`
	Addrs []string          `json:"addrs,omitempty"`
	Node  string            `json:"node,omitempty"`
	Info  map[string]string `json:"info,omitempty"`
	// welcome
	Socket *SocketOptions `json:"socket,omitempty"`
	// DataHost is, in a welcome, the address the coordinator sends the node's data to when the
	// cluster description (or the emulator) gives one: the agent's data listener binds there
	// by default.
	DataHost string `json:"data_host,omitempty"`
	// ready (after welcome): the data listener's port, or HOST:PORT when it listens on one
	// address only
	DataAddr string `json:"data_addr,omitempty"`
	// ping, pong
	Seq  int   `json:"seq,omitempty"`
	Time int64 `json:"time,omitempty"`
	// prepare, start, done, error, abort
	Prog    int64        `json:"prog,omitempty"`
	Dial    []dialSpec   `json:"dial,omitempty"`
	Accept  []int        `json:"accept,omitempty"`
	Threads []threadSpec `json:"threads,omitempty"`
	Timings [][]OpTiming `json:"timings,omitempty"`
	// error, refuse, shutdown
	Reason string `json:"reason,omitempty"`
}

// dialSpec is a connection an agent opens: the program's connection index and where to.
type dialSpec struct {
	Conn int    `json:"conn"`
	Addr string `json:"addr"`
}

// threadSpec is one thread of an agent's part of a program.
type threadSpec struct {
	Ops []Op `json:"ops"`
}

// channel is one end of a control connection: JSON lines each way, writes serialised. A
// received line longer than limit is refused unread.
type channel struct {
	conn  net.Conn
	r     *bufio.Reader
	limit int
	mu    sync.Mutex
	enc   *json.Encoder
}

// newChannel opens a channel whose lines are bounded by MaxHandshakeLine until the peer is
// authenticated (then limit is raised to MaxRunLine).
func newChannel(c net.Conn) *channel {
	return &channel{conn: c, r: bufio.NewReader(c), limit: MaxHandshakeLine, enc: json.NewEncoder(c)}
}

func (ch *channel) send(m *message) error {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	return ch.enc.Encode(m)
}

// recv reads the next message: io.EOF when the peer closed the connection (within a line or
// between lines), a *protocolError when the line is too long or not a message.
func (ch *channel) recv() (*message, error) {
	line, err := readLine(ch.r, ch.limit)
	if err != nil {
		return nil, err
	}
	return parseLine(line)
}

// protocolError is a control line that is not a message of the protocol: what was wrong,
// with any received value quoted and cut.
type protocolError struct{ problem string }

func (e *protocolError) Error() string { return "not the commcal control protocol: " + e.problem }

// readLine reads one line, without its newline, refusing (after reading at most limit bytes
// and a buffer more) a line longer than limit.
func readLine(r *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		frag, err := r.ReadSlice('\n')
		n := len(line) + len(frag)
		if err == nil {
			n-- // the newline
		}
		if n > limit {
			start := append(line[:len(line):len(line)], frag...)
			return nil, &protocolError{fmt.Sprintf("a line longer than %d bytes, starting %s", limit, badinput.Quote(string(start[:min(len(start), badinput.MaxQuote)])))}
		}
		line = append(line, frag...)
		switch {
		case err == nil:
			return line[:len(line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF):
			return nil, io.EOF
		default:
			return nil, err
		}
	}
}

// parseLine reads a control line: one JSON object of message's fields and nothing else, no
// unknown field, every field within check's bounds.
func parseLine(line []byte) (*message, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	var m message
	if err := dec.Decode(&m); err != nil {
		return nil, &protocolError{jsonProblem(err)}
	}
	if rest := bytes.TrimSpace(line[dec.InputOffset():]); len(rest) > 0 {
		return nil, &protocolError{fmt.Sprintf("%s after the message", badinput.Quote(string(rest)))}
	}
	if err := m.check(); err != nil {
		return nil, &protocolError{err.Error()}
	}
	return &m, nil
}

// jsonProblem says why a line is not a JSON message, quoting no more of the line than
// badinput.Quote does (encoding/json's own messages repeat a field name or a number whole).
func jsonProblem(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		return "an empty line"
	case errors.As(err, &se):
		return fmt.Sprintf("not JSON: %v (byte %d)", se, se.Offset)
	case errors.As(err, &te):
		v := te.Value
		if num, ok := strings.CutPrefix(v, "number "); ok {
			v = "the number " + badinput.Quote(num)
		}
		return fmt.Sprintf("field %s: %s where %v belongs", te.Field, v, te.Type)
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		if uq, err := strconv.Unquote(name); err == nil {
			name = uq
		}
		return "unknown field " + badinput.Quote(name)
	}
	return badinput.Cut(err.Error())
}

func (ch *channel) close() error { return ch.conn.Close() }

// Token is a run's shared secret: it authenticates agents to the coordinator, the
// coordinator to agents, and data connections to each other.
type Token []byte

// NewToken draws a 32-byte token.
func NewToken() Token {
	t := make(Token, 32)
	rand.Read(t)
	return t
}

// String is the token in hex, as token files and COMMCAL_TOKEN hold it.
func (t Token) String() string { return hex.EncodeToString(t) }

// ParseToken reads a token in hex (at least 16 bytes), surrounding space ignored.
func ParseToken(s string) (Token, error) {
	b, err := hex.DecodeString(strings.TrimSpace(s))
	if err != nil || len(b) < 16 {
		return nil, errors.New("a token is at least 32 hexadecimal digits")
	}
	return b, nil
}

// maxTokenFile bounds a token file: a token is 64 hexadecimal digits and a newline.
const maxTokenFile = 64 << 10

// ReadTokenFile reads a token file, refusing one that other users may read.
func ReadTokenFile(path string) (Token, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("token file %s is readable by others (mode %v); chmod 600 it", path, fi.Mode().Perm())
	}
	b, err := io.ReadAll(io.LimitReader(f, maxTokenFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxTokenFile {
		return nil, fmt.Errorf("token file %s: larger than %d bytes: a token is 64 hexadecimal digits", path, maxTokenFile)
	}
	t, err := ParseToken(string(b))
	if err != nil {
		return nil, fmt.Errorf("token file %s: %w", path, err)
	}
	return t, nil
}

// mac is HMAC-SHA256 of the parts under the token, in hex; the role keeps an agent's proof
// from being replayed as the coordinator's.
func (t Token) mac(role string, parts ...string) string {
	h := hmac.New(sha256.New, t)
	h.Write([]byte(role))
	for _, p := range parts {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (t Token) verify(got, role string, parts ...string) bool {
	want := t.mac(role, parts...)
	return hmac.Equal([]byte(got), []byte(want))
}

func newNonce() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// dataTagSize is the size of the tag a data connection opens with: the program (8 bytes),
// the connection's index (4) and an HMAC over both and the run's nonce (32).
const dataTagSize = 8 + 4 + 32

func (t Token) dataTag(run string, prog int64, conn int) []byte {
	b := make([]byte, 12, dataTagSize)
	binary.BigEndian.PutUint64(b, uint64(prog))
	binary.BigEndian.PutUint32(b[8:], uint32(conn))
	h := hmac.New(sha256.New, t)
	h.Write([]byte("data"))
	h.Write([]byte(run))
	h.Write(b)
	return h.Sum(b)
}

// checkDataTag returns the program and connection a tag names, if it is genuine.
func (t Token) checkDataTag(run string, tag []byte) (prog int64, conn int, ok bool) {
	if len(tag) != dataTagSize {
		return 0, 0, false
	}
	prog = int64(binary.BigEndian.Uint64(tag))
	conn = int(binary.BigEndian.Uint32(tag[8:]))
	return prog, conn, hmac.Equal(tag, t.dataTag(run, prog, conn))
}
