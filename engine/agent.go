package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/commcal/commcal/internal/badinput"
)

// AgentConfig is how one agent joins a run.
type AgentConfig struct {
	// Rank and Size are the agent's place in the launch (from the launcher's environment or
	// flags); rank 0 also runs the coordinator, elsewhere.
	Rank, Size int
	// Host is the agent's host name (default: os.Hostname).
	Host string
	// Node names the cluster node this agent is; empty: the coordinator maps the agent by
	// its addresses or host name.
	Node string
	// NetNS is a network namespace the data connections are made in (tests and the
	// emulator); the control channel stays where the process is.
	NetNS string
	// Coordinator lists the addresses (host:port) to reach the coordinator at, tried in turn.
	Coordinator []string
	// Token authenticates the run.
	Token Token
	// DataListen is where the data listener binds (CheckDataListen): an IP address, a network
	// interface's name or "*" for every interface, with an optional :PORT. Empty: the node's
	// data address when this host has it, else the address the control channel uses (every
	// interface in a network namespace of the agent's own, or when that address is loopback).
	DataListen string
	// ConnectTimeout bounds how long the agent tries to reach the coordinator.
	ConnectTimeout time.Duration
	Logger         *slog.Logger
}

// SocketOptions are the settings of every data socket, which the coordinator sends each
// agent so that every node measures alike.
type SocketOptions struct {
	// Congestion is the TCP congestion control, set per socket ("" leaves the system's).
	Congestion string `json:"congestion,omitempty"`
	// Buffer sets SO_SNDBUF and SO_RCVBUF in bytes (0: the kernel's autotuning).
	Buffer int `json:"buffer,omitempty"`
	// Timeout bounds one program, its connections included (ns).
	Timeout time.Duration `json:"timeout"`
}

// control sets the socket options before connecting or listening.
func (o SocketOptions) control(_, _ string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		if o.Congestion != "" {
			serr = unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION, o.Congestion)
		}
		if serr == nil && o.Buffer > 0 {
			serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF, o.Buffer)
			if serr == nil {
				serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, o.Buffer)
			}
		}
	})
	if err != nil {
		return err
	}
	if serr != nil {
		return fmt.Errorf("socket options (congestion %q, buffer %d): %w", o.Congestion, o.Buffer, serr)
	}
	return nil
}

// agent is a running agent.
type agent struct {
	cfg    AgentConfig
	ch     *channel
	run    string // the run's nonce, which data tags are bound to
	sock   SocketOptions
	ln     net.Listener
	log    *slog.Logger
	mu     sync.Mutex
	cond   *sync.Cond
	inbox  map[[2]int64]*net.TCPConn // accepted data connections by (program, index)
	closed bool
}

