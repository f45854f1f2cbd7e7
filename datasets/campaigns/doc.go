// Package campaigns reads an index of measured campaigns (campaigns.toml): one entry per
// dataset naming where it lies, the cluster and catalogue it was measured with, its seed, its
// role (developed on or held out) and what it was used for, so that the leaderboard and the
// tests find a committed dataset by its name rather than by where it lies in the tree.
//
// The package imports no other of commcal's but its TOML decoder, so that the tests of every
// package, those datasets imports included, can use it.
package campaigns
