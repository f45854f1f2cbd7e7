// Package cluster describes the machine being calibrated: its racks, nodes, NICs, rack uplinks
// and backbone, and turns any transfer into the list of directed resources it crosses.
//
// A cluster is a tree. Nodes hang off a top-of-rack switch through a NIC; racks are joined
// either by one backbone cable (exactly two racks, as on the testbed of Zhu et al., CCPE 2014,
// §3.2) or by one uplink per rack to a core router (as on Grid5000's graphene). Every link is
// full duplex, so each direction of a NIC, uplink or backbone is a separate Resource with its
// own rate; Resource.Reverse gives the opposite direction, which the contention models use to
// find contra-flow transfers.
//
// The description is read from TOML or JSON (see Load); the shipped examples live in
// examples/clusters.
package cluster
