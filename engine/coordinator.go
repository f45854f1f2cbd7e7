package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/internal/badinput"
)

// CoordinatorConfig is how a coordinator runs.
type CoordinatorConfig struct {
	Cluster *cluster.Cluster
	// Size is the number of agents of the launch; every node of the cluster needs one.
	Size  int
	Token Token
	// Listen is the control listener's address (default ":0", every interface).
	Listen string
	Socket SocketOptions
	// JoinTimeout bounds the wait for every agent (default one minute).
	JoinTimeout time.Duration
	// Addrs, when set, gives nodes' addresses that the description does not (the emulator's,
	// which are not the user's to write): agents are mapped by them and data goes to them.
	Addrs  map[string]string
	Logger *slog.Logger
}

// AgentInfo is what the coordinator knows of an agent that joined.
type AgentInfo struct {
	Rank     int
	Host     string
	Node     string
	DataAddr string
	Info     map[string]string
	// Offset is how far the agent's clock is ahead of the coordinator's; SyncError bounds the
	// error of that estimate (half the best ping's round trip).
	Offset, SyncError time.Duration
}

// peer is a joined agent.
type peer struct {
	AgentInfo
	ch *channel
}

func (p *peer) String() string {
	return fmt.Sprintf("node %s (rank %d on host %s)", p.Node, p.Rank, p.Host)
}

// event is a message from an agent, or the loss of its channel.
type event struct {
	p   *peer
	m   *message
	err error
}

// Coordinator drives the agents of a run.
type Coordinator struct {
	cfg    CoordinatorConfig
	ln     net.Listener
	run    string
	peers  []*peer          // by rank
	byNode map[string]*peer // by cluster node
	events chan event
	quit   chan struct{} // closed by Shutdown: readers stop forwarding
	prog   int64
	log    *slog.Logger
	synced time.Time
}

// CheckLaunch says whether a launch of size agents can measure cl (one agent per node), and
// if not, what to change: a *LaunchSizeError.
func CheckLaunch(cl *cluster.Cluster, size int) error {
	if n := len(cl.Nodes()); size != n {
		return &LaunchSizeError{Nodes: n, Agents: size}
	}
	return nil
}

// LaunchSizeError is a launch whose number of agents is not the number of nodes of the
// cluster description: bad input, in the launch or in the description.
type LaunchSizeError struct{ Nodes, Agents int }

func (e *LaunchSizeError) Error() string {
	return fmt.Sprintf("engine: the cluster description has %d nodes and the launch %d agents: start one agent per node", e.Nodes, e.Agents)
}

// BadInput marks the error as bad input.
func (*LaunchSizeError) BadInput() {}

// Listen opens the coordinator's control listener. Join then waits for the agents.
func Listen(ctx context.Context, cfg CoordinatorConfig) (*Coordinator, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Listen == "" {
		cfg.Listen = ":0"
	}
	if cfg.JoinTimeout <= 0 {
		cfg.JoinTimeout = time.Minute
	}
	if cfg.Socket.Timeout <= 0 {
		cfg.Socket.Timeout = 2 * time.Minute
	}
	if err := CheckLaunch(cfg.Cluster, cfg.Size); err != nil {
		return nil, err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("engine: coordinator: %w", err)
	}
	return &Coordinator{cfg: cfg, ln: ln, run: newNonce(), byNode: map[string]*peer{}, events: make(chan event, 64), quit: make(chan struct{}), log: cfg.Logger}, nil
}

// Port is the control listener's port.
func (c *Coordinator) Port() int { return c.ln.Addr().(*net.TCPAddr).Port }

// Agents describes the agents that joined, by rank.
func (c *Coordinator) Agents() []AgentInfo {
	out := make([]AgentInfo, len(c.peers))
	for i, p := range c.peers {
		out[i] = p.AgentInfo
	}
	return out
}

// joinResult is one connection's handshake: an agent, or why it failed (fatal: the run
// cannot go on, such as a wrong token or a node claimed twice; otherwise a stranger, ignored).
type joinResult struct {
	p     *peer
	err   error
	fatal bool
}

