package cluster

import (
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"

	"github.com/commcal/commcal/internal/badinput"
)

// Limits of a host file.
//
//   - maxHostLineBytes, 64 KiB per line: a host name has at most 253 bytes and its options a
//     few dozen; the bound leaves room for long comments and refuses a line without an end at
//     its number.
//   - maxSlots, 1,048,576 slots per host: far above the hardware threads of any node, and
//     small enough that slot arithmetic cannot overflow.
const (
	maxHostLineBytes = 64 << 10
	maxSlots         = 1 << 20
)

// The kinds of value a host file option takes.
const (
	kindSlots = iota // a whole number from 1 to maxSlots
	kindSize         // a whole number from 0 to maxSlots (boards, sockets, cores)
	kindText         // anything non-empty
)

// hostOption is an option a host file line may give after its host, under the name that
// stands for it and its synonyms.
type hostOption struct {
	name string
	kind int
}

// hostOptions are the options Open MPI's hostfile lexer (orte/util/hostfile) and MPICH's
// hydra machinefile reader accept after a host, by every spelling they accept. Both read
// keywords case-sensitively.
var hostOptions = func() map[string]hostOption {
	m := map[string]hostOption{}
	add := func(o hostOption, spellings ...string) {
		for _, s := range spellings {
			m[s] = o
		}
	}
	add(hostOption{"slots", kindSlots}, "slots", "count", "cpu")
	add(hostOption{"max_slots", kindSlots}, "max_slots", "max-slots", "slots_max", "slots-max",
		"max_cpu", "max-cpu", "cpu_max", "cpu-max", "max_count", "max-count", "count_max", "count-max")
	add(hostOption{"boards", kindSize}, "boards")
	add(hostOption{"sockets", kindSize}, "sockets", "sockets_per_board", "sockets-per-board")
	add(hostOption{"cores", kindSize}, "cores", "cores_per_socket", "cores-per-socket")
	add(hostOption{"username", kindText}, "username", "user-name", "user_name", "user")
	add(hostOption{"cpu_set", kindText}, "cpu_set", "cpu-set")
	add(hostOption{"binding", kindText}, "binding")
	add(hostOption{"ifhn", kindText}, "ifhn")
	return m
}()

// hostLine is one line of a host file that names a host.
type hostLine struct {
	host    string
	exclude bool // "^host": Open MPI leaves the host out wherever the file lists it
}

// FromHostFile writes a one-rack description from an MPI host file, in either launcher's
// syntax: Open MPI's "host slots=N max_slots=M" (with the synonyms and the other options its
// hostfile lexer knows, "user@host", "^host" to leave a host out, and #, // and /* */
// comments) or MPICH's "host:N" followed by options such as user=, binding= or ifhn=. A host
// listed twice is taken once. What either launcher refuses is refused with the line number:
// an unknown keyword, a keyword given twice, a slot count that is not a whole number from 1
// up, max_slots below slots, a token that is not a host name (a comma-separated list, a
// leading "slots=4"). Errors are bad input (internal/badinput); the caller names the file.
func FromHostFile(r io.Reader, name string, rates Rates) (Description, error) {
	d := Description{Name: name, NICRateBps: rates.NICBps}
	lr := newLineReader(r, maxHostLineBytes)
	var comments blockComments
	var nodes []string
	listed, excluded := map[string]bool{}, map[string]bool{}
	for {
		raw, ok, err := lr.next()
		if err != nil {
			return d, err
		}
		if !ok {
			break
		}
		fields := joinEquals(strings.Fields(comments.strip(raw)))
		if len(fields) == 0 {
			continue
		}
		h, err := parseHostLine(fields)
		switch {
		case err != nil:
			return d, lr.errorf(lr.line, "%v", err)
		case h.exclude && !excluded[h.host]:
			if len(excluded) == maxNodes {
				return d, lr.errorf(lr.line, "more than %d excluded hosts", maxNodes)
			}
			excluded[h.host] = true
		case !h.exclude && !listed[h.host]:
			if len(listed) == maxNodes {
				return d, lr.errorf(lr.line, "more than %d hosts; commcal calibrates clusters of at most %d nodes", maxNodes, maxNodes)
			}
			listed[h.host] = true
			nodes = append(nodes, h.host)
		}
	}
	rack := Rack{Name: "rack0"}
	for _, n := range nodes {
		if !excluded[n] {
			rack.Nodes = append(rack.Nodes, n)
		}
	}
	if len(rack.Nodes) == 0 {
		return d, badinput.Errorf("", "no host: every line is blank, a comment or an excluded ^host")
	}
	d.Racks = []Rack{rack}
	return d, nil
}

