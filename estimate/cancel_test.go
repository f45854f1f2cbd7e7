package estimate

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/commcal/commcal/contention"
)

// checkCounter is a context that counts the looks at it (Err) and is cancelled at look
// cancelAt (0: never), which it still answers as live: the code under test runs on to its
// next look, as it would after a signal arriving just after one. Cancelling at a given look
// lands in the middle of a fit however fast the machine is.
type checkCounter struct {
	context.Context
	cancel    context.CancelFunc
	cancelAt  int64
	checks    atomic.Int64
	cancelled atomic.Int64 // when, in Unix nanoseconds
}

func newCheckCounter(t *testing.T, cancelAt int64) *checkCounter {
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	return &checkCounter{Context: ctx, cancel: cancel, cancelAt: cancelAt}
}

func (c *checkCounter) Err() error {
	if c.checks.Add(1) == c.cancelAt {
		c.cancelled.Store(time.Now().UnixNano())
		c.cancel()
		return nil
	}
	return c.Context.Err()
}

// A learned model's fit and a calibration, cancelled at a quarter, half and three quarters of
// the looks at their context that a whole run takes, return within a second with an error
// that is context.Canceled, and the calibration returns no calibration; so does a calibration
// given a done context. The fits run on TestFitLearnedRecoversAlpha's campaign.
func TestFitStopsWhenCancelled(t *testing.T) {
	cl, rows, base := alphaCampaign(t, 0.6, 0.7, 95e6, 97e6)
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if cal, err := Calibrate(done, cl, Inputs{Transfers: rows}, base, false); cal != nil || !errors.Is(err, context.Canceled) {
		t.Errorf("Calibrate with a done context: %v, %v; want no calibration and an error that is context.Canceled", cal, err)
	}
	for _, tc := range []struct {
		name string
		run  func(ctx context.Context) (any, error)
	}{
		{"FitLearned", func(ctx context.Context) (any, error) {
			return FitLearned(ctx, cl, rows, base, contention.AckPathAlpha)
		}},
		{"Calibrate", func(ctx context.Context) (any, error) {
			return Calibrate(ctx, cl, Inputs{Transfers: rows}, base, false)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			whole := newCheckCounter(t, 0)
			if _, err := tc.run(whole); err != nil {
				t.Fatal(err)
			}
			n := whole.checks.Load()
			if n < 100 {
				t.Fatalf("a whole run looks at its context %d times: too few to stop it in the middle", n)
			}
			for _, at := range []int64{n / 4, n / 2, 3 * n / 4} {
				ctx := newCheckCounter(t, at)
				out, err := tc.run(ctx)
				lag := time.Since(time.Unix(0, ctx.cancelled.Load()))
				if !errors.Is(err, context.Canceled) || !isNil(out) {
					t.Errorf("cancelled at look %d of %d: a %T and error %v; want none and an error that is context.Canceled", at, n, out, err)
				} else if lag > time.Second {
					t.Errorf("cancelled at look %d of %d: returned %v later, want at most 1s", at, n, lag)
				}
			}
		})
	}
}

// isNil says whether v holds a nil pointer (or nothing).
func isNil(v any) bool {
	switch p := v.(type) {
	case *LearnedFit:
		return p == nil
	case *Calibration:
		return p == nil
	}
	return v == nil
}
