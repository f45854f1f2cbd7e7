package parallel

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestForKeepsOrderAndFirstError(t *testing.T) {
	for _, workers := range []int{0, 1, 3, 64} {
		out := make([]int, 1000)
		if err := For(context.Background(), len(out), workers, func(i int) error { out[i] = i * i; return nil }); err != nil {
			t.Fatal(err)
		}
		for i, v := range out {
			if v != i*i {
				t.Fatalf("workers %d: slot %d holds %d", workers, i, v)
			}
		}
		err := For(context.Background(), 100, workers, func(i int) error {
			if i%10 == 7 {
				return fmt.Errorf("item %d", i)
			}
			return nil
		})
		if err == nil || err.Error() != "item 7" {
			t.Errorf("workers %d: error %v, want the lowest failing item's", workers, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := For(ctx, 10, 2, func(int) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
