package datasets

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/experiments"
)

// iperf3Result is the part of the JSON that `iperf3 --json` prints (client or server side)
// that commcal reads.
type iperf3Result struct {
	Start *struct {
		Connected []struct {
			LocalHost  string `json:"local_host"`
			RemoteHost string `json:"remote_host"`
		} `json:"connected"`
		// Exactly one of these says which side wrote the file: the client prints where it
		// connected to, the server whom it accepted.
		ConnectingTo       *struct{} `json:"connecting_to"`
		AcceptedConnection *struct{} `json:"accepted_connection"`
		TestStart          struct {
			Protocol   string `json:"protocol"`
			NumStreams int    `json:"num_streams"`
			Reverse    int    `json:"reverse"`
			Bidir      int    `json:"bidir"` // iperf3 ≥ 3.13; older versions are told by the _bidir_reverse sums
			Bytes      int64  `json:"bytes"`
			Blocks     int64  `json:"blocks"`
			Blksize    int64  `json:"blksize"`
		} `json:"test_start"`
	} `json:"start"`
	End *struct {
		SumSent                 *iperf3Sum `json:"sum_sent"`
		SumReceived             *iperf3Sum `json:"sum_received"`
		SumSentBidirReverse     *iperf3Sum `json:"sum_sent_bidir_reverse"`
		SumReceivedBidirReverse *iperf3Sum `json:"sum_received_bidir_reverse"`
	} `json:"end"`
	Error string `json:"error"`
}

type iperf3Sum struct {
	Seconds float64 `json:"seconds"`
	Bytes   int64   `json:"bytes"`
	// Sender says whether the side that wrote the file sent this direction (iperf3 ≥ 3.8).
	Sender *bool `json:"sender"`
}

// iperf3Transfer is one direction of one iperf3 run.
type iperf3Transfer struct {
	src, dst string
	bytes    int64
	seconds  float64
}

// iperf3 reads the JSON that `iperf3 --json` prints, on the client or on the server, as
// transfers: one per run, two for a --bidir run (the forward and the reverse direction, flows
// 0 and 1 of one pattern). A file may hold several runs appended one after the other
// (`iperf3 --json >> file`); each is read, and repetitions of a pattern are numbered in file
// order.
//
// Which direction: iperf3 summarises the streams in end.sum_sent / end.sum_received, which go
// from the client to the server, or from the server to the client when the test is reversed
// (start.test_start.reverse, -R); a --bidir run adds end.sum_sent_bidir_reverse /
// end.sum_received_bidir_reverse, always from the server to the client. That holds whichever
// side wrote the file; the side is told by start.connecting_to (client) or
// start.accepted_connection (server), and gives which end of start.connected[0] is the client.
// Each sum's "sender" field, when present, must agree.
//
// Which figures: the size is the sender's count (end.sum_sent.bytes; iperf3 sends whole blocks,
// so it may exceed -n); a server that received has no sender count and uses what it received,
// which must be at least the size requested with -n or -k. The time is the receiver's
// (end.sum_received.seconds), because a transfer is complete when its last byte arrives, and
// the sender's clock stops when the last byte is handed to the kernel. Times are on the run's own
// clock: t_start_s is 0 and t_end_s the receiver's time, so the duration is iperf3's figure to
// the last bit (iperf3 timestamps runs only to the second, and adding a time to an epoch second
// in float64 would round it to about 0.2 µs).
//
// A run whose receiver counted fewer bytes than the sender sent is an error (kind
// truncated-transfer), not a row: iperf3 3.12 ends a -n test when the sender has written its
// bytes, and the receiver may stop reading before they all arrive (0 bytes in 2 of 16 real
// runs; on loopback, one forward run in three and nearly every --bidir run). Such a transfer did
// not complete, so it has no completion time, and its receiver's clock would make the network
// look faster than it is. Dropping the row with a warning would hide that a measurement
// campaign lost a third of its runs; the error names the file, the run and both counts, and the
// campaign re-runs what failed. For the same reason a server's output of what the server sent
// (it has no receiver count) is refused; the client's output of the same run has it. A
// time-limited run (-t) has no transfer size and is refused.
//
// Nodes come from Src/Dst when given (Src sends the forward transfer; the reverse transfer of a
// --bidir run goes from Dst to Src), else from the addresses in the cluster description.
// Experiment defaults to p2p_sweep for one transfer, and for a --bidir run to bidir_nic
// (bidir_backbone between racks).
func (ing *ingester) iperf3(src Source, r io.Reader, idx int32) (*Table, int64, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, 0, inputErr(Location{File: src.Path}, "", ErrCorrupt, "%v", err)
	}
	t := TransfersTable
	rb := newRowBuilder(t, ing.opts.Mem)
	defer rb.release()
	var lines []int64
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		line := lineAt(data, skipSpace(data, dec.InputOffset()))
		var res iperf3Result
		err := dec.Decode(&res)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, 0, jsonErr(src.Path, data, err, "not iperf3 JSON")
		}
		loc := Location{File: src.Path, Line: line, Row: int64(len(lines)) + 1}
		transfers, err := ing.iperf3Run(src, &res, loc)
		if err != nil {
			return nil, 0, err
		}
		ing.appendIperf3(rb, src, transfers)
		for range transfers {
			lines = append(lines, line)
		}
	}
	if len(lines) == 0 {
		return nil, 0, inputErr(Location{File: src.Path}, "", ErrEmptyFile, "no JSON document")
	}
	if _, err := ing.emit(t, rb, batchLoc{file: src.Path, firstRow: 1, lines: lines}, idx); err != nil {
		return nil, 0, err
	}
	return t, int64(len(lines)), nil
}

