package measure

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/estimate"
)

// BenchOptions is the discipline of the transfer benchmark (CCPE 2014 §3.1).
type BenchOptions struct {
	// Repetitions run until every transfer's 95% CI is at most Rule.MaxRelWidth of its mean,
	// at least MinReps and at most Rule.Cap times.
	Rule    estimate.StoppingRule
	MinReps int
	// SocketBuffer sets SO_SNDBUF and SO_RCVBUF in bytes (0: the kernel's autotuning).
	SocketBuffer int
	// Congestion is the TCP congestion-control algorithm, set per socket.
	Congestion string
	// Timeout bounds one repetition.
	Timeout time.Duration
}

// DefaultBench repeats 3 to 10 times to a 2% interval, with CUBIC (this machine's default is
// BBR) and the kernel's buffer autotuning.
var DefaultBench = BenchOptions{Rule: estimate.StoppingRule{MaxRelWidth: 0.02, Cap: 10}, MinReps: 3, Congestion: "cubic", Timeout: 2 * time.Minute}

// Repetition is one run of a pattern: each transfer's completion time (its last byte's
// arrival minus the common start) and the start skew (the latest sender's first write after
// the common start).
type Repetition struct {
	Start time.Time
	Times []float64
	Skew  float64
}

// PatternResult is every repetition of a pattern and whether the stopping rule held.
type PatternResult struct {
	Reps      []Repetition
	Converged bool
}

// RunPattern repeats a pattern under the stopping rule.
func (e *Emulation) RunPattern(ctx context.Context, flows []contention.Flow, o BenchOptions) (*PatternResult, error) {
	res := &PatternResult{}
	for {
		rep, err := e.RunOnce(ctx, flows, o)
		if err != nil {
			return nil, err
		}
		res.Reps = append(res.Reps, *rep)
		if len(res.Reps) < max(o.MinReps, 2) {
			continue
		}
		res.Converged = true
		for f := range flows {
			x := make([]float64, len(res.Reps))
			for r, rp := range res.Reps {
				x[r] = rp.Times[f]
			}
			m, err := estimate.Summarize(x, estimate.StoppingRule{MaxRelWidth: o.Rule.MaxRelWidth})
			if err != nil || m.Status != estimate.Converged {
				res.Converged = false
			}
		}
		if res.Converged || (o.Rule.Cap > 0 && len(res.Reps) >= o.Rule.Cap) {
			return res, nil
		}
	}
}

// control sets the socket options before connecting or listening.
func (o BenchOptions) control(_, _ string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		if o.Congestion != "" {
			serr = unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION, o.Congestion)
		}
		if serr == nil && o.SocketBuffer > 0 {
			serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF, o.SocketBuffer)
			if serr == nil {
				serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, o.SocketBuffer)
			}
		}
	})
	if err != nil {
		return err
	}
	if serr != nil {
		return fmt.Errorf("measure: socket options (congestion %q, buffer %d): %w", o.Congestion, o.SocketBuffer, serr)
	}
	return nil
}

// RunOnce runs a pattern once: every connection is opened first (a listener in the
// receiver's namespace, a dial from the sender's), then every sender starts writing at one
// common instant; each receiver timestamps the arrival of its last byte.
func (e *Emulation) RunOnce(ctx context.Context, flows []contention.Flow, o BenchOptions) (*Repetition, error) {
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	n := len(flows)
	senders := make([]net.Conn, n)
	receivers := make([]net.Conn, n)
	defer func() {
		for i := range flows {
			if senders[i] != nil {
				senders[i].Close()
			}
			if receivers[i] != nil {
				receivers[i].Close()
			}
		}
	}()
	lc := net.ListenConfig{Control: o.control}
	for i, f := range flows {
		src, ok1 := e.nodeNS[f.Src]
		dst, ok2 := e.nodeNS[f.Dst]
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("measure: transfer %d: %s→%s is not between emulated nodes", i, f.Src, f.Dst)
		}
		var ln net.Listener
		err := inNS(dst, func() error {
			var err error
			ln, err = lc.Listen(ctx, "tcp4", net.JoinHostPort(e.nodeIP[f.Dst].String(), "0"))
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("measure: listening on %s: %w", f.Dst, err)
		}
		accepted := make(chan net.Conn, 1)
		go func() {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}()
		d := net.Dialer{Control: o.control, LocalAddr: &net.TCPAddr{IP: e.nodeIP[f.Src]}}
		err = inNS(src, func() error {
			var err error
			senders[i], err = d.DialContext(ctx, "tcp4", ln.Addr().String())
			return err
		})
		if err != nil {
			ln.Close()
			return nil, fmt.Errorf("measure: connecting %s→%s: %w", f.Src, f.Dst, err)
		}
		select {
		case c, ok := <-accepted:
			if !ok {
				ln.Close()
				return nil, fmt.Errorf("measure: accepting on %s failed", f.Dst)
			}
			receivers[i] = c
		case <-ctx.Done():
			ln.Close()
			return nil, ctx.Err()
		}
		ln.Close()
	}
	if dl, ok := ctx.Deadline(); ok {
		for i := range flows {
			senders[i].SetDeadline(dl)
			receivers[i].SetDeadline(dl)
		}
	}
	// Ctrl-C (a cancelled context) closes every connection, so that blocked reads and writes
	// end at once and the emulation is torn down without waiting for the timeout.
	stop := context.AfterFunc(ctx, func() {
		for i := range flows {
			senders[i].Close()
			receivers[i].Close()
		}
	})
	defer stop()
	start := make(chan struct{})
	var wg sync.WaitGroup
	last := make([]time.Time, n)
	first := make([]time.Time, n)
	errs := make([]error, 2*n)
	for i, f := range flows {
		wg.Add(2)
		go func() { // receiver: read every byte, note when the last arrived
			defer wg.Done()
			buf := make([]byte, 256<<10)
			var got int64
			for got < int64(f.Bytes) {
				k, err := receivers[i].Read(buf)
				got += int64(k)
				if err != nil {
					if got < int64(f.Bytes) {
						errs[2*i] = fmt.Errorf("receiving %s→%s: %d of %.0f bytes: %w", f.Src, f.Dst, got, f.Bytes, err)
					}
					break
				}
			}
			last[i] = time.Now()
		}()
		go func() { // sender: wait for the common start, then write the message
			defer wg.Done()
			buf := make([]byte, 256<<10)
			<-start
			first[i] = time.Now()
			left := int64(f.Bytes)
			for left > 0 {
				k := min(left, int64(len(buf)))
				if _, err := senders[i].Write(buf[:k]); err != nil {
					errs[2*i+1] = fmt.Errorf("sending %s→%s: %w", f.Src, f.Dst, err)
					return
				}
				left -= k
			}
			if tc, ok := senders[i].(*net.TCPConn); ok {
				tc.CloseWrite()
			}
		}()
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rep := &Repetition{Start: t0, Times: make([]float64, n)}
	for i := range flows {
		for _, err := range errs[2*i : 2*i+2] {
			if err != nil && err != io.EOF {
				return nil, fmt.Errorf("measure: %w", err)
			}
		}
		rep.Times[i] = last[i].Sub(t0).Seconds()
		rep.Skew = max(rep.Skew, first[i].Sub(t0).Seconds())
	}
	return rep, nil
}