// Join waits until every agent has joined, maps each to its node, and estimates every
// agent's clock offset. On error every agent that joined is told to shut down.
func (c *Coordinator) Join(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			c.Shutdown(err.Error())
		}
	}()
	results := make(chan joinResult)
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			conn, err := c.ln.Accept()
			if err != nil {
				return
			}
			go func() {
				r := c.handshake(conn)
				select {
				case results <- r:
				case <-done:
					if r.p != nil {
						r.p.ch.close()
					}
				}
			}()
		}
	}()
	c.peers = make([]*peer, c.cfg.Size)
	timeout := time.After(c.cfg.JoinTimeout)
	for joined := 0; joined < c.cfg.Size; {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timeout:
			var missing []string
			for _, n := range c.cfg.Cluster.Nodes() {
				if c.byNode[n.Name] == nil {
					missing = append(missing, n.Name)
				}
			}
			return fmt.Errorf("engine: %d of %d agents joined within %v; no agent for %s", joined, c.cfg.Size, c.cfg.JoinTimeout, strings.Join(missing, ", "))
		case r := <-results:
			if r.err != nil {
				if r.fatal {
					return r.err
				}
				c.log.Warn("ignored a connection", "reason", r.err.Error())
				continue
			}
			if err := c.admit(r.p); err != nil {
				r.p.ch.send(&message{Type: msgRefuse, Reason: err.Error()})
				r.p.ch.close()
				return err
			}
			joined++
			c.log.Debug("agent joined", "rank", r.p.Rank, "host", r.p.Host, "node", r.p.Node)
		}
	}
	for _, p := range c.peers {
		go c.read(p)
	}
	return c.SyncClocks(ctx)
}

// handshake authenticates one connection and learns who the agent is.
func (c *Coordinator) handshake(conn net.Conn) joinResult {
	ch := newChannel(conn)
	from := conn.RemoteAddr().String()
	fail := func(fatal bool, format string, args ...any) joinResult {
		conn.Close()
		return joinResult{err: fmt.Errorf(format, args...), fatal: fatal}
	}
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if err := ch.send(&message{Type: msgChallenge, Proto: ProtocolVersion, Nonce: c.run}); err != nil {
		return fail(false, "%s: %v", from, err)
	}
	m, err := ch.recv()
	if err != nil {
		return fail(false, "%s: %v", from, err)
	}
	if m.Type != msgHello {
		return fail(false, "%s opened with %s, not hello", from, badinput.Quote(m.Type))
	}
	who := fmt.Sprintf("agent rank %d on host %s (from %s)", m.Rank, m.Host, from)
	if m.Proto != ProtocolVersion {
		ch.send(&message{Type: msgRefuse, Reason: fmt.Sprintf("protocol %d, the coordinator speaks %d", m.Proto, ProtocolVersion)})
		return fail(true, "engine: %s speaks protocol %d, the coordinator %d: run one commcal version everywhere", who, m.Proto, ProtocolVersion)
	}
	if !c.cfg.Token.verify(m.MAC, "agent", c.run, m.Nonce, strconv.Itoa(m.Rank), m.Host, m.Node) {
		ch.send(&message{Type: msgRefuse, Reason: "wrong token"})
		return fail(true, "engine: %s presented a wrong token: every agent of a run needs the token of its coordinator", who)
	}
	if m.Size != c.cfg.Size {
		reason := fmt.Sprintf("it was started as one of %d agents (its --size or its launcher's), the coordinator's launch has %d", m.Size, c.cfg.Size)
		ch.send(&message{Type: msgRefuse, Reason: reason})
		return fail(true, "engine: %s: %s", who, reason)
	}
	p := &peer{AgentInfo: AgentInfo{Rank: m.Rank, Host: m.Host, Info: m.Info}, ch: ch}
	node, err := c.nodeOf(m)
	if err != nil {
		ch.send(&message{Type: msgRefuse, Reason: err.Error()})
		return fail(true, "engine: %s: %v", who, err)
	}
	p.Node = node
	welcome := &message{Type: msgWelcome, MAC: c.cfg.Token.mac("coordinator", c.run, m.Nonce), Node: node, Socket: &c.cfg.Socket, DataHost: c.addrOf(node)}
	if err := ch.send(welcome); err != nil {
		return fail(false, "%s: %v", who, err)
	}
	ch.limit = MaxRunLine(c.cfg.Size)
	r, err := ch.recv()
	switch {
	case err != nil:
		return fail(true, "engine: %s: lost after the welcome: %v", who, err)
	case r.Type == msgError:
		return fail(true, "engine: %s: %s", who, badinput.Cut(r.Reason))
	case r.Type != msgReady || r.DataAddr == "":
		return fail(true, "engine: %s: sent %s instead of its data port", who, badinput.Quote(r.Type))
	}
	if p.DataAddr, err = c.dataAddr(node, m.Addrs, r.DataAddr); err != nil {
		return fail(true, "engine: %s: %v", who, err)
	}
	conn.SetDeadline(time.Time{})
	return joinResult{p: p}
}

