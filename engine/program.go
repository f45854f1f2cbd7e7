package engine

import (
	"fmt"
	"net"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// OpKind is what one step of a thread does.
type OpKind string

// The operations a thread is made of.
const (
	// Send writes Bytes on a connection.
	Send OpKind = "send"
	// Recv reads Bytes from a connection; its end is the arrival of the last byte.
	Recv OpKind = "recv"
	// Unpack copies Bytes from the receive buffer into a second buffer: the receive-side
	// unpacking of the L micro-benchmark (Ur), which an MPI library does for a message it received.
	Unpack OpKind = "unpack"
)

// Op is one step of a thread.
type Op struct {
	Kind  OpKind `json:"kind"`
	Conn  int    `json:"conn,omitempty"`
	Bytes int64  `json:"bytes"`
}

// OpTiming is when an operation began and ended and how long it spent inside the system
// calls that moved its bytes (for Unpack, the copy), in ns: the agent reports its own clock,
// the coordinator turns it into seconds after the program's common start.
type OpTiming struct {
	Start int64 `json:"start"`
	End   int64 `json:"end"`
	Busy  int64 `json:"busy"`
}

// Conn is a connection of a program: From dials it, To accepts it. Data may flow both ways.
type Conn struct {
	From, To string
}

// Thread is a sequence of operations one agent runs in order. An agent runs its threads
// concurrently, all from the common start.
type Thread struct {
	Node string
	Ops  []Op
}

// Program is what one repetition runs: connections, opened before the start, and threads.
type Program struct {
	Conns   []Conn
	Threads []Thread
}

// Timings are a program's results: for each thread, each operation's times in seconds after
// the common start, on the coordinator's clock.
type Timings struct {
	Ops [][]SecTiming
	// Start is the common start on the coordinator's clock (ns since its process began).
	Start int64
	// Skew is how late the last thread began after the common start (s).
	Skew float64
}

// SecTiming is an OpTiming in seconds after the common start (Busy a duration).
type SecTiming struct {
	Start, End, Busy float64
}

// check refuses a program that could not run: unknown connections, operations on a
// connection the thread's node is not an end of, negative sizes.
func (p *Program) check() error {
	for t, th := range p.Threads {
		for k, op := range th.Ops {
			if op.Bytes < 0 {
				return fmt.Errorf("engine: program thread %d op %d: negative size", t, k)
			}
			switch op.Kind {
			case Send, Recv:
				if op.Conn < 0 || op.Conn >= len(p.Conns) {
					return fmt.Errorf("engine: program thread %d op %d: no connection %d", t, k, op.Conn)
				}
				c := p.Conns[op.Conn]
				if c.From != th.Node && c.To != th.Node {
					return fmt.Errorf("engine: program thread %d op %d: node %s is no end of connection %d (%s–%s)", t, k, th.Node, op.Conn, c.From, c.To)
				}
			case Unpack:
			default:
				return fmt.Errorf("engine: program thread %d op %d: unknown operation %q", t, k, op.Kind)
			}
		}
	}
	return nil
}

// chunk is the most one system call moves.
const chunk = 256 << 10

// runThread runs a thread's operations on the agent; conns are the program's connections at
// this agent by index. It stops at the first error.
func runThread(ops []Op, conns map[int]*net.TCPConn, deadline time.Time) ([]OpTiming, error) {
	out := make([]OpTiming, len(ops))
	buf := make([]byte, chunk)
	var spare []byte
	for k, op := range ops {
		out[k].Start = now()
		var err error
		switch op.Kind {
		case Send, Recv:
			c := conns[op.Conn]
			if c == nil {
				return nil, fmt.Errorf("connection %d is not open here", op.Conn)
			}
			c.SetDeadline(deadline)
			rc, rerr := c.SyscallConn()
			if rerr != nil {
				return nil, rerr
			}
			if op.Kind == Send {
				out[k].Busy, err = sendAll(rc, buf, op.Bytes)
			} else {
				out[k].Busy, err = recvAll(rc, buf, op.Bytes)
			}
			if err != nil {
				return nil, fmt.Errorf("%s %d bytes on connection %d (%s): %w", op.Kind, op.Bytes, op.Conn, c.RemoteAddr(), err)
			}
		case Unpack:
			if int64(len(spare)) < op.Bytes {
				spare = make([]byte, op.Bytes)
			}
			t := now()
			for off := int64(0); off < op.Bytes; off += chunk {
				copy(spare[off:min(off+chunk, op.Bytes)], buf)
			}
			out[k].Busy = now() - t
		}
		out[k].End = now()
	}
	return out, nil
}

// sendAll writes n bytes, timing the write system calls alone (waits for buffer space are
// not counted): the send overhead Os of the L micro-benchmark.
func sendAll(rc syscall.RawConn, buf []byte, n int64) (busy int64, err error) {
	return moveAll(rc.Write, unix.Write, buf, n)
}

// recvAll reads n bytes, timing the read system calls alone: the receive overhead Or.
func recvAll(rc syscall.RawConn, buf []byte, n int64) (busy int64, err error) {
	return moveAll(rc.Read, unix.Read, buf, n)
}

// moveAll moves n bytes through a non-blocking socket with one system call (unix.Write or
// unix.Read) inside the runtime's poller wait (RawConn.Write or Read, which parks the
// goroutine on EAGAIN and honours the deadline), and sums the time spent in the calls.
func moveAll(wait func(func(uintptr) bool) error, call func(int, []byte) (int, error), buf []byte, n int64) (busy int64, err error) {
	left := n
	var cerr error
	err = wait(func(fd uintptr) bool {
		for left > 0 {
			t := now()
			k, e := call(int(fd), buf[:min(left, int64(len(buf)))])
			busy += now() - t
			switch {
			case e == unix.EAGAIN:
				return false
			case e == unix.EINTR:
			case e != nil:
				cerr = e
				return true
			case k == 0:
				// A read of nothing is the peer's end of stream (a write never returns 0).
				cerr = fmt.Errorf("the peer closed the connection %d bytes short", left)
				return true
			default:
				left -= int64(k)
			}
		}
		return true
	})
	if err == nil {
		err = cerr
	}
	return busy, err
}