// iperf3Run reads the transfers of one run; loc locates the run's document.
func (ing *ingester) iperf3Run(src Source, res *iperf3Result, loc Location) ([]iperf3Transfer, error) {
	if res.Error != "" {
		return nil, inputErr(loc, "", ErrToolFailure, "iperf3 reported: %s: this run measured nothing; re-run it", bounded(res.Error))
	}
	if res.Start == nil || res.End == nil {
		return nil, inputErr(loc, "", ErrMissingColumn, "no start or end section; is this `iperf3 --json` output?")
	}
	st, end := &res.Start.TestStart, res.End
	bidir := st.Bidir != 0 || end.SumSentBidirReverse != nil || end.SumReceivedBidirReverse != nil
	var client bool
	switch {
	case st.Protocol != "TCP":
		return nil, inputErr(loc, "start.test_start.protocol", ErrUnsupported,
			"an iperf3 %s test (-u): it sends at a set rate (-b) and reports loss and jitter, not the time a transfer of known size takes; measure TCP transfers with -n SIZE", bounded(st.Protocol))
	case st.NumStreams != 1:
		return nil, inputErr(loc, "start.test_start.num_streams", ErrUnsupported,
			"an iperf3 run of %d parallel streams (-P): their sum is not one transfer's time; measure one stream per run (-P 1), or give the streams as concurrent transfers in a CSV", st.NumStreams)
	case st.Bytes <= 0 && st.Blocks <= 0:
		return nil, inputErr(loc, "start.test_start.bytes", ErrUnsupported, "a time-limited run (-t) has no transfer size; measure with -n or -k")
	case bidir && st.Reverse != 0:
		return nil, inputErr(loc, "start.test_start.reverse", ErrCorrupt, "a run cannot be both reversed and bidirectional")
	case len(res.Start.Connected) == 0:
		return nil, inputErr(loc, "start.connected", ErrMissingColumn, "no connection")
	case (res.Start.ConnectingTo != nil) == (res.Start.AcceptedConnection != nil):
		return nil, inputErr(loc, "start.connecting_to", ErrMissingColumn,
			"cannot tell whether the client or the server wrote this output (want exactly one of start.connecting_to and start.accepted_connection)")
	default:
		client = res.Start.ConnectingTo != nil
	}
	conn := res.Start.Connected[0]
	clientAddr, serverAddr := conn.LocalHost, conn.RemoteHost
	if !client {
		clientAddr, serverAddr = serverAddr, clientAddr
	}
	requested := st.Bytes
	if requested <= 0 {
		requested = st.Blocks * st.Blksize
	}
	// The forward direction: client to server, or server to client when reversed.
	fwd := iperf3Direction{name: "sum", sent: end.SumSent, received: end.SumReceived, fromClient: st.Reverse == 0}
	sender, receiver := clientAddr, serverAddr
	if !fwd.fromClient {
		sender, receiver = receiver, sender
	}
	srcNode, err := ing.iperf3Node(loc, "src_node", src.Src, sender, "sender")
	if err != nil {
		return nil, err
	}
	dstNode, err := ing.iperf3Node(loc, "dst_node", src.Dst, receiver, "receiver")
	if err != nil {
		return nil, err
	}
	out := make([]iperf3Transfer, 0, 2)
	tr, err := fwd.transfer(loc, client, requested)
	if err != nil {
		return nil, err
	}
	tr.src, tr.dst = srcNode, dstNode
	out = append(out, tr)
	if bidir {
		rev := iperf3Direction{name: "sum_bidir_reverse", sent: end.SumSentBidirReverse, received: end.SumReceivedBidirReverse, fromClient: false}
		tr, err := rev.transfer(loc, client, requested)
		if err != nil {
			return nil, err
		}
		tr.src, tr.dst = dstNode, srcNode
		out = append(out, tr)
	}
	return out, nil
}

