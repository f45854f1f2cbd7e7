package experiments

import (
	"fmt"
	"slices"
	"strings"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/schedule"
)

// ScheduleDesign sets up collectives measured as the rounds of a named algorithm: for every
// communicator size in Procs and message size in Sizes, the collective Op expanded by
// Algorithm (package schedule), its ranks one per node on the cluster's first Procs nodes in
// the description's order (rank 0, the root, on the first), each rank posting a round's sends
// and receives once its own previous round's have ended, as an MPI process does. The rows go
// to the schedules table, which validation scores against the same algorithm's prediction.
type ScheduleDesign struct {
	// Op is a scored collective: alltoall, allgather or bcast.
	Op string
	// Algorithm names one of Op's algorithms (schedule.Algorithms), or "auto:openmpi" or
	// "auto:mpich" for what that library's default rules pick at each size.
	Algorithm string
	Procs     []int
	Sizes     []int64
}

// ScheduleOps are the collectives a ScheduleDesign measures: those validation scores
// (validate.ScoredCollectives).
var ScheduleOps = []string{"alltoall", "allgather", "bcast"}

// Ceilings of the schedule designs.
const (
	// MaxScheduleProcs bounds a schedule design's communicator sizes: a pairwise all-to-all of n
	// ranks opens n(n − 1)/2 connections and posts n − 1 rounds a rank, whose timings each
	// rank reports in one control line; 256 ranks are 32,640 connections.
	MaxScheduleProcs = 256
	// MaxScheduleCommSizes bounds how many communicator sizes a schedule design lists: each
	// once, from 2 to MaxScheduleProcs ranks, a list holds at most 255 anyway; the bound
	// refuses a longer one at once.
	MaxScheduleCommSizes = 256
	// MaxScheduleDesigns bounds how many schedule designs a catalogue lists: one per choice of
	// algorithm of every scored collective are 27 (21 algorithms, and two libraries' rules for
	// each of three collectives), and this leaves room for designs that split a choice's sizes.
	MaxScheduleDesigns = 256
)

// check refuses a design no campaign can run, naming its key (schedules[i].…).
func (d ScheduleDesign) check(i int) error {
	key := func(k string) string { return fmt.Sprintf("schedules[%d].%s", i, k) }
	if !slices.Contains(ScheduleOps, d.Op) {
		return bad(key("op"), strings.Join(ScheduleOps, ", "), fmt.Sprintf("%q", d.Op))
	}
	if schedule.CheckChoice(schedule.Op(d.Op), d.Algorithm) != nil {
		return bad(key("algorithm"), strings.Join(schedule.AutoChoices(), ", ")+" or one of "+d.Op+"'s algorithms ("+
			strings.Join(schedule.Algorithms(schedule.Op(d.Op)), ", ")+")", fmt.Sprintf("%q", d.Algorithm))
	}
	if len(d.Procs) == 0 || len(d.Procs) > MaxScheduleCommSizes {
		return bad(key("procs"), fmt.Sprintf("1 to %d communicator sizes", MaxScheduleCommSizes), len(d.Procs))
	}
	for j, p := range d.Procs {
		if p < 2 || p > MaxScheduleProcs {
			return bad(key("procs"), fmt.Sprintf("communicator sizes of 2 to %d ranks", MaxScheduleProcs), p)
		}
		if slices.Contains(d.Procs[:j], p) {
			return bad(key("procs"), "each size once", fmt.Sprintf("%d twice", p))
		}
	}
	if len(d.Sizes) == 0 {
		return bad(key("sizes"), "at least one message size", "none")
	}
	return checkSizes(key("sizes"), d.Sizes, MaxMessageBytes, true)
}

// Expand is the schedule of the collective among procs ranks at size bytes on cl: the named
// algorithm's rounds, or those the library's rules pick (schedule.ExpandChoice); an error when
// cl has fewer than procs nodes. Its ranks run one per node from the description's first
// node, the root (cl.PlaceRanks): the schedules row records that node as its root, and
// validation places the row's ranks from it the same way, so that it predicts the ranks that
// ran.
func (d ScheduleDesign) Expand(cl *cluster.Cluster, procs int, bytes int64) (*schedule.Schedule, error) {
	nodes := cl.NodeNames()
	if procs > len(nodes) { // CheckCluster refuses it first, naming the design
		return nil, fmt.Errorf("%s among %d ranks: cluster %s has %d nodes (one rank per node)", d.Op, procs, cl.Name(), len(nodes))
	}
	c := schedule.Collective{Op: schedule.Op(d.Op), Ranks: cl.PlaceRanks(nodes[0], procs), Bytes: float64(bytes)}
	return schedule.ExpandChoice(c, d.Algorithm)
}
