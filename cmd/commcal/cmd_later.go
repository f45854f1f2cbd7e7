package main

import (
	"github.com/urfave/cli/v2"
)

// laterCommand defines a command whose stage a later piece of work builds. It exists so that
// --help shows the whole tool; running it says so and exits with status 1, writing nothing.
func laterCommand(name, usage, args, description, issue string) *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:        name,
		Usage:       usage + " (not available yet)",
		ArgsUsage:   args,
		Description: description + "\n\nNot available yet: it arrives with " + issue + ".",
		Action: func(c *cli.Context) error {
			return notAvailable{command: "commcal " + name, issue: issue}
		},
	})
}

func measureCommand() *cli.Command {
	return laterCommand("measure", "measure real TCP transfers on an emulated cluster", "",
		`Builds the cluster out of Linux network namespaces, runs the experiment catalogue over real
TCP and writes a dataset (needs root).

EXAMPLE:
   commcal measure --cluster two-rack.toml --out measured`, "the measurement issue (#6)")
}
