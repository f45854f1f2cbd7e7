package badinput

import (
	"errors"
	"fmt"
	"testing"
)

type marked struct{ msg string }

func (m marked) Error() string { return m.msg }
func (marked) BadInput()       {}

func TestWrap(t *testing.T) {
	plain := errors.New("unexpected end of JSON input")
	for _, tc := range []struct {
		file string
		err  error
		want string
	}{
		{"p.json", plain, "p.json: unexpected end of JSON input"},
		{"p.json", marked{"latency_s: -1 is negative"}, "p.json: latency_s: -1 is negative"},
		{"p.json", marked{"p.json: line 2: bad"}, "p.json: line 2: bad"},
		{"", plain, "unexpected end of JSON input"},
	} {
		got := Wrap(tc.file, tc.err)
		if got.Error() != tc.want || !Is(got) {
			t.Errorf("Wrap(%q, %q) = %q (bad input %v), want %q", tc.file, tc.err, got, Is(got), tc.want)
		}
	}
	if Wrap("x", nil) != nil {
		t.Error("Wrap of nil is not nil")
	}
	if Is(plain) || Is(fmt.Errorf("context: %w", plain)) || !Is(fmt.Errorf("context: %w", Errorf("f", "bad"))) {
		t.Error("Is misclassifies")
	}
}