// RunAgent joins a run and serves the coordinator until it ends the run. It returns nil when
// the coordinator shut the run down normally, and an error saying why otherwise (the
// coordinator could not be reached or refused the agent, the coordinator was lost, the run
// failed elsewhere, ctx was cancelled). Every connection it made is closed on return.
func RunAgent(ctx context.Context, cfg AgentConfig) error {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Host == "" {
		cfg.Host, _ = os.Hostname()
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = time.Minute
	}
	for _, f := range []struct{ what, v string }{{"host", cfg.Host}, {"node", cfg.Node}} {
		if err := CheckName(f.v); err != nil {
			return fmt.Errorf("engine: agent rank %d: %s %s %v", cfg.Rank, f.what, badinput.Quote(f.v), err)
		}
	}
	if cfg.DataListen != "" {
		if err := CheckDataListen(cfg.DataListen); err != nil {
			return fmt.Errorf("engine: agent rank %d: data listener address %s: %w", cfg.Rank, badinput.Quote(cfg.DataListen), err)
		}
	}
	a := &agent{cfg: cfg, log: cfg.Logger.With("rank", cfg.Rank), inbox: map[[2]int64]*net.TCPConn{}}
	a.cond = sync.NewCond(&a.mu)
	if err := a.join(ctx); err != nil {
		return err
	}
	defer a.close()
	stop := context.AfterFunc(ctx, func() { a.ch.close() })
	defer stop()
	err := a.serve()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// join reaches the coordinator, proves the token, checks the coordinator's proof and opens
// the data listener.
func (a *agent) join(ctx context.Context) error {
	if len(a.cfg.Coordinator) == 0 {
		return errors.New("engine: agent: no coordinator address")
	}
	addrs, err := hostAddrs(a.cfg.NetNS)
	if err != nil {
		return fmt.Errorf("engine: agent rank %d: %w", a.cfg.Rank, err)
	}
	addrs = addrs[:min(len(addrs), maxHostAddrs)] // what a hello may list

	info, err := hostInfo(a.cfg.NetNS)
	if err != nil {
		return fmt.Errorf("engine: agent rank %d: %w", a.cfg.Rank, err)
	}
	deadline := time.Now().Add(a.cfg.ConnectTimeout)
	var last error
	for {
		for _, c := range a.cfg.Coordinator {
			err := a.handshake(ctx, c, addrs, info)
			if err == nil {
				return nil
			}
			var fatal *refusedError
			if errors.As(err, &fatal) || ctx.Err() != nil {
				return err
			}
			last = err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("engine: agent rank %d on %s cannot reach the coordinator at %s within %v: %w",
				a.cfg.Rank, a.cfg.Host, strings.Join(a.cfg.Coordinator, ", "), a.cfg.ConnectTimeout, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// refusedError ends the attempts to join: the coordinator answered and said no, or is not
// the run's.
type refusedError struct{ msg string }

func (e *refusedError) Error() string { return e.msg }

func (a *agent) handshake(ctx context.Context, addr string, addrs []string, info map[string]string) error {
	d := net.Dialer{Timeout: 2 * time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	ch := newChannel(c)
	fail := func(err error) error { c.Close(); return err }
	c.SetDeadline(time.Now().Add(10 * time.Second))
	m, err := ch.recv()
	if err != nil {
		return fail(fmt.Errorf("%s: %w", addr, err))
	}
	if m.Type != msgChallenge {
		return fail(&refusedError{fmt.Sprintf("engine: agent: %s is not a commcal coordinator (it opened with %s)", addr, badinput.Quote(m.Type))})
	}
	if m.Proto != ProtocolVersion {
		return fail(&refusedError{fmt.Sprintf("engine: agent: the coordinator at %s speaks protocol %d, this agent %d: run one commcal version everywhere", addr, m.Proto, ProtocolVersion)})
	}
	run, mine := m.Nonce, newNonce()
	hello := &message{Type: msgHello, Proto: ProtocolVersion, Nonce: mine, Rank: a.cfg.Rank, Size: a.cfg.Size, Host: a.cfg.Host,
		Addrs: addrs, Node: a.cfg.Node, Info: info}
	hello.MAC = a.cfg.Token.mac("agent", run, mine, strconv.Itoa(a.cfg.Rank), a.cfg.Host, a.cfg.Node)
	if err := ch.send(hello); err != nil {
		return fail(fmt.Errorf("%s: %w", addr, err))
	}
	if m, err = ch.recv(); err != nil {
		return fail(fmt.Errorf("%s: %w", addr, err))
	}
	switch {
	case m.Type == msgRefuse:
		return fail(&refusedError{fmt.Sprintf("engine: agent rank %d on %s: the coordinator at %s refused it: %s", a.cfg.Rank, a.cfg.Host, addr, badinput.Cut(m.Reason))})
	case m.Type != msgWelcome || !a.cfg.Token.verify(m.MAC, "coordinator", run, mine):
		return fail(&refusedError{fmt.Sprintf("engine: agent rank %d: the coordinator at %s did not prove the run's token", a.cfg.Rank, addr)})
	case m.Socket == nil:
		return fail(&refusedError{"engine: agent: the coordinator sent no socket settings"})
	}
	a.ch, a.run, a.sock = ch, run, *m.Socket
	ch.limit = MaxRunLine(a.cfg.Size)
	if err := a.listenData(ctx, m.DataHost, addrs, c.LocalAddr()); err != nil {
		ch.send(&message{Type: msgError, Reason: "data listener: " + err.Error()})
		return fail(&refusedError{fmt.Sprintf("engine: agent rank %d on %s: data listener: %v", a.cfg.Rank, a.cfg.Host, err)})
	}
	go a.acceptLoop()
	c.SetDeadline(time.Time{})
	a.log.Debug("joined", "coordinator", addr, "data", a.ln.Addr().String())
	return ch.send(&message{Type: msgReady, DataAddr: dataAddrOf(a.ln)})
}

// listenData opens the data listener, in the agent's namespace, at DataListen or else
// defaultDataListen's address.
func (a *agent) listenData(ctx context.Context, nodeHost string, own []string, control net.Addr) error {
	lc := net.ListenConfig{Control: a.sock.control}
	return InNetNS(a.cfg.NetNS, func() error {
		at := defaultDataListen(a.cfg.NetNS, nodeHost, own, control)
		if a.cfg.DataListen != "" {
			var err error
			if at, err = ResolveDataListen(a.cfg.DataListen); err != nil {
				return err
			}
		}
		var err error
		a.ln, err = lc.Listen(ctx, "tcp", at)
		return err
	})
}

// hostInfo is what the manifest records about an agent's host. The TCP settings are read in
// the namespace the data connections are made in (netns; "": the agent's own), whose values
// they are: an emulated node's differ from the machine's. Read once, when the agent joins; the
// error is the namespace's, if it cannot be entered.
func hostInfo(netns string) (map[string]string, error) {
	info := map[string]string{}
	read := func(key, path string) {
		if b, err := os.ReadFile(path); err == nil {
			info[key] = strings.Join(strings.Fields(string(b)), " ")
		}
	}
	read("kernel", "/proc/sys/kernel/osrelease")
	// Global limits, read in the agent's own namespace (a child namespace does not show them).
	read("rmem_max", "/proc/sys/net/core/rmem_max")
	read("wmem_max", "/proc/sys/net/core/wmem_max")
	// The namespace's.
	err := InNetNS(netns, func() error {
		read("tcp_congestion_control", "/proc/sys/net/ipv4/tcp_congestion_control")
		read("tcp_rmem", "/proc/sys/net/ipv4/tcp_rmem")
		read("tcp_wmem", "/proc/sys/net/ipv4/tcp_wmem")
		read("tcp_slow_start_after_idle", "/proc/sys/net/ipv4/tcp_slow_start_after_idle")
		read("tcp_no_metrics_save", TCPNoMetricsSave)
		return nil
	})
	return info, err
}

// acceptLoop files every data connection whose tag is genuine under its program and index;
// anything else is closed.
func (a *agent) acceptLoop() {
	for {
		c, err := a.ln.Accept()
		if err != nil {
			return
		}
		go func() {
			tag := make([]byte, dataTagSize)
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			_, err := io.ReadFull(c, tag)
			prog, conn, ok := a.cfg.Token.checkDataTag(a.run, tag)
			if err != nil || !ok {
				a.log.Warn("refused a data connection without the run's tag", "from", c.RemoteAddr().String())
				c.Close()
				return
			}
			c.SetReadDeadline(time.Time{})
			a.mu.Lock()
			defer a.mu.Unlock()
			if a.closed {
				c.Close()
				return
			}
			a.inbox[[2]int64{prog, int64(conn)}] = c.(*net.TCPConn)
			a.cond.Broadcast()
		}()
	}
}

// close ends everything: the listener, the data connections, the control channel.
func (a *agent) close() {
	a.ln.Close()
	a.ch.close()
	a.mu.Lock()
	a.closed = true
	for k, c := range a.inbox {
		c.Close()
		delete(a.inbox, k)
	}
	a.cond.Broadcast()
	a.mu.Unlock()
}

// program is the agent's part of a program being run.
type program struct {
	id      int64
	conns   map[int]*net.TCPConn
	threads []threadSpec
	bufs    []buffers // each thread's, made by prepare
}

func (p *program) close() {
	for _, c := range p.conns {
		c.Close()
	}
}

// serve answers the coordinator until shutdown or a lost channel. Control messages are read
// on their own goroutine, so that an abort or a shutdown closes a running program's
// connections at once instead of waiting for its threads.
func (a *agent) serve() error {
	msgs := make(chan *message)
	lost := make(chan error, 1)
	go func() {
		for {
			m, err := a.ch.recv()
			if err != nil {
				lost <- err
				return
			}
			msgs <- m
		}
	}()
	var cur *program
	finished := make(chan *message, 1)
	defer func() {
		if cur != nil {
			cur.close()
		}
	}()
	for {
		select {
		case err := <-lost:
			return fmt.Errorf("engine: agent rank %d on %s lost the coordinator: %w", a.cfg.Rank, a.cfg.Host, err)
		case m := <-finished:
			if cur != nil && m.Prog == cur.id {
				cur.close()
				cur = nil
			}
			if err := a.ch.send(m); err != nil {
				return fmt.Errorf("engine: agent rank %d: %w", a.cfg.Rank, err)
			}
		case m := <-msgs:
			switch m.Type {
			case msgPing:
				if err := a.ch.send(&message{Type: msgPong, Seq: m.Seq, Time: now()}); err != nil {
					return err
				}
			case msgPrepare:
				if cur != nil {
					cur.close()
				}
				cur = &program{id: m.Prog, threads: m.Threads}
				reply := &message{Type: msgReady, Prog: m.Prog}
				if err := a.prepare(cur, m); err != nil {
					reply = &message{Type: msgError, Prog: m.Prog, Reason: err.Error()}
					cur.close()
					cur = nil
				}
				if err := a.ch.send(reply); err != nil {
					return err
				}
			case msgStart:
				if cur == nil || cur.id != m.Prog {
					if err := a.ch.send(&message{Type: msgError, Prog: m.Prog, Reason: "start of a program that is not prepared"}); err != nil {
						return err
					}
					continue
				}
				go func(p *program, at int64) { finished <- a.runProgram(p, at) }(cur, m.Time)
			case msgAbort:
				if cur != nil && cur.id == m.Prog {
					cur.close()
				}
			case msgShutdown:
				if m.Reason != "" {
					return fmt.Errorf("engine: agent rank %d on %s: the coordinator ended the run: %s", a.cfg.Rank, a.cfg.Host, badinput.Cut(m.Reason))
				}
				return nil
			default:
				return fmt.Errorf("engine: agent rank %d: unexpected control message %s", a.cfg.Rank, badinput.Quote(m.Type))
			}
		}
	}
}

// prepare makes the threads' buffers (threadBuffers) and opens the program's connections: it
// dials those it owns (tagging each) and waits for those it accepts.
func (a *agent) prepare(p *program, m *message) error {
	p.bufs = make([]buffers, len(p.threads))
	for t, th := range p.threads {
		p.bufs[t] = threadBuffers(th.Ops)
	}
	deadline := time.Now().Add(a.sock.Timeout)
	a.mu.Lock()
	for k, c := range a.inbox { // connections of earlier programs: aborted ones
		if k[0] < p.id {
			c.Close()
			delete(a.inbox, k)
		}
	}
	a.mu.Unlock()
	p.conns = map[int]*net.TCPConn{}
	d := net.Dialer{Control: a.sock.control, Deadline: deadline}
	for _, ds := range m.Dial {
		var c net.Conn
		err := InNetNS(a.cfg.NetNS, func() error {
			var err error
			c, err = d.Dial("tcp", ds.Addr)
			return err
		})
		if err != nil {
			return fmt.Errorf("connecting to %s: %w", ds.Addr, err)
		}
		p.conns[ds.Conn] = c.(*net.TCPConn)
		c.SetWriteDeadline(deadline)
		if _, err := c.Write(a.cfg.Token.dataTag(a.run, p.id, ds.Conn)); err != nil {
			return fmt.Errorf("connecting to %s: %w", ds.Addr, err)
		}
	}
	timer := time.AfterFunc(time.Until(deadline), func() { a.mu.Lock(); a.cond.Broadcast(); a.mu.Unlock() })
	defer timer.Stop()
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, k := range m.Accept {
		key := [2]int64{p.id, int64(k)}
		for a.inbox[key] == nil {
			if a.closed || time.Now().After(deadline) {
				return fmt.Errorf("connection %d of program %d did not arrive within %v", k, p.id, a.sock.Timeout)
			}
			a.cond.Wait()
		}
		p.conns[k] = a.inbox[key]
		delete(a.inbox, key)
	}
	return nil
}

// runProgram runs the threads from the common start (at, on this agent's clock) and reports
// their timings, or the first error. The connections are closed by the caller.
func (a *agent) runProgram(p *program, at int64) *message {
	deadline := time.Now().Add(a.sock.Timeout + time.Duration(at-now()))
	timings := make([][]OpTiming, len(p.threads))
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for t, th := range p.threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sleepUntil(at)
			var err error
			if timings[t], err = runThread(th.Ops, p.conns, p.bufs[t], deadline); err != nil {
				// The first error is the cause; closing the connections ends the other
				// threads (and the peers' operations) at once instead of at the timeout.
				once.Do(func() { first = err; p.close() })
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return &message{Type: msgError, Prog: p.id, Reason: firstLine(first)}
	}
	return &message{Type: msgDone, Prog: p.id, Timings: timings}
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