// dataAddr is where a node's data connections go, given its agent's addresses and the data
// address of its ready (PORT, or IP:PORT when the listener is bound to one address): the
// bound address, else the node's address from the description or Addrs, else the agent's
// first address. A bound address that is not the description's is refused: the data the
// description routes to the node would not reach its listener.
func (c *Coordinator) dataAddr(node string, addrs []string, ready string) (string, error) {
	bound, port, err := splitDataAddr(ready)
	if err != nil {
		return "", fmt.Errorf("data address %s %v", badinput.Quote(ready), err)
	}
	ip := c.addrOf(node)
	switch {
	case bound != "" && ip != "" && !sameIP(bound, ip):
		return "", fmt.Errorf("its data listener is bound to %s (--data-listen), which is not %s, the address node %s's data is sent to: bind it there, or give the node that addr", bound, ip, node)
	case bound != "":
		ip = bound
	case ip == "" && len(addrs) > 0:
		ip = addrs[0]
	case ip == "":
		return "", errors.New("reported no address for data connections")
	}
	return net.JoinHostPort(ip, strconv.Itoa(port)), nil
}

// nodeOf maps an agent to its node: the node it names, else the node whose address it has,
// else the node named like its host (or the host's first label).
func (c *Coordinator) nodeOf(m *message) (string, error) {
	cl := c.cfg.Cluster
	if m.Node != "" {
		if _, ok := cl.Node(m.Node); !ok {
			return "", fmt.Errorf("node %s is not in the cluster description", badinput.Quote(m.Node))
		}
		return m.Node, nil
	}
	for _, a := range m.Addrs {
		if n, ok := cl.NodeByAddr(a); ok {
			return n, nil
		}
		for n, na := range c.cfg.Addrs {
			if na == a {
				return n, nil
			}
		}
	}
	short, _, _ := strings.Cut(m.Host, ".")
	for _, h := range []string{m.Host, short} {
		if _, ok := cl.Node(h); ok {
			return h, nil
		}
	}
	shown := m.Addrs[:min(len(m.Addrs), 4)]
	more := ""
	if len(m.Addrs) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(m.Addrs)-len(shown))
	}
	return "", fmt.Errorf("no node of the cluster description is named %s or has one of its addresses (%s%s); give the agent --node or the node an addr",
		badinput.Quote(m.Host), strings.Join(shown, ", "), more)
}

// addrOf is a node's address from the description or Addrs; empty when neither gives one.
func (c *Coordinator) addrOf(node string) string {
	if n, ok := c.cfg.Cluster.Node(node); ok && n.Addr != "" {
		return n.Addr
	}
	return c.cfg.Addrs[node]
}

// admit files a joined agent under its rank and node, refusing duplicates.
func (c *Coordinator) admit(p *peer) error {
	if p.Rank < 0 || p.Rank >= c.cfg.Size {
		return fmt.Errorf("engine: agent on host %s has rank %d, outside 0…%d", p.Host, p.Rank, c.cfg.Size-1)
	}
	if q := c.peers[p.Rank]; q != nil {
		return fmt.Errorf("engine: two agents have rank %d: on host %s and on host %s (a launcher started the same rank twice?)", p.Rank, q.Host, p.Host)
	}
	if q := c.byNode[p.Node]; q != nil {
		return fmt.Errorf("engine: node %s is claimed by two agents: rank %d on host %s and rank %d on host %s (a host listed twice?)",
			p.Node, q.Rank, q.Host, p.Rank, p.Host)
	}
	c.peers[p.Rank] = p
	c.byNode[p.Node] = p
	return nil
}

// read forwards an agent's messages to the event channel until its channel ends.
func (c *Coordinator) read(p *peer) {
	for {
		m, err := p.ch.recv()
		select {
		case c.events <- event{p: p, m: m, err: err}:
		case <-c.quit:
			return
		}
		if err != nil {
			return
		}
	}
}

