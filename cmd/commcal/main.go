// Command commcal calibrates and validates communication performance models of computer
// clusters; see README.md and `commcal --help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// The first SIGINT or SIGTERM cancels the context: every stage stops, removes what it
	// was writing and the command exits 130. The handler is then dropped, so that a second
	// signal kills at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	context.AfterFunc(ctx, stop)
	code := run(ctx, os.Args, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