// parseHostLine reads a line's host and checks its options.
func parseHostLine(fields []string) (hostLine, error) {
	h, count, err := parseHostToken(fields[0])
	if err != nil {
		return h, err
	}
	given := map[string]string{} // option → how the line gave it
	slots, maxSlotsGiven := 0, 0
	if count != "" {
		n, err := parseCount(fields[0], count, kindSlots)
		if err != nil {
			return h, err
		}
		slots, given["slots"] = n, badinput.Quote(fields[0])
	}
	for _, f := range fields[1:] {
		key, value, ok := strings.Cut(f, "=")
		if !ok {
			return h, fmt.Errorf("%s after the host: want keyword=value (slots=4), one host per line", badinput.Quote(f))
		}
		opt, known := hostOptions[key]
		if !known {
			return h, fmt.Errorf("unknown keyword %s: a host takes slots=, max_slots=, username=, cpu_set=, boards=, sockets=, cores= (Open MPI) or user=, binding=, ifhn= (MPICH)", badinput.Quote(key))
		}
		if prev, twice := given[opt.name]; twice {
			return h, fmt.Errorf("%s given twice on the line (%s and %s)", opt.name, prev, badinput.Quote(f))
		}
		given[opt.name] = badinput.Quote(f)
		n, err := parseCount(f, value, opt.kind)
		if err != nil {
			return h, err
		}
		switch opt.name {
		case "slots":
			slots = n
		case "max_slots":
			maxSlotsGiven = n
		}
	}
	if slots > 0 && maxSlotsGiven > 0 && maxSlotsGiven < slots {
		return h, fmt.Errorf("max_slots %d is less than slots %d", maxSlotsGiven, slots)
	}
	return h, nil
}

// parseCount checks an option's value (the whole option is given for messages) and returns
// the number a count holds. Neither launcher reads a sign, a fraction or an exponent.
func parseCount(option, value string, kind int) (int, error) {
	if value == "" {
		return 0, fmt.Errorf("%s has no value", badinput.Quote(option))
	}
	if kind == kindText {
		return 0, nil
	}
	lo := 1
	if kind == kindSize {
		lo = 0
	}
	n, err := strconv.Atoi(value)
	if err != nil || strings.TrimLeft(value, "0123456789") != "" || n < lo || n > maxSlots {
		return 0, fmt.Errorf("%s: want a whole number from %d to %d", badinput.Quote(option), lo, maxSlots)
	}
	return n, nil
}

