package schedule

import (
	"slices"
	"strings"

	"github.com/commcal/commcal/internal/badinput"
)

// AutoPrefix begins a choice of algorithm that names a library rather than an algorithm.
//
// A choice of algorithm says how a collective is expanded: by one of its algorithms, named
// (Algorithms, New), or, as AutoPrefix and a library (Libraries), by the algorithm that
// library's default rules pick for its number of ranks and size (Auto): "pairwise",
// "auto:openmpi".
const AutoPrefix = "auto:"

// AutoChoices are the choices that name a library: "auto:openmpi", "auto:mpich".
func AutoChoices() []string {
	var out []string
	for _, lib := range Libraries() {
		out = append(out, AutoPrefix+string(lib))
	}
	return out
}

// CheckChoice says whether choice is a choice of algorithm for op: nil, or bad input saying
// what was wanted.
func CheckChoice(op Op, choice string) error {
	if _, ok := catalogue[op]; !ok {
		return badinput.Errorf("", "schedule: unknown collective %s; want one of %s", badinput.Quote(string(op)), opNames())
	}
	autos := strings.Join(AutoChoices(), ", ")
	if lib, ok := strings.CutPrefix(choice, AutoPrefix); ok {
		if !slices.Contains(Libraries(), Library(lib)) {
			return badinput.Errorf("", "schedule: unknown library %s; want %s or one of %s's algorithms", badinput.Quote(lib), autos, op)
		}
		return nil
	}
	if !slices.Contains(Algorithms(op), choice) {
		return badinput.Errorf("", "schedule: %s has no algorithm %s; want one of %s, or %s", op, badinput.Quote(choice),
			strings.Join(Algorithms(op), ", "), autos)
	}
	return nil
}

// ExpandChoice expands c by a choice of algorithm: into the rounds of the algorithm it names
// (New: Rule says the user named it) or of the one its library's rules pick (Auto: Rule quotes
// the rule). A choice that is not one for c's op (CheckChoice) is bad input, as are the
// mistakes New and Auto refuse.
func ExpandChoice(c Collective, choice string) (*Schedule, error) {
	if err := CheckChoice(c.Op, choice); err != nil {
		return nil, err
	}
	if lib, ok := strings.CutPrefix(choice, AutoPrefix); ok {
		return Auto(c, Library(lib))
	}
	return New(c, choice)
}
