package provenance

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

// Version is commcal's version, written into every output. Release builds set it with
// -ldflags "-X github.com/commcal/commcal/internal/provenance.Version=v1.2.3".
var Version = "0.1.0-dev"

// Created is the creation time written into outputs: now, or SOURCE_DATE_EPOCH (seconds since
// 1970, the reproducible-builds convention) when it is set, so that the same input gives
// byte-identical outputs.
func Created() (time.Time, error) {
	v, ok := os.LookupEnv("SOURCE_DATE_EPOCH")
	if !ok || v == "" {
		return time.Now().UTC().Truncate(time.Second), nil
	}
	sec, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("provenance: SOURCE_DATE_EPOCH=%q is not a whole number of seconds", v)
	}
	return time.Unix(sec, 0).UTC(), nil
}
