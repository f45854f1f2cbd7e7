package cluster

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/commcal/commcal/internal/badinput"
)

// Rates of a description written from a scheduler's topology, which knows the wiring but
// not the link rates.
type Rates struct {
	NICBps    float64 // every node's NIC
	UplinkBps float64 // every leaf switch's uplink to the core (several racks only)
	Kind      string  // backbone kind: electrical or optical
}

// Limits of a Slurm topology.
//
//   - maxSlurmLineBytes, 1 MiB per line (continuations joined): a leaf switch's Nodes= listing
//     65,536 names of 15 bytes one by one.
//   - maxSwitches, 16,384 switch lines: four for each rack commcal models, and a bound on the
//     child switches the lines may list.
const (
	maxSlurmLineBytes = 1 << 20
	maxSwitches       = 1 << 14
)

// slurmKeys are the keys of a tree topology line by their lower-case form (Slurm reads keys
// case-insensitively): topology.conf's SwitchName, Switches, Nodes and LinkSpeed, and the
// Level that scontrol show topology adds.
var slurmKeys = map[string]string{
	"switchname": "SwitchName", "switches": "Switches", "nodes": "Nodes", "linkspeed": "LinkSpeed", "level": "Level",
}

// slurmSwitch is one switch line of a tree topology.
type slurmSwitch struct {
	line     int
	name     string
	nodes    []string // a leaf's nodes
	children []string // an upper switch's child switches
}

// FromSlurmTopology writes a description from Slurm's tree topology: the lines of
// topology.conf or of `scontrol show topology`, "SwitchName=s0 Nodes=n[0-15]" for a leaf
// switch and "SwitchName=top Switches=s[0-3]" for a switch above others (LinkSpeed= and
// scontrol's Level= are checked and ignored: LinkSpeed is a relative weight, not a rate).
// Every leaf switch with nodes becomes a rack; with several racks, each gets an uplink to one
// core router (TopologyCore): a deeper tree is flattened to that, and the second result says
// so. Node lists are Slurm host lists (n[0-3,7], rack1-n[01-16]).
//
// What Slurm refuses is refused with the line number: an unknown key, a key given twice, a
// switch defined twice, a child switch that no line defines, Nodes and Switches on one line
// of topology.conf (scontrol prints both for an upper switch, the nodes beneath it, and marks
// its lines with Level=). Comments start at '#'; a line ending in '\' continues on the next.
// Errors are bad input (internal/badinput); the caller names the file.
func FromSlurmTopology(r io.Reader, name string, rates Rates) (Description, []string, error) {
	d := Description{Name: name, NICRateBps: rates.NICBps}
	switches, err := readSlurmSwitches(r)
	if err != nil {
		return d, nil, err
	}
	var notes []string
	upper := 0
	for _, s := range switches {
		switch {
		case s.children != nil:
			upper++
		case len(s.nodes) == 0:
			notes = append(notes, fmt.Sprintf("switch %s (line %d) has no nodes: left out", s.name, s.line))
		default:
			d.Racks = append(d.Racks, Rack{Name: s.name, Nodes: s.nodes})
		}
	}
	if len(d.Racks) == 0 {
		return d, nil, badinput.Errorf("", "no switch with Nodes= (is the tree topology plugin configured?)")
	}
	if len(d.Racks) > 1 {
		d.Backbone = &Backbone{Topology: TopologyCore, Kind: rates.Kind, RateBps: rates.UplinkBps}
		if upper > 1 {
			notes = append(notes, fmt.Sprintf("the topology has %d switches above the leaves; commcal models one core router above %d racks", upper, len(d.Racks)))
		}
	}
	return d, notes, nil
}

