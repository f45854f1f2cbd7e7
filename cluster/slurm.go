package cluster

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// Rates of a description written from a scheduler's topology, which knows the wiring but
// not the link rates.
type Rates struct {
	NICBps    float64 // every node's NIC
	UplinkBps float64 // every leaf switch's uplink to the core (several racks only)
	Kind      string  // backbone kind: electrical or optical
}

// FromSlurmTopology writes a description from Slurm's tree topology: the lines of
// topology.conf or of `scontrol show topology`, "SwitchName=s0 Nodes=n[0-15]" for a leaf
// switch and "SwitchName=top Switches=s[0-3]" for a switch above others (Level= and
// LinkSpeed= are read and ignored: LinkSpeed is a relative weight, not a rate). Every leaf
// switch becomes a rack; with several racks, each gets an uplink to one core router
// (TopologyCore): a deeper tree is flattened to that, and the second result says so. Node
// lists are Slurm host lists (n[0-3,7], rack1-n[01-16]).
func FromSlurmTopology(r io.Reader, name string, rates Rates) (Description, []string, error) {
	d := Description{Name: name, NICRateBps: rates.NICBps}
	var notes []string
	levels := 0
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), maxFileBytes)
	line := 0
	seen := map[string]int{}
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = strings.TrimSpace(text[:i])
		}
		if text == "" {
			continue
		}
		kv := map[string]string{}
		for _, field := range strings.Fields(text) {
			k, v, ok := strings.Cut(field, "=")
			if !ok {
				return d, nil, fmt.Errorf("cluster: slurm topology line %d: %q is not Key=Value", line, field)
			}
			kv[strings.ToLower(k)] = v
		}
		sw := kv["switchname"]
		if sw == "" {
			return d, nil, fmt.Errorf("cluster: slurm topology line %d: no SwitchName", line)
		}
		switch {
		case kv["nodes"] != "":
			nodes, err := ExpandHostList(kv["nodes"])
			if err != nil {
				return d, nil, fmt.Errorf("cluster: slurm topology line %d: Nodes: %w", line, err)
			}
			for _, n := range nodes {
				if prev, ok := seen[n]; ok {
					return d, nil, fmt.Errorf("cluster: slurm topology line %d: node %q is already under the switch of line %d", line, n, prev)
				}
				seen[n] = line
			}
			d.Racks = append(d.Racks, Rack{Name: sw, Nodes: nodes})
		case kv["switches"] != "":
			levels++
		default:
			return d, nil, fmt.Errorf("cluster: slurm topology line %d: switch %s has neither Nodes nor Switches", line, sw)
		}
	}
	if err := sc.Err(); err != nil {
		return d, nil, fmt.Errorf("cluster: slurm topology: %w", err)
	}
	if len(d.Racks) == 0 {
		return d, nil, fmt.Errorf("cluster: slurm topology: no switch with Nodes= (is the tree topology plugin configured?)")
	}
	if len(d.Racks) > 1 {
		d.Backbone = &Backbone{Topology: TopologyCore, Kind: rates.Kind, RateBps: rates.UplinkBps}
		if levels > 1 {
			notes = append(notes, fmt.Sprintf("the topology has %d switches above the leaves; commcal models one core router above %d racks", levels, len(d.Racks)))
		}
	}
	return d, notes, nil
}

// FromHostFile writes a one-rack description from an MPI host file: a host per line, as
// Open MPI ("host slots=4") and MPICH ("host:4") write them; comments and blank lines are
// skipped, a host listed twice once.
func FromHostFile(r io.Reader, name string, rates Rates) (Description, error) {
	d := Description{Name: name, NICRateBps: rates.NICBps}
	rack := Rack{Name: "rack0"}
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		text := sc.Text()
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		fields := strings.Fields(text)
		if len(fields) == 0 {
			continue
		}
		host, _, _ := strings.Cut(fields[0], ":")
		if !seen[host] {
			seen[host] = true
			rack.Nodes = append(rack.Nodes, host)
		}
	}
	if err := sc.Err(); err != nil {
		return d, fmt.Errorf("cluster: host file: %w", err)
	}
	if len(rack.Nodes) == 0 {
		return d, fmt.Errorf("cluster: host file: no host")
	}
	d.Racks = []Rack{rack}
	return d, nil
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
					return nil, fmt.Errorf("%q: unbalanced ]", s)
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
			return nil, fmt.Errorf("%q: unbalanced [", s)
		}
		if start == i {
			return nil, fmt.Errorf("%q: empty host name", s)
		}
		names, err := expandPattern(s[start:i])
		if err != nil {
			return nil, err
		}
		out = append(out, names...)
		start = i + 1
		if len(out) > maxNodes {
			return nil, fmt.Errorf("%q: more than %d hosts", s, maxNodes)
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
			return nil, fmt.Errorf("%q: bad range %q", p, part)
		}
		width := len(lo)
		for n := a; n <= b; n++ {
			num := fmt.Sprintf("%0*d", width, n)
			for _, t := range tails {
				out = append(out, prefix+num+t)
			}
			if len(out) > maxNodes {
				return nil, fmt.Errorf("%q: more than %d hosts", p, maxNodes)
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
