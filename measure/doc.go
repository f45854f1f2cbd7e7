// Package measure measures real TCP transfers on an emulated cluster (design §8): it builds
// the cluster out of Linux network namespaces (one per node, one per rack switch with a
// bridge, one for a core router), veth links shaped in both directions by token-bucket
// filters (with the netlink libraries, no ip or tc processes), runs the experiment catalogue
// with the benchmark's discipline (connections opened first, a common start, the last byte
// timestamped by the receiver, repetitions until the 95% CI is within 2% of the mean or a
// cap), and writes an ordinary dataset. It needs root.
package measure