// SyncClocks estimates every agent's clock offset from 16 ping exchanges each, keeping the one
// with the smallest round trip (clockSample).
func (c *Coordinator) SyncClocks(ctx context.Context) error {
	const pings = 16
	for _, p := range c.peers {
		samples := make([]clockSample, 0, pings)
		for s := 1; s <= pings; s++ {
			sent := now()
			if err := p.ch.send(&message{Type: msgPing, Seq: s}); err != nil {
				return fmt.Errorf("engine: %s: %w", p, err)
			}
			got, err := c.await(ctx, []*peer{p}, 0, msgPong, func(m *message) bool { return m.Seq == s }, 10*time.Second)
			if err != nil {
				return err
			}
			samples = append(samples, clockSample{sent: sent, agent: got[p].Time, received: now()})
		}
		off, bound := offsetOf(samples)
		p.Offset, p.SyncError = time.Duration(off), time.Duration(bound)
	}
	c.synced = time.Now()
	return nil
}

// await collects one message of type typ (and program prog) from each of ps. An error
// message, a lost agent, the timeout or ctx ends the wait with an error naming the node; since
// one failure makes others (a killed agent's peers see their connections reset), the errors
// of a short grace period are gathered and a lost agent is named first.
func (c *Coordinator) await(ctx context.Context, ps []*peer, prog int64, typ string, match func(*message) bool, timeout time.Duration) (map[*peer]*message, error) {
	want := map[*peer]bool{}
	for _, p := range ps {
		want[p] = true
	}
	got := map[*peer]*message{}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var failures []event
	var grace <-chan time.Time
	for len(got) < len(want) || len(failures) > 0 {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timer.C:
			if len(failures) > 0 {
				return nil, c.failure(failures)
			}
			var late []string
			for _, p := range ps {
				if got[p] == nil {
					late = append(late, p.String())
				}
			}
			return nil, fmt.Errorf("engine: no %s within %v from %s", typ, timeout, strings.Join(late, ", "))
		case <-grace:
			return nil, c.failure(failures)
		case ev := <-c.events:
			switch {
			case ev.err != nil || ev.m.Type == msgError && (ev.m.Prog == prog || ev.m.Prog == 0):
				failures = append(failures, ev)
				if grace == nil {
					grace = time.After(300 * time.Millisecond)
				}
			case want[ev.p] && ev.m.Type == typ && ev.m.Prog == prog && (match == nil || match(ev.m)):
				got[ev.p] = ev.m
			default:
				c.log.Debug("stale control message", "node", ev.p.Node, "type", ev.m.Type, "prog", ev.m.Prog)
			}
		}
	}
	return got, nil
}

