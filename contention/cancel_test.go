package contention

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// stopLimit is how soon after its context is cancelled a prediction or a fit must return: the
// second that an interrupted command is given to exit.
const stopLimit = time.Second

// checkStops runs fn with a context cancelled after delay and checks that fn was still running
// then, that it returned an error that is context.Canceled, and that it returned within
// stopLimit of the cancellation. It returns how long fn took to stop.
func checkStops(t *testing.T, delay time.Duration, fn func(ctx context.Context) error) time.Duration {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var cancelled atomic.Int64 // when the cancellation happened, in Unix nanoseconds
	timer := time.AfterFunc(delay, func() {
		cancelled.Store(time.Now().UnixNano())
		cancel()
	})
	defer timer.Stop()
	start := time.Now()
	err := fn(ctx)
	end := time.Now()
	at := cancelled.Load()
	if at == 0 {
		t.Fatalf("finished in %v (error %v), before the cancellation at %v: the test needs a longer run", end.Sub(start), err, delay)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want one that is context.Canceled", err)
	}
	lag := end.Sub(time.Unix(0, at))
	if lag > stopLimit {
		t.Errorf("returned %v after the cancellation, want at most %v", lag, stopLimit)
	}
	return lag
}

// Every model returns the context's error for a done context, and every model with a loop
// stops within a second of a cancellation in the middle of a long prediction: 10⁵ random
// transfers of 1…1000 MB on the two-rack cluster (distinct sizes finish in distinct steps:
// seconds for every model, minutes for some), the learned models at fitted parameters
// (ackpath-alpha's α-fair sharing among them).
func TestPredictStopsWhenCancelled(t *testing.T) {
	if testing.Short() {
		t.Skip("predicts 10⁵ transfers with every model; not with -short")
	}
	cl := benchTwoRack()
	net := NewNetwork(cl, DefaultEfficiency)
	net.Learned = fittedLearned
	flows := randomFlows(cl, 100_000, 1000, 2)
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for _, m := range Models() {
		t.Run(m.Name(), func(t *testing.T) {
			if _, err := m.Predict(done, net, flows[:10]); !errors.Is(err, context.Canceled) {
				t.Errorf("with a done context: error %v, want one that is context.Canceled", err)
			}
			if m.Name() == (Hockney{}).Name() {
				return // one pass over the transfers, nothing to stop
			}
			lag := checkStops(t, 200*time.Millisecond, func(ctx context.Context) error {
				_, err := m.Predict(ctx, net, flows)
				return err
			})
			t.Logf("stopped %v after the cancellation", lag)
		})
	}
}

// An α-fair sharing of 10⁶ classes, whose iterations take a second each, stops within a
// second of a cancellation too: ackpath-alpha (at fitted parameters) on allToAll1000,
// cancelled in its first steps (the set-up takes a few tenths of a second).
func TestLargeSharingStopsWhenCancelled(t *testing.T) {
	if testing.Short() {
		t.Skip("sets up an all-to-all of 1,000 nodes; not with -short")
	}
	net, flows := allToAll1000(t)
	net.Learned = fittedLearned
	lag := checkStops(t, 2*time.Second, func(ctx context.Context) error {
		_, err := AckPathAlpha.Predict(ctx, net, flows)
		return err
	})
	t.Logf("stopped %v after the cancellation", lag)
}
