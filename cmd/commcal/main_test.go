package main

import (
	"os"
	"testing"
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
