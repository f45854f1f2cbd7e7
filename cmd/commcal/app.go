package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/estimate"
	"github.com/commcal/commcal/internal/atomicio"
	"github.com/commcal/commcal/pipeline"
)

// Exit statuses, the same for every command.
const (
	exitOK      = 0
	exitFailure = 1 // a failure, or drift under compare --fail-on-drift
	exitBadData = 2 // bad input or bad usage
)

const exitStatusHelp = `EXIT STATUS:
   0  success
   1  failure (or a drift or accuracy alarm, where the command checks one)
   2  bad input (the message names the file, row and column) or bad usage`

// usageError is a mistake on the command line.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

// exitCode maps an error to the exit status: bad input and usage give 2, anything else
// (including drift under --fail-on-drift) 1.
func exitCode(err error) int {
	var ue usageError
	if err == nil {
		return exitOK
	}
	if _, ok := datasets.IsInputError(err); ok || errors.As(err, &ue) {
		return exitBadData
	}
	return exitFailure
}

// run is the whole program, testable in process.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	app := newApp(stdout, stderr)
	err := app.RunContext(ctx, args)
	if err != nil {
		fmt.Fprintf(stderr, "commcal: %v\n", err)
	}
	return exitCode(err)
}

func newApp(stdout, stderr io.Writer) *cli.App {
	return &cli.App{
		Name:    "commcal",
		Usage:   "calibrate and validate communication performance models of computer clusters",
		Version: pipeline.Version,
		Description: `commcal reads cluster measurement logs, fits the parameters of communication models
(Hockney, LMO, contention), predicts the completion times of concurrent transfers, checks
the predictions against held-out measurements and draws the figures.

Start with "commcal run": it ingests the sample dataset built into the binary and writes a
run directory. Every command takes --help.

` + exitStatusHelp,
		Writer:                 stdout,
		ErrWriter:              stderr,
		HideHelpCommand:        true,
		UseShortOptionHandling: true,
		ExitErrHandler:         func(*cli.Context, error) {}, // run maps errors to exit codes
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usageError{err.Error()}
		},
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "log-level", Value: "warn", EnvVars: []string{"COMMCAL_LOG_LEVEL"},
				Usage: "structured log level on stderr: debug, info, warn or error"},
		},
		Commands: []*cli.Command{
			ingestCommand(),
			estimateCommand(),
			validateCommand(),
			plotCommand(),
			runCommand(),
			predictCommand(),
			compareCommand(),
			simulateCommand(),
			measureCommand(),
		},
	}
}

// withUsageErrors makes a command's flag errors usage errors.
func withUsageErrors(c *cli.Command) *cli.Command {
	c.OnUsageError = func(_ *cli.Context, err error, _ bool) error { return usageError{err.Error()} }
	if c.Description != "" {
		c.Description += "\n\n"
	}
	c.Description += exitStatusHelp
	return c
}

// positional returns the command's arguments, rejecting flags given after them (urfave/cli
// v2 stops reading flags at the first positional argument).
func positional(c *cli.Context, min, max int, what string) ([]string, error) {
	args := c.Args().Slice()
	for _, a := range args {
		if strings.HasPrefix(a, "-") && a != "-" {
			return nil, usagef("%s: flag %s after the arguments; put flags before %s", c.Command.Name, a, what)
		}
	}
	switch {
	case len(args) < min:
		return nil, usagef("%s: missing %s (see commcal %s --help)", c.Command.Name, what, c.Command.Name)
	case max >= 0 && len(args) > max:
		return nil, usagef("%s: too many arguments: %s", c.Command.Name, strings.Join(args, " "))
	}
	return args, nil
}

// invocation is what every writing command settles first: its inputs, its logger and the
// creation time it writes into outputs.
type invocation struct {
	paths []string
	log   *slog.Logger
	when  time.Time
}

// begin checks the positional arguments (between min and max, max < 0 for no limit) and
// --out, and builds the logger and the creation time.
func begin(c *cli.Context, min, max int, what string) (*invocation, error) {
	paths, err := positional(c, min, max, what)
	if err != nil {
		return nil, err
	}
	if err := checkOut(c.String("out"), paths); err != nil {
		return nil, err
	}
	log, err := logger(c)
	if err != nil {
		return nil, err
	}
	when, err := created()
	if err != nil {
		return nil, err
	}
	return &invocation{paths: paths, log: log, when: when}, nil
}

// writeDir builds the directory --out through fill, in a temporary sibling renamed into place
// when fill succeeds and removed when it fails.
func writeDir(c *cli.Context, fill func(tmp string) error) error {
	return atomicio.BuildDir(c.String("out"), fill)
}

// datasetJob is the start of the commands that work on one dataset: the checked invocation,
// the model parameters the flags give, and the dataset with its tables in memory.
type datasetJob struct {
	*invocation
	params contention.Params
	ds     *datasets.Dataset
	in     estimate.Inputs
}

// beginDataset checks a command's DATASET argument and flags, and loads the dataset; a path
// that is not a dataset is a usage error.
func beginDataset(c *cli.Context) (*datasetJob, error) {
	inv, err := begin(c, 1, 1, "DATASET")
	if err != nil {
		return nil, err
	}
	params, err := paramsFromFlags(c)
	if err != nil {
		return nil, err
	}
	ds, err := datasets.Open(inv.paths[0])
	if err != nil {
		return nil, usageError{err.Error()}
	}
	in, err := pipeline.LoadTables(c.Context, ds)
	if err != nil {
		return nil, err
	}
	return &datasetJob{invocation: inv, params: params, ds: ds, in: in}, nil
}

// logger builds the structured stderr logger from --log-level.
func logger(c *cli.Context) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(c.String("log-level"))); err != nil {
		return nil, usagef("--log-level: %v", err)
	}
	return slog.New(slog.NewTextHandler(c.App.ErrWriter, &slog.HandlerOptions{Level: lvl})), nil
}

// isTerminal reports whether w is a terminal, for progress bars.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
