// Package engine is commcal's one benchmark engine: agents, one per node, run the
// transfers of a program on command, and a coordinator (rank 0 on a real cluster, commcal
// measure on an emulated one) drives them through every experiment of the catalogue with the
// papers' discipline — connections opened first, one common start scheduled in each agent's
// own clock after estimating its offset, last-byte timestamps, repetitions until the 95%
// interval is within 2% of the mean or a cap — and writes an ordinary dataset.
//
// The control channel is JSON lines over TCP, versioned, and authenticated both ways by an
// HMAC challenge over a per-run token; data connections carry a tag derived from the same
// token, so only agents of the run exchange data. Nothing is encrypted.
package engine
