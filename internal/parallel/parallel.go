// Package parallel runs independent work items on all cores and keeps results in item order,
// so that a parallel run gives the same output, byte for byte, as a serial one.
package parallel

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// For calls fn(i) for i in [0, n) on up to workers goroutines (GOMAXPROCS when workers < 1)
// and returns the error of the lowest index that failed, or ctx's error; it stops handing
// out items after a failure or cancellation. fn writes its result to slot i of a slice the
// caller made, so the order of results never depends on scheduling.
func For(ctx context.Context, n, workers int, fn func(i int) error) error {
	if workers < 1 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, n)
	if workers <= 1 {
		for i := range n {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(i); err != nil {
				return err
			}
		}
		return nil
	}
	var (
		next    atomic.Int64
		stop    atomic.Bool
		mu      sync.Mutex
		firstI  = n
		firstEr error
		wg      sync.WaitGroup
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				err := ctx.Err()
				if err == nil {
					err = fn(i)
				}
				if err != nil {
					mu.Lock()
					if i < firstI {
						firstI, firstEr = i, err
					}
					mu.Unlock()
					stop.Store(true)
				}
			}
		}()
	}
	wg.Wait()
	return firstEr
}