// parseHostToken reads the first token of a line: [^][user@]host[:count], where host is a
// host name or an IP address (an IPv6 address takes no count: its colons are its own).
func parseHostToken(tok string) (h hostLine, count string, err error) {
	switch {
	case strings.Contains(tok, "="):
		return h, "", fmt.Errorf("%s where a host name is expected: a line starts with its host (node1 slots=4)", badinput.Quote(tok))
	case strings.Contains(tok, ","):
		return h, "", fmt.Errorf("%s: a comma-separated list is --host syntax; a host file lists one host per line", badinput.Quote(tok))
	}
	host := tok
	if strings.HasPrefix(host, "^") {
		h.exclude, host = true, host[1:]
	}
	if user, rest, ok := strings.Cut(host, "@"); ok {
		if user == "" || strings.Contains(rest, "@") {
			return h, "", fmt.Errorf("%s: want user@host", badinput.Quote(tok))
		}
		host = rest
	}
	if addr, err := netip.ParseAddr(host); err != nil || !addr.Is6() {
		var hasCount bool
		if host, count, hasCount = strings.Cut(host, ":"); hasCount && count == "" {
			return h, "", fmt.Errorf("%s: no count after ':' (node1:4)", badinput.Quote(tok))
		}
	}
	if p := hostNameProblem(host); p != "" {
		return h, "", fmt.Errorf("%s is not a host name: %s", badinput.Quote(host), p)
	}
	h.host = host
	return h, count, nil
}

// hostNameProblem says why s is neither an IP address nor a host name as RFC 1123 writes it
// (dot-separated labels of 1 to 63 letters, digits and hyphens, not starting or ending with
// a hyphen; 253 bytes in all), or "". An IPv6 address takes no zone. Underscores are let through, as Open MPI's lexer and
// many /etc/hosts files do.
func hostNameProblem(s string) string {
	if addr, err := netip.ParseAddr(s); err == nil {
		if addr.Zone() != "" {
			return "an address with a zone (%eth0) is not one Open MPI's lexer reads"
		}
		return ""
	}
	switch {
	case s == "":
		return "it is empty"
	case len(s) > 253:
		return fmt.Sprintf("it is %d bytes long, at most 253", len(s))
	case strings.Trim(s, "0123456789.") == "" && strings.Contains(s, "."):
		return "it is not an IPv4 address (four numbers from 0 to 255)"
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isHostByte(c) {
			return fmt.Sprintf("byte %d is %s; a host name holds letters, digits, '-', '_' and '.' (write an IDN in its xn-- form)", i, strconv.Quote(s[i:i+1]))
		}
	}
	for _, label := range strings.Split(s, ".") {
		switch {
		case label == "":
			return "it has an empty label (two dots, or a dot at an end)"
		case len(label) > 63:
			return fmt.Sprintf("a label is %d bytes long, at most 63", len(label))
		case label[0] == '-' || label[len(label)-1] == '-':
			return fmt.Sprintf("the label %q starts or ends with '-'", label)
		}
	}
	return ""
}

func isHostByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
}

// joinEquals joins an option written with spaces around its '=' ("slots = 4", which Open
// MPI's lexer reads as slots=4) into one field.
func joinEquals(fields []string) []string {
	out := fields[:0:0]
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		for i+1 < len(fields) && (strings.HasSuffix(f, "=") || strings.HasPrefix(fields[i+1], "=")) {
			i++
			f += fields[i]
		}
		out = append(out, f)
	}
	return out
}

// blockComments strips the comments of host file lines, carrying a /* */ comment from line
// to line: '#' and "//" end a line (both launchers cut at '#'; Open MPI's lexer also takes
// C and C++ comments), and a comment /* ... */ reads as a space.
type blockComments struct{ open bool }

func (c *blockComments) strip(line string) string {
	var b strings.Builder
	for line != "" {
		if c.open {
			end := strings.Index(line, "*/")
			if end < 0 {
				break
			}
			c.open, line = false, line[end+2:]
			b.WriteByte(' ')
			continue
		}
		i := strings.IndexAny(line, "#/")
		if i < 0 {
			b.WriteString(line)
			break
		}
		b.WriteString(line[:i])
		switch rest := line[i:]; {
		case rest[0] == '#' || strings.HasPrefix(rest, "//"):
			return b.String()
		case strings.HasPrefix(rest, "/*"):
			c.open, line = true, rest[2:]
			b.WriteByte(' ')
		default:
			b.WriteByte('/')
			line = rest[1:]
		}
	}
	return b.String()
}
