package main

import (
	"os"
	"strings"
	"testing"

	"github.com/commcal/commcal/experiments"
)

// TestMain lets the test binary stand in for commcal when a command under test starts
// `commcal agent` processes (measure starts its agents from os.Executable, which in a test is
// this binary). Test runs never pass "agent" as the first argument.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "agent" {
		main()
	}
	os.Exit(m.Run())
}

// TestMeasureHelpCatalogueParses keeps the catalogue example of measure's help a valid
// catalogue file.
func TestMeasureHelpCatalogueParses(t *testing.T) {
	desc := measureCommand().Description
	a := strings.Index(desc, "is not measured:\n")
	b := strings.Index(desc, "\nEXAMPLES:")
	if a < 0 || b < a {
		t.Fatal("no catalogue example in measure's help")
	}
	var lines []string
	for _, l := range strings.Split(desc[a+len("is not measured:\n"):b], "\n") {
		lines = append(lines, strings.TrimPrefix(l, "   "))
	}
	c, err := experiments.ParseCatalogue([]byte(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	if c.LMO.Bytes == 0 || len(c.Collectives.Sizes) == 0 || len(c.PingPong.Pairs) == 0 || len(c.Random) == 0 || c.StaticSync.Graphs == 0 {
		t.Errorf("the help's example selects too little: %+v", c)
	}
}
