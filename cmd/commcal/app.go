package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/estimate"
	"github.com/commcal/commcal/internal/atomicio"
	"github.com/commcal/commcal/internal/badinput"
	"github.com/commcal/commcal/pipeline"
)

// Exit statuses, the same for every command, decided by exitCode alone.
const (
	exitOK          = 0
	exitFailure     = 1   // a failure of the environment or of commcal: I/O, a busy output, a bug
	exitBadInput    = 2   // bad input (the message names the file, row and column) or bad usage
	exitAlarm       = 3   // a drift or accuracy alarm: the run is complete, the cluster or the model is not fine
	exitInterrupted = 130 // SIGINT or SIGTERM: stopped, nothing half written (128 + SIGINT, as shells report)
)

const exitStatusHelp = `EXIT STATUS:
   0    success
   1    failure: I/O, another commcal writing the same output, an internal error
   2    bad input (the message names the file, row and column) or bad usage
   3    alarm: a parameter drifted or a model's accuracy crossed a --fail-* threshold
        (outputs are complete and written)
   130  interrupted by SIGINT or SIGTERM (nothing is left half written)`

// usageError is a mistake on the command line.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// BadInput marks a usage error as bad input (exit status 2).
func (usageError) BadInput() {}

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

// alarmError is a drift or accuracy alarm: everything was written, and the result crossed a
// threshold the user set.
type alarmError struct{ msg string }

func (e alarmError) Error() string { return e.msg }

// exitCode maps an error to the exit status by its type: interruption 130, alarms 3, bad
// input and usage 2, anything else 1.
func exitCode(err error) int {
	var alarm alarmError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	case errors.As(err, &alarm):
		return exitAlarm
	case badinput.Is(err):
		return exitBadInput
	}
	return exitFailure
}

// run is the whole program, testable in process.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	app := newApp(stdout, stderr)
	err := runSafely(func() error { return app.RunContext(ctx, args) })
	var cliExit cli.ExitCoder
	if errors.As(err, &cliExit) {
		err = usageError{err.Error()} // urfave/cli's own ("No help topic for ...")
	}
	switch {
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "commcal: interrupted; nothing was left half written")
	case err != nil:
		fmt.Fprintf(stderr, "commcal: %s\n", oneLine(err))
	}
	return exitCode(err)
}

// runSafely turns a panic into an error, so that no stack trace reaches a user; the stack
// goes to the error for a bug report.
func runSafely(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error (please report it): %v\n%s", r, debug.Stack())
		}
	}()
	return fn()
}

// oneLine keeps a message on one line (a library's multi-line detail included).
func oneLine(err error) string {
	msg := err.Error()
	if strings.HasPrefix(msg, "internal error") {
		return msg
	}
	return strings.Join(strings.Fields(msg), " ")
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
		UseShortOptionHandling: true,
		ExitErrHandler:         func(*cli.Context, error) {}, // run maps errors to exit codes
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usageError{err.Error()}
		},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usagef("unknown command %q (commcal --help lists them)", c.Args().First())
			}
			return cli.ShowAppHelp(c)
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

// invocation is what every writing command settles first: its inputs, its claimed output,
// its logger and the creation time it writes into outputs. done releases the output.
type invocation struct {
	paths []string
	out   *atomicio.Claimed
	log   *slog.Logger
	when  time.Time
}

func (inv *invocation) done() {
	if inv != nil {
		inv.out.Release()
	}
}

// outputPolicy says how a command treats an existing --out.
type outputPolicy int

const (
	// replaceOutput replaces an earlier commcal output (run, estimate, validate, compare).
	replaceOutput outputPolicy = iota
	// keepOutput needs --force even for an earlier commcal output (ingest, simulate, measure:
	// a dataset may be the only copy of a measurement).
	keepOutput
)

// outFlags are --out (with its environment variable and default) and the flags that decide
// what may happen to an existing output: --force and --wait.
func outFlags(env, value, usage string) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Value: value, EnvVars: []string{env}, Usage: usage},
		&cli.BoolFlag{Name: "force", Usage: "replace an existing --out that commcal did not write, or an earlier dataset (never an input)"},
		&cli.BoolFlag{Name: "wait", EnvVars: []string{"COMMCAL_WAIT"}, Usage: "wait for another commcal writing the same --out instead of failing"},
	}
}

// inputFlags are the flags whose values are files a command reads; with the positional
// arguments they are the inputs an output may never replace.
var inputFlags = []string{"cluster", "params", "calibration", "truth"}

// begin checks the positional arguments (between min and max, max < 0 for no limit), builds
// the logger and the creation time, and claims --out (atomicio.Claim: never an input, never
// something commcal did not write unless --force, locked against a concurrent run).
func begin(c *cli.Context, min, max int, what string, policy outputPolicy) (*invocation, error) {
	paths, err := positional(c, min, max, what)
	if err != nil {
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
	inputs := slices.Clone(paths)
	for _, name := range inputFlags {
		if v := c.String(name); v != "" {
			if _, err := os.Stat(v); err == nil {
				inputs = append(inputs, v)
			}
		}
	}
	if c.String("out") == "" {
		return nil, usagef("%s: --out is required", c.Command.Name)
	}
	out, err := atomicio.Claim(c.Context, atomicio.Target{Path: c.String("out"), Inputs: inputs, Force: c.Bool("force"),
		ReplaceNeedsForce: policy == keepOutput, Wait: c.Bool("wait")})
	if err != nil {
		return nil, err
	}
	return &invocation{paths: paths, out: out, log: log, when: when}, nil
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
	inv, err := begin(c, 1, 1, "DATASET", replaceOutput)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			inv.done()
		}
	}()
	params, err := paramsFromFlags(c)
	if err != nil {
		return nil, err
	}
	ds, err := openDataset(c, inv.paths[0])
	if err != nil {
		return nil, err
	}
	in, err := pipeline.LoadTables(c.Context, ds)
	if err != nil {
		return nil, err
	}
	ok = true
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

// openDataset opens a dataset directory given as an argument; one that is not a dataset is
// bad input.
func openDataset(c *cli.Context, dir string) (*datasets.Dataset, error) {
	ds, err := datasets.Open(dir)
	return ds, badinput.Wrap(dir, err)
}
