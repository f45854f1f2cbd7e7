package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/urfave/cli/v2"

	"github.com/commcal/commcal/internal/provenance"
)

// buildInfo is what the binary knows of its build: the version set at link time and the
// version-control stamp the Go toolchain records (go build in a git checkout).
// versionFormat is the format tag of what version --json prints.
const versionFormat = "commcal-version/1"

type buildInfo struct {
	Format   string `json:"format"`
	Version  string `json:"version"`
	Commit   string `json:"commit,omitempty"`
	Time     string `json:"commit_time,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

func readBuildInfo() buildInfo {
	b := buildInfo{Format: versionFormat, Version: provenance.Version, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Commit = s.Value
			case "vcs.time":
				b.Time = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	return b
}

// String is the one-line form --version prints.
func (b buildInfo) String() string {
	s := b.Version
	if b.Commit != "" {
		short := b.Commit[:min(12, len(b.Commit))]
		if b.Modified {
			short += "+modified"
		}
		s += " (commit " + short + ")"
	}
	return s
}

func versionCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:  "version",
		Usage: "print commcal's version, commit and Go version",
		Description: `Prints the version (set at release with -ldflags "-X github.com/commcal/commcal/internal/provenance.Version=..."),
the git commit and commit time the Go toolchain stamped into the binary when it was built
from a checkout, the Go version and the platform; --json for scripts.`,
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print as JSON"}},
		Action: act(0, 0, "nothing", func(c *cli.Context, e env, _ []string) error {
			b := readBuildInfo()
			if c.Bool("json") {
				return e.printJSON(b)
			}
			fmt.Fprintf(e.stdout, "commcal %s\n", b)
			if b.Time != "" {
				fmt.Fprintf(e.stdout, "commit time %s\n", b.Time)
			}
			_, err := fmt.Fprintf(e.stdout, "%s %s\n", b.Go, b.Platform)
			return err
		}),
	})
}
