// Package schedule expresses MPI collectives as the rounds of their algorithms: an all-to-all,
// an allgather, a broadcast, a scatter, a gather or a reduce-scatter expanded into the
// point-to-point transfers that a named algorithm of Open MPI or MPICH posts, grouped into
// rounds that start together, and predicted round after round by any contention model.
//
// A round is the set of transfers that the algorithm's processes post together: the two
// halves of an MPI_Sendrecv, a batch of non-blocking sends and receives completed by one
// wait, or one blocking send. Round r + 1 starts when the slowest transfer of round r ends:
// the slowest as the model predicts it, or, given how a calibration's transfers scatter from
// one repetition to the next (Spread), the slowest in expectation, since a round waits for whichever of its
// transfers happens to be late. That chaining is exact for the algorithms in
// which every process takes part in every step (pairwise exchange, ring, recursive doubling,
// Bruck) and an upper bound for trees, in which a process forwards as soon as its own
// receive ends rather than when the whole level has. SMPI and LogGOPSim predict collectives
// step by step for the same reason: MPI libraries do not run an all-to-all as n(n − 1)
// transfers that start together.
//
// Which algorithm runs is either named by the user (New) or chosen by a library's default
// decision rules (Choose, Auto): Open MPI 4.1.8's tuned component
// (ompi/mca/coll/tuned/coll_tuned_decision_fixed.c, unchanged in 5.0.9) and MPICH 4.3.2's
// default selection (maint/tuning/coll/mpir/generic.json, with the CVARs of
// src/mpi/coll/cvars.txt). Every schedule says which algorithm it expands and the rule that
// picked it.
//
// One file per concept: schedule.go (collectives, schedules, the catalogue of algorithms),
// builder.go (rounds as the algorithms place transfers), alltoall.go, allgather.go,
// bcast.go, tree.go (the broadcast, scatter and gather trees), rooted.go (scatter and gather),
// reducescatter.go, choose.go (the libraries' rules), choice.go (a choice of algorithm: a
// name or auto:LIBRARY), predict.go, spread.go (a round's expected slowest transfer) and
// spec.go (the spec strings of predict --collective).
package schedule
