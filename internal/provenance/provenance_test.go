package provenance

import (
	"testing"
	"time"
)

func TestCreatedHonoursSourceDateEpoch(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1795219200")
	got, err := Created()
	if err != nil || !got.Equal(time.Unix(1795219200, 0)) {
		t.Errorf("Created() = %v, %v", got, err)
	}
	t.Setenv("SOURCE_DATE_EPOCH", "yesterday")
	if _, err := Created(); err == nil {
		t.Error("a non-numeric SOURCE_DATE_EPOCH was accepted")
	}
}
