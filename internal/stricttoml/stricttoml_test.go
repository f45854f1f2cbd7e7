package stricttoml

import (
	"strings"
	"testing"
)

func TestDecode(t *testing.T) {
	var v struct {
		A struct {
			B int `toml:"b"`
		} `toml:"a"`
	}
	if err := Decode([]byte("a = { b = 3 }\n"), &v); err != nil || v.A.B != 3 {
		t.Fatalf("%+v, %v", v, err)
	}
	if err := Decode([]byte("a = { b = 3, c = 1 }\nd = 2\n"), &v); err == nil || err.Error() != `unknown key(s) "a.c", "d"` {
		t.Errorf("unknown keys: %v", err)
	}
	if err := Decode([]byte("a = [\n"), &v); err == nil || strings.ContainsAny(err.Error(), "\r\n") {
		t.Errorf("syntax error %q is not one line", err)
	}
}
