package datasets

import (
	"bytes"
	"encoding/json"
	"io"
	"math"

	"github.com/commcal/commcal/contention"
)

// iperf3Result is the part of `iperf3 --json` client output that commcal reads.
type iperf3Result struct {
	Start *struct {
		Connected []struct {
			LocalHost  string `json:"local_host"`
			RemoteHost string `json:"remote_host"`
		} `json:"connected"`
		TestStart struct {
			Protocol   string `json:"protocol"`
			NumStreams int    `json:"num_streams"`
			Reverse    int    `json:"reverse"`
		} `json:"test_start"`
	} `json:"start"`
	End *struct {
		SumSent     *iperf3Sum `json:"sum_sent"`
		SumReceived *iperf3Sum `json:"sum_received"`
	} `json:"end"`
	Error string `json:"error"`
}

type iperf3Sum struct {
	Seconds float64 `json:"seconds"`
	Bytes   int64   `json:"bytes"`
}

// iperf3 reads the JSON that one `iperf3 --json` client run prints, as one transfer.
//
// Which of iperf3's figures we take: bytes are the sender's (end.sum_sent.bytes, the amount
// requested with -n); the time is the receiver's (end.sum_received.seconds), because a
// transfer is complete when its last byte arrives, and the sender's clock stops when the last
// byte is handed to the kernel. (iperf3 3.12 may report fewer received bytes than sent when
// the server's final count races the end of the test; the sent count is the transfer's size.)
// Times are on the run's own clock: t_start_s is 0 and t_end_s the receiver's time, so the
// duration is iperf3's figure to the last bit (iperf3 timestamps runs only to the second, and
// adding a time to an epoch second in float64 would round it to about 0.2 µs).
//
// Nodes come from Src/Dst when given, else from the addresses in the cluster description
// (the client is the sender, the server with --reverse).
func (ing *ingester) iperf3(src Source, r io.Reader, idx int32) (*Table, int64, error) {
	loc := Location{File: src.Path, Row: 1}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, 0, inputErr(loc, "", ErrCorrupt, "%v", err)
	}
	var res iperf3Result
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&res); err != nil {
		return nil, 0, inputErr(loc, "", ErrCorrupt, "not iperf3 JSON: %v", err)
	}
	if res.Error != "" {
		return nil, 0, inputErr(loc, "", ErrToolFailure, "iperf3 reported: %s", res.Error)
	}
	switch {
	case res.Start == nil || res.End == nil:
		return nil, 0, inputErr(loc, "", ErrMissingColumn, "no start or end section; is this `iperf3 --json` client output?")
	case res.Start.TestStart.Protocol != "TCP":
		return nil, 0, inputErr(loc, "start.test_start.protocol", ErrUnsupported, "protocol %q, want TCP", res.Start.TestStart.Protocol)
	case res.Start.TestStart.NumStreams != 1:
		return nil, 0, inputErr(loc, "start.test_start.num_streams", ErrUnsupported, "%d parallel streams, want 1 (one run is one transfer)", res.Start.TestStart.NumStreams)
	case res.End.SumSent == nil:
		return nil, 0, inputErr(loc, "end.sum_sent", ErrMissingColumn, "no sender summary")
	case res.End.SumReceived == nil:
		return nil, 0, inputErr(loc, "end.sum_received", ErrMissingColumn, "no receiver summary")
	case len(res.Start.Connected) == 0:
		return nil, 0, inputErr(loc, "start.connected", ErrMissingColumn, "no connection")
	}
	srcNode, dstNode := src.Src, src.Dst
	conn := res.Start.Connected[0]
	sender, receiver := conn.LocalHost, conn.RemoteHost
	if res.Start.TestStart.Reverse != 0 {
		sender, receiver = receiver, sender
	}
	if srcNode == "" {
		n, ok := ing.opts.Cluster.NodeByAddr(sender)
		if !ok {
			return nil, 0, inputErr(loc, "src_node", ErrUnknownNode, "sender address %s is no node's addr in the cluster description (or give --src)", sender)
		}
		srcNode = n
	}
	if dstNode == "" {
		n, ok := ing.opts.Cluster.NodeByAddr(receiver)
		if !ok {
			return nil, 0, inputErr(loc, "dst_node", ErrUnknownNode, "receiver address %s is no node's addr in the cluster description (or give --dst)", receiver)
		}
		dstNode = n
	}
	b := res.End.SumSent.Bytes
	secs := res.End.SumReceived.Seconds
	if math.IsNaN(secs) {
		secs = 0
	}
	exp := src.Experiment
	if exp == "" {
		exp = "p2p_sweep"
	}
	pattern := src.PatternID
	if pattern == "" {
		pattern = contention.PairID(srcNode, dstNode, b)
	}
	t := TransfersTable
	rb := newRowBuilder(t, ing.opts.Mem)
	defer rb.release()
	const start = 0.0
	key := exp + "\x00" + pattern
	rb.appendString(0, ing.opts.Cluster.Name())
	rb.appendString(1, exp)
	rb.appendString(2, pattern)
	rb.appendInt(3, ing.reps[key])
	rb.appendInt(4, 0)
	rb.appendString(5, srcNode)
	rb.appendString(6, dstNode)
	rb.appendInt(7, b)
	rb.appendFloat(8, start)
	rb.appendFloat(9, start+secs)
	ing.reps[key]++
	if _, err := ing.emit(t, rb, batchLoc{file: src.Path, firstRow: 1}, idx); err != nil {
		return nil, 0, err
	}
	return t, 1, nil
}
