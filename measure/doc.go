// Package measure is the emulated deployment of the benchmark engine: it builds
// a cluster out of Linux network namespaces (one per node, one per rack switch with a
// bridge, one for a core router), veth links shaped in both directions by token-bucket
// filters (with the netlink libraries, no ip or tc processes), optionally one more bucket
// per node that what it sends and what it receives share (a host bound), starts one
// `commcal agent` per node inside the node's namespace, and runs the engine's coordinator
// on them — the same code rank 0 runs on a real cluster — to write an ordinary dataset. It
// needs root.
package measure
