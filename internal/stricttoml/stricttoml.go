// Package stricttoml decodes TOML the way commcal reads every TOML input (cluster
// descriptions, catalogues): a key the target does not know is an error naming it, and the
// decoder's errors are kept on one line.
package stricttoml

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// Decode decodes data into v, refusing unknown keys ("unknown key(s) "a.b", "c"").
func Decode(data []byte, v any) error {
	md, err := toml.Decode(string(data), v)
	if err != nil {
		return errors.New(strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(err.Error()))
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = strconv.Quote(k.String())
		}
		return fmt.Errorf("unknown key(s) %s", strings.Join(keys, ", "))
	}
	return nil
}