// readSlurmSwitches reads every switch line, checking that no switch is defined twice, no
// node hangs from two leaves and every child switch is defined. Leaf nodes and child switches
// are counted as they are expanded, so that no file lays out more than the limits allow.
func readSlurmSwitches(r io.Reader) ([]slurmSwitch, error) {
	lr := newLineReader(r, maxSlurmLineBytes)
	var switches []slurmSwitch
	defined, leafOf := map[string]int{}, map[string]int{} // switch → its line; node → its leaf's line
	children := 0
	for {
		text, line, ok, err := nextSlurmLine(lr)
		if err != nil || !ok {
			if err == nil {
				err = checkChildren(lr, switches, defined)
			}
			return switches, err
		}
		if strings.TrimSpace(text) == "" {
			continue
		}
		s, nodes, err := parseSlurmLine(text)
		if err != nil {
			return nil, lr.errorf(line, "%v", err)
		}
		s.line = line
		if prev, twice := defined[s.name]; twice {
			return nil, lr.errorf(line, "switch %s is already defined on line %d", badinput.Quote(s.name), prev)
		}
		if len(defined) == maxSwitches {
			return nil, lr.errorf(line, "more than %d switches", maxSwitches)
		}
		defined[s.name] = line
		if children += len(s.children); children > maxSwitches {
			return nil, lr.errorf(line, "more than %d child switches listed in all", maxSwitches)
		}
		if nodes != "" {
			if s.nodes, err = leafNodes(nodes, line, leafOf); err != nil {
				return nil, lr.errorf(line, "%v", err)
			}
		}
		switches = append(switches, s)
	}
}

// leafNodes expands a leaf's Nodes= list and records its nodes, refusing a bad name, a node
// already under another leaf, and more than maxNodes leaf nodes in all.
func leafNodes(list string, line int, leafOf map[string]int) ([]string, error) {
	nodes, err := ExpandHostList(list)
	if err != nil {
		return nil, fmt.Errorf("Nodes: %w", err)
	}
	if len(leafOf)+len(nodes) > maxNodes {
		return nil, fmt.Errorf("more than %d nodes under the leaf switches", maxNodes)
	}
	for _, n := range nodes {
		if p := nameProblem(n); p != "" {
			return nil, fmt.Errorf("node %s %s", badinput.Quote(n), p)
		}
		if prev, ok := leafOf[n]; ok {
			return nil, fmt.Errorf("node %s is already under the switch of line %d", badinput.Quote(n), prev)
		}
		leafOf[n] = line
	}
	return nodes, nil
}

// checkChildren refuses an upper switch whose child switch no line defines, or that lists
// itself, as Slurm does.
func checkChildren(lr *lineReader, switches []slurmSwitch, defined map[string]int) error {
	for _, s := range switches {
		for _, c := range s.children {
			if _, ok := defined[c]; !ok || c == s.name {
				return lr.errorf(s.line, "switch %s lists the child switch %s, which no other line defines", badinput.Quote(s.name), badinput.Quote(c))
			}
		}
	}
	return nil
}