// failure turns the failures of a grace period into one error, a lost agent first.
func (c *Coordinator) failure(evs []event) error {
	slices.SortStableFunc(evs, func(a, b event) int {
		return cmp.Compare(boolInt(a.err == nil), boolInt(b.err == nil))
	})
	ev := evs[0]
	var pe *protocolError
	switch {
	case errors.As(ev.err, &pe):
		return fmt.Errorf("engine: %s broke the control protocol: %v", ev.p, ev.err)
	case ev.err != nil:
		return fmt.Errorf("engine: lost %s: %v (the agent died or its host is unreachable)", ev.p, ev.err)
	}
	return fmt.Errorf("engine: %s failed: %s", ev.p, badinput.Cut(ev.m.Reason))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// startLead is how far ahead of now a program's common start is scheduled: enough for the
// start message to reach every agent on a loaded machine.
const startLead = 30 * time.Millisecond

// part is one agent's part of a program: the prepare message it is sent and the program's
// thread indices it runs, in the order sent.
type part struct {
	m       *message
	threads []int
}

// agentParts splits a program into each node's part; dataAddr gives the address of a node's
// data listener (false: the node has no agent).
func agentParts(prog *Program, id int64, dataAddr func(node string) (string, bool)) (map[string]*part, error) {
	parts := map[string]*part{}
	partOf := func(node string) (*part, error) {
		if _, ok := dataAddr(node); !ok {
			return nil, fmt.Errorf("engine: node %s has no agent", node)
		}
		if parts[node] == nil {
			parts[node] = &part{m: &message{Type: msgPrepare, Prog: id}}
		}
		return parts[node], nil
	}
	for i, cn := range prog.Conns {
		from, err := partOf(cn.From)
		if err != nil {
			return nil, err
		}
		to, err := partOf(cn.To)
		if err != nil {
			return nil, err
		}
		addr, _ := dataAddr(cn.To)
		from.m.Dial = append(from.m.Dial, dialSpec{Conn: i, Addr: addr})
		to.m.Accept = append(to.m.Accept, i)
	}
	for t, th := range prog.Threads {
		pt, err := partOf(th.Node)
		if err != nil {
			return nil, err
		}
		pt.m.Threads = append(pt.m.Threads, threadSpec{Ops: th.Ops})
		pt.threads = append(pt.threads, t)
	}
	return parts, nil
}

// Run runs a program once: every agent opens the program's connections, then all threads
// start at one instant, scheduled in each agent's own clock; it returns every operation's
// times on the coordinator's clock. Any agent's failure aborts the program everywhere.
func (c *Coordinator) Run(ctx context.Context, prog *Program) (*Timings, error) {
	if err := prog.check(); err != nil {
		return nil, err
	}
	c.prog++
	id := c.prog
	byNode, err := agentParts(prog, id, func(node string) (string, bool) {
		if p := c.byNode[node]; p != nil {
			return p.DataAddr, true
		}
		return "", false
	})
	if err != nil {
		return nil, err
	}
	parts := map[*peer]*part{}
	ps := make([]*peer, 0, len(byNode))
	for node, pt := range byNode {
		p := c.byNode[node]
		parts[p] = pt
		ps = append(ps, p)
	}
	slices.SortFunc(ps, func(a, b *peer) int { return cmp.Compare(a.Rank, b.Rank) })
	abort := func() {
		for _, p := range ps {
			p.ch.send(&message{Type: msgAbort, Prog: id})
		}
	}
	for _, p := range ps {
		if err := p.ch.send(parts[p].m); err != nil {
			abort()
			return nil, fmt.Errorf("engine: %s: %w", p, err)
		}
	}
	limit := c.cfg.Socket.Timeout + 5*time.Second
	if _, err := c.await(ctx, ps, id, msgReady, nil, limit); err != nil {
		abort()
		return nil, err
	}
	t0 := now() + int64(startLead)
	for _, p := range ps {
		if err := p.ch.send(&message{Type: msgStart, Prog: id, Time: t0 + int64(p.Offset)}); err != nil {
			abort()
			return nil, fmt.Errorf("engine: %s: %w", p, err)
		}
	}
	done, err := c.await(ctx, ps, id, msgDone, nil, limit)
	if err != nil {
		abort()
		return nil, err
	}
	res := &Timings{Ops: make([][]SecTiming, len(prog.Threads)), Start: t0}
	for _, p := range ps {
		m := done[p]
		if len(m.Timings) != len(parts[p].threads) {
			return nil, fmt.Errorf("engine: %s reported %d threads of %d", p, len(m.Timings), len(parts[p].threads))
		}
		for k, t := range parts[p].threads {
			if len(m.Timings[k]) != len(prog.Threads[t].Ops) {
				return nil, fmt.Errorf("engine: %s reported %d operations of %d", p, len(m.Timings[k]), len(prog.Threads[t].Ops))
			}
			sec := func(x int64) float64 { return float64(x-int64(p.Offset)-t0) / 1e9 }
			for _, o := range m.Timings[k] {
				res.Ops[t] = append(res.Ops[t], SecTiming{Start: sec(o.Start), End: sec(o.End), Busy: float64(o.Busy) / 1e9})
			}
			if len(res.Ops[t]) > 0 {
				res.Skew = max(res.Skew, res.Ops[t][0].Start)
			}
		}
	}
	return res, nil
}

// Shutdown ends the run: every agent is told (with the reason when the run failed) and the
// channels and the listener are closed.
func (c *Coordinator) Shutdown(reason string) {
	select {
	case <-c.quit:
		return
	default:
	}
	close(c.quit)
	reason = badinput.Cut(reason)
	for _, p := range c.peers {
		if p != nil {
			p.ch.send(&message{Type: msgShutdown, Reason: reason})
			p.ch.close()
		}
	}
	c.ln.Close()
}
