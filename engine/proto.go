package engine

import (
	"bufio"
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
	"strings"
	"sync"
)

// ProtocolVersion is the control protocol's version; an agent and a coordinator of different
// versions refuse each other (build both from one commcal).
const ProtocolVersion = 1

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
	// ready (after welcome): the data listener's address
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

// channel is one end of a control connection: JSON lines each way, writes serialised.
type channel struct {
	conn net.Conn
	dec  *json.Decoder
	mu   sync.Mutex
	enc  *json.Encoder
}

func newChannel(c net.Conn) *channel {
	dec := json.NewDecoder(bufio.NewReader(c))
	dec.DisallowUnknownFields()
	return &channel{conn: c, dec: dec, enc: json.NewEncoder(c)}
}

func (ch *channel) send(m *message) error {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	return ch.enc.Encode(m)
}

func (ch *channel) recv() (*message, error) {
	var m message
	if err := ch.dec.Decode(&m); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, io.EOF
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("not the commcal control protocol (%v)", err)
		}
		return nil, err
	}
	return &m, nil
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

// ReadTokenFile reads a token file, refusing one that other users may read.
func ReadTokenFile(path string) (Token, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("token file %s is readable by others (mode %v); chmod 600 it", path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
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