// iperf3Direction is one direction's pair of summaries.
type iperf3Direction struct {
	name           string // "sum" or "sum_bidir_reverse", for messages
	sent, received *iperf3Sum
	fromClient     bool // the client sends this direction
}

func (d iperf3Direction) key(which string) string {
	if d.name == "sum" {
		return "end.sum_" + which
	}
	return "end.sum_" + which + "_bidir_reverse"
}

// transfer reads the size and the time of one direction; client says which side wrote the file.
func (d iperf3Direction) transfer(loc Location, client bool, requested int64) (iperf3Transfer, error) {
	switch {
	case d.sent == nil:
		return iperf3Transfer{}, inputErr(loc, d.key("sent"), ErrMissingColumn, "no sender summary")
	case d.received == nil:
		return iperf3Transfer{}, inputErr(loc, d.key("received"), ErrMissingColumn, "no receiver summary")
	}
	localSends := d.fromClient == client
	if s := d.sent.Sender; s != nil && *s != localSends {
		return iperf3Transfer{}, inputErr(loc, d.key("sent")+".sender", ErrCorrupt,
			"sender is %t, but the %s of a %s run does not send this direction", *s, side(client), map[bool]string{true: "client-to-server", false: "server-to-client"}[d.fromClient])
	}
	if d.sent.Bytes < 0 || d.received.Bytes < 0 {
		return iperf3Transfer{}, inputErr(loc, d.key("sent")+".bytes", ErrNegative, "negative byte count (%d sent, %d received)", d.sent.Bytes, d.received.Bytes)
	}
	size, recv := d.sent.Bytes, d.received.Bytes
	if size == 0 && !localSends {
		// A receiving server does not know what the client sent: the size is what arrived,
		// and at least what was asked for.
		size = max(requested, recv)
	}
	if recv < size {
		why := ""
		if localSends && !client {
			why = " (the server's output has no receiver count for what the server sent; ingest the client's output)"
		}
		return iperf3Transfer{}, inputErr(loc, d.key("received")+".bytes", ErrTruncatedTransfer,
			"the receiver counted %d of the %d bytes sent: the transfer did not complete, so it has no completion time%s", recv, size, why)
	}
	if recv > size {
		return iperf3Transfer{}, inputErr(loc, d.key("received")+".bytes", ErrCorrupt, "the receiver counted %d bytes, more than the %d sent", recv, size)
	}
	secs := d.received.Seconds
	if math.IsNaN(secs) {
		secs = 0
	}
	return iperf3Transfer{bytes: size, seconds: secs}, nil
}

func side(client bool) string {
	if client {
		return "client"
	}
	return "server"
}

// iperf3Node names the node of one end of a run: the override when given, else the node
// whose address the cluster description lists.
func (ing *ingester) iperf3Node(loc Location, column, override, addr, role string) (string, error) {
	if override != "" {
		return override, nil
	}
	n, ok := ing.opts.Cluster.NodeByAddr(addr)
	if !ok {
		flag := map[string]string{"sender": "--src", "receiver": "--dst"}[role]
		return "", inputErr(loc, column, ErrUnknownNode, "%s address %s is no node's addr in the cluster description (or give %s)", role, bounded(addr), flag)
	}
	return n, nil
}

// appendIperf3 appends one run's transfers as one pattern's repetition.
func (ing *ingester) appendIperf3(rb *rowBuilder, src Source, trs []iperf3Transfer) {
	exp, pattern := src.Experiment, src.PatternID
	if exp == "" {
		exp = "p2p_sweep"
		if len(trs) == 2 {
			exp = "bidir_nic"
			if c, err := ing.opts.Cluster.Class(trs[0].src, trs[0].dst); err == nil && c == cluster.InterRack {
				exp = "bidir_backbone"
			}
		}
	}
	if pattern == "" {
		pattern = experiments.PairID(trs[0].src, trs[0].dst, trs[0].bytes)
		if len(trs) == 2 {
			pattern = fmt.Sprintf("%s<>%s:%d", trs[0].src, trs[0].dst, trs[0].bytes)
		}
	}
	key := exp + "\x00" + pattern
	const start = 0.0
	for i, tr := range trs {
		rb.appendString(0, ing.opts.Cluster.Name())
		rb.appendString(1, exp)
		rb.appendString(2, pattern)
		rb.appendInt(3, ing.reps[key])
		rb.appendInt(4, int64(i))
		rb.appendString(5, tr.src)
		rb.appendString(6, tr.dst)
		rb.appendInt(7, tr.bytes)
		rb.appendFloat(8, start)
		rb.appendFloat(9, start+tr.seconds)
	}
	ing.reps[key]++
}
