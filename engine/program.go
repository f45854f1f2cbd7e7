package engine

import (
	"errors"
	"fmt"
	"net"
	"sync"
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
	// Batch runs its Parts (sends and receives, at most one of each kind per connection) at
	// once and ends when the last of them has: an MPI process's step of a collective, the
	// two halves of an MPI_Sendrecv or the non-blocking sends and receives one MPI_Waitall
	// completes. Its Busy is the sum of the parts' system-call time.
	Batch OpKind = "batch"
)

// Op is one step of a thread.
type Op struct {
	Kind  OpKind `json:"kind"`
	Conn  int    `json:"conn,omitempty"`
	Bytes int64  `json:"bytes"`
	// Parts are a Batch's sends and receives.
	Parts []Op `json:"parts,omitempty"`
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
// connection the thread's node is not an end of, negative sizes, a batch holding anything but
// sends and receives or two of one kind on one connection.
func (p *Program) check() error {
	for t, th := range p.Threads {
		for k, op := range th.Ops {
			if err := p.checkOp(th.Node, op); err != nil {
				return fmt.Errorf("engine: program thread %d op %d: %w", t, k, err)
			}
			if op.Kind != Batch {
				continue
			}
			seen := map[[2]int]bool{}
			for j, part := range op.Parts {
				if err := p.checkPart(th.Node, part, seen); err != nil {
					return fmt.Errorf("engine: program thread %d op %d part %d: %w", t, k, j, err)
				}
			}
		}
	}
	return nil
}

// checkPart checks a part of a batch of a thread on node; seen holds the batch's earlier
// parts' connections and kinds.
func (p *Program) checkPart(node string, part Op, seen map[[2]int]bool) error {
	if part.Kind != Send && part.Kind != Recv {
		return fmt.Errorf("a batch holds sends and receives, not %q", part.Kind)
	}
	if err := p.checkOp(node, part); err != nil {
		return err
	}
	key := [2]int{part.Conn, boolInt(part.Kind == Send)}
	if seen[key] {
		return fmt.Errorf("a second %s on connection %d in one batch", part.Kind, part.Conn)
	}
	seen[key] = true
	return nil
}

// checkOp checks one operation (a batch's parts apart) of a thread on node.
func (p *Program) checkOp(node string, op Op) error {
	if op.Bytes < 0 {
		return errors.New("negative size")
	}
	switch op.Kind {
	case Send, Recv:
		if op.Conn < 0 || op.Conn >= len(p.Conns) {
			return fmt.Errorf("no connection %d", op.Conn)
		}
		c := p.Conns[op.Conn]
		if c.From != node && c.To != node {
			return fmt.Errorf("node %s is no end of connection %d (%s–%s)", node, op.Conn, c.From, c.To)
		}
	case Unpack:
	case Batch:
		if len(op.Parts) == 0 {
			return errors.New("an empty batch")
		}
	default:
		return fmt.Errorf("unknown operation %q", op.Kind)
	}
	if op.Kind != Batch && len(op.Parts) > 0 {
		article := "a"
		if op.Kind == Unpack {
			article = "an"
		}
		return fmt.Errorf("%s %s has no parts", article, op.Kind)
	}
	return nil
}

// chunk is the most one system call moves.
const chunk = 256 << 10

// buffers are a thread's memory, allocated when its program is prepared so that no
// repetition times an allocation, nor the first touch of a page: parts, one of chunk bytes
// for its sends and receives and as many as the largest of its batches has parts (the first
// the same), one for each part; spare, the destination of its largest Unpack.
type buffers struct {
	parts [][]byte
	spare []byte
}

// threadBuffers are the buffers of a thread that runs ops, every page written once.
func threadBuffers(ops []Op) buffers {
	n, unpack := 1, int64(0)
	for _, op := range ops {
		switch op.Kind {
		case Batch:
			n = max(n, len(op.Parts))
		case Unpack:
			unpack = max(unpack, op.Bytes)
		}
	}
	b := buffers{parts: make([][]byte, n), spare: make([]byte, unpack)}
	for i := range b.parts {
		b.parts[i] = make([]byte, chunk)
		touch(b.parts[i])
	}
	touch(b.spare)
	return b
}

// touch writes every page of buf once, so that the kernel maps them now.
func touch(buf []byte) {
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = 1
	}
}

// runThread runs a thread's operations on the agent with its buffers (threadBuffers); conns
// are the program's connections at this agent by index. It stops at the first error.
func runThread(ops []Op, conns map[int]*net.TCPConn, bufs buffers, deadline time.Time) ([]OpTiming, error) {
	out := make([]OpTiming, len(ops))
	buf, spare := bufs.parts[0], bufs.spare
	for k, op := range ops {
		out[k].Start = now()
		var err error
		switch op.Kind {
		case Send, Recv:
			var c *net.TCPConn
			if c, err = connOf(op, conns); err == nil {
				c.SetDeadline(deadline)
				out[k].Busy, err = move(op, c, buf)
			}
		case Unpack:
			t := now()
			for off := int64(0); off < op.Bytes; off += chunk {
				copy(spare[off:min(off+chunk, op.Bytes)], buf)
			}
			out[k].Busy = now() - t
		case Batch:
			out[k].Busy, err = runBatch(op.Parts, conns, bufs.parts[:len(op.Parts)], deadline)
		}
		if err != nil {
			return nil, err
		}
		out[k].End = now()
	}
	return out, nil
}

// connOf is the connection of a send or receive at this agent.
func connOf(op Op, conns map[int]*net.TCPConn) (*net.TCPConn, error) {
	c := conns[op.Conn]
	if c == nil {
		return nil, fmt.Errorf("connection %d is not open here", op.Conn)
	}
	return c, nil
}

// move runs one send or receive on its connection c with buf, within c's deadline, returning
// its system-call time.
func move(op Op, c *net.TCPConn, buf []byte) (int64, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	var busy int64
	if op.Kind == Send {
		busy, err = sendAll(rc, buf, op.Bytes)
	} else {
		busy, err = recvAll(rc, buf, op.Bytes)
	}
	if err != nil {
		return busy, fmt.Errorf("%s %d bytes on connection %d (%s): %w", op.Kind, op.Bytes, op.Conn, c.RemoteAddr(), err)
	}
	return busy, nil
}

// runBatch runs parts at once, each on its own goroutine and buffer (bufs[i]), and returns
// when every part has ended: their summed system-call time, or the error of the part that
// failed first. A send and a receive on one connection run side by side, as the runtime's
// poller allows one reader and one writer on a socket. Every part's connection gets the
// deadline before any part starts; a part that fails sets its batch's deadlines to now, so
// that the others end at once (with errors of their own, which are not the cause) instead
// of at the repetition's timeout, as the program fails with it.
func runBatch(parts []Op, conns map[int]*net.TCPConn, bufs [][]byte, deadline time.Time) (int64, error) {
	cs := make([]*net.TCPConn, len(parts))
	for i, part := range parts {
		c, err := connOf(part, conns)
		if err != nil {
			return 0, err
		}
		c.SetDeadline(deadline)
		cs[i] = c
	}
	busy := make([]int64, len(parts))
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
	)
	for i, part := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, err := move(part, cs[i], bufs[i])
			busy[i] = b
			if err == nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if first == nil {
				first = err
				for _, c := range cs {
					c.SetDeadline(time.Now())
				}
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return 0, first
	}
	var sum int64
	for _, b := range busy {
		sum += b
	}
	return sum, nil
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
