package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/commcal/commcal/contention"
	"github.com/commcal/commcal/datasets"
	"github.com/commcal/commcal/estimate"
	"github.com/commcal/commcal/internal/atomicio"
	"github.com/commcal/commcal/internal/badinput"
	"github.com/commcal/commcal/rundir"
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

// oneLine keeps a message on one line (a library's multi-line detail included) and at most
// badinput.MaxMessage bytes long; an internal error keeps its stack for the report.
func oneLine(err error) string {
	msg := err.Error()
	if strings.HasPrefix(msg, "internal error") {
		return msg
	}
	return badinput.Cut(strings.Join(strings.Fields(msg), " "))
}

func newApp(stdout, stderr io.Writer) *cli.App {
	return &cli.App{
		Name:                 "commcal",
		Usage:                "calibrate and validate communication performance models of computer clusters",
		Version:              readBuildInfo().String(),
		EnableBashCompletion: false, // the completion scripts ask "commcal completion --words" (cmd_completion.go)
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
			&cli.StringFlag{Name: "log-format", Value: "text", EnvVars: []string{"COMMCAL_LOG_FORMAT"},
				Usage: "structured logs as text (key=value) or json (one object per line)"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, EnvVars: []string{"COMMCAL_QUIET"},
				Usage: "print nothing on stdout and only errors on stderr (outputs and exit statuses unchanged)"},
		},
		Commands: []*cli.Command{
			ingestCommand(),
			estimateCommand(),
			validateCommand(),
			plotCommand(),
			runCommand(),
			predictCommand(),
			compareCommand(),
			leaderboardCommand(),
			simulateCommand(),
			measureCommand(),
			agentCommand(),
			clusterCommand(),
			exportCommand(),
			versionCommand(),
			completionCommand(),
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

// act makes a command's Action from run: it reads the positional arguments (between min and
// max of them, max < 0 for no bound, what naming them in messages) and the environment the
// global flags set, so that every command checks them alike before its own flags.
func act(min, max int, what string, run func(c *cli.Context, e env, args []string) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		args, err := positional(c, min, max, what)
		if err != nil {
			return err
		}
		e, err := envFrom(c)
		if err != nil {
			return err
		}
		return run(c, e, args)
	}
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

// datasetJob is where estimate and validate start: the parameters the flags give, the
// claimed output, and the dataset with its tables in memory (Hockney's breaks set).
type datasetJob struct {
	params contention.Params
	out    *atomicio.Claimed
	ds     *datasets.Dataset
	in     estimate.Inputs
}

// startDatasetJob loads the parameters, claims the output (the dataset, the params file and
// extra inputs never replaced) and reads the dataset. The caller releases job.out.
func startDatasetJob(ctx context.Context, dataset string, noVerify bool, breaks []float64, p paramsOptions, o outputOptions, extra ...string) (*datasetJob, error) {
	params, err := p.load()
	if err != nil {
		return nil, err
	}
	out, err := o.claim(ctx, replaceOutput, append([]string{dataset, p.File}, extra...)...)
	if err != nil {
		return nil, err
	}
	ds, err := openDataset(dataset, noVerify)
	if err == nil {
		var in estimate.Inputs
		if in, err = rundir.LoadTables(ctx, ds); err == nil {
			if breaks == nil {
				breaks = ds.Manifest.HockneyBreaks // a SimGrid breakpoints file ingested with the data
			}
			in.HockneyBreaks = breaks
			return &datasetJob{params: params, out: out, ds: ds, in: in}, nil
		}
	}
	out.Release()
	return nil, err
}