// nextSlurmLine returns the next line of a topology with its comment cut and its
// continuations joined (Slurm's configuration reader joins a line ending in '\' to the next
// one), and the number of its first line; ok is false at the end of the input.
func nextSlurmLine(lr *lineReader) (text string, line int, ok bool, err error) {
	var b strings.Builder
	for {
		raw, more, err := lr.next()
		if err != nil {
			return "", 0, false, err
		}
		if !more {
			return b.String(), line, line > 0, nil
		}
		if line == 0 {
			line = lr.line
		}
		if i := strings.IndexByte(raw, '#'); i >= 0 {
			raw = raw[:i]
		}
		body, continued := strings.CutSuffix(strings.TrimRight(raw, " \t"), `\`)
		if b.Len()+len(body) > maxSlurmLineBytes {
			return "", 0, false, lr.errorf(line, "longer than %d bytes with its continuations", maxSlurmLineBytes)
		}
		b.WriteString(body)
		if !continued {
			return b.String(), line, true, nil
		}
	}
}

// parseSlurmLine reads a switch line: its name, its child switches, and its Nodes= list, left
// unexpanded for the caller (an upper switch's, printed by scontrol, is not read).
func parseSlurmLine(text string) (s slurmSwitch, nodes string, err error) {
	kv, err := slurmFields(text)
	if err != nil {
		return s, "", err
	}
	var ok bool
	if s.name, ok = kv["SwitchName"]; !ok {
		return s, "", fmt.Errorf("no SwitchName")
	}
	if p := nameProblem(s.name); p != "" {
		return s, "", fmt.Errorf("SwitchName %s", p)
	}
	for _, k := range []string{"LinkSpeed", "Level"} {
		if v, ok := kv[k]; ok {
			if _, err := strconv.ParseUint(v, 10, 32); err != nil {
				return s, "", fmt.Errorf("%s=%s: want a whole number from 0 to %d", k, badinput.Quote(v), uint32(math.MaxUint32))
			}
		}
	}
	_, scontrol := kv["Level"]
	nodes, list := kv["Nodes"], kv["Switches"]
	switch {
	case list != "" && nodes != "" && !scontrol:
		return s, "", fmt.Errorf("switch %s has both Nodes and Switches; a switch of topology.conf has either nodes or child switches", badinput.Quote(s.name))
	case list != "":
		if s.children, err = ExpandHostList(list); err != nil {
			return s, "", fmt.Errorf("Switches: %w", err)
		}
		return s, "", nil
	}
	return s, nodes, nil
}

// slurmFields reads a line's Key=Value fields, refusing an unknown key and a key given twice.
func slurmFields(text string) (map[string]string, error) {
	kv := map[string]string{}
	for _, field := range strings.Fields(text) {
		k, v, ok := strings.Cut(field, "=")
		if !ok {
			return nil, fmt.Errorf("%s is not Key=Value", badinput.Quote(field))
		}
		key, known := slurmKeys[strings.ToLower(k)]
		switch {
		case !known && strings.HasPrefix(strings.ToLower(k), "block"):
			return nil, fmt.Errorf("%s: the block topology (topology/block) is not a tree; commcal reads the SwitchName lines of topology/tree", badinput.Quote(k))
		case !known:
			return nil, fmt.Errorf("unknown key %s: a switch line takes SwitchName, Switches, Nodes and LinkSpeed (and Level, from scontrol)", badinput.Quote(k))
		}
		if _, twice := kv[key]; twice {
			return nil, fmt.Errorf("%s given twice", key)
		}
		kv[key] = v
	}
	return kv, nil
}

// ExpandHostList expands a Slurm host list: comma-separated names, each with bracketed
// ranges and lists of numbers ("n[1-3,7]" is n1 n2 n3 n7; "n[01-03]" keeps the width: n01
// n02 n03; several brackets multiply: "r[1-2]n[1-2]").
func ExpandHostList(s string) ([]string, error) {
	var out []string
	depth, start := 0, 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) {
			switch s[i] {
			case '[':
				depth++
				continue
			case ']':
				depth--
				if depth < 0 {
					return nil, fmt.Errorf("%s: unbalanced ]", badinput.Quote(s))
				}
				continue
			case ',':
				if depth > 0 {
					continue
				}
			default:
				continue
			}
		}
		if depth != 0 {
			return nil, fmt.Errorf("%s: unbalanced [", badinput.Quote(s))
		}
		if start == i {
			return nil, fmt.Errorf("%s: empty host name", badinput.Quote(s))
		}
		names, err := expandPattern(s[start:i])
		if err != nil {
			return nil, err
		}
		out = append(out, names...)
		start = i + 1
		if len(out) > maxNodes {
			return nil, fmt.Errorf("%s: more than %d hosts", badinput.Quote(s), maxNodes)
		}
	}
	return out, nil
}

// expandPattern expands the brackets of p, which may be empty (the tail after the last one).
func expandPattern(p string) ([]string, error) {
	open := strings.IndexByte(p, '[')
	if open < 0 {
		return []string{p}, nil
	}
	closing := strings.IndexByte(p[open:], ']') + open
	prefix, body, rest := p[:open], p[open+1:closing], p[closing+1:]
	tails, err := expandPattern(rest)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, part := range strings.Split(body, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		if !isRange {
			hi = lo
		}
		a, err1 := strconv.Atoi(lo)
		b, err2 := strconv.Atoi(hi)
		if err1 != nil || err2 != nil || a > b || a < 0 || b-a > maxNodes {
			return nil, fmt.Errorf("%s: bad range %s", badinput.Quote(p), badinput.Quote(part))
		}
		width := len(lo)
		for n := a; n <= b; n++ {
			num := fmt.Sprintf("%0*d", width, n)
			for _, t := range tails {
				out = append(out, prefix+num+t)
			}
			if len(out) > maxNodes {
				return nil, fmt.Errorf("%s: more than %d hosts", badinput.Quote(p), maxNodes)
			}
		}
	}
	return out, nil
}

// EncodeTOML writes a description as cluster.toml.
func EncodeTOML(d Description) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# cluster %s: %d racks, written by commcal; set the rates to the hardware's\n", d.Name, len(d.Racks))
	if err := toml.NewEncoder(&b).Encode(d); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
