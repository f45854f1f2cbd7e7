package schedule

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/commcal/commcal/internal/badinput"
)

func TestParse(t *testing.T) {
	s, err := Parse("alltoall:4e6:ranks=12:alg=pairwise", nodes(20))
	if err != nil || s.Algorithm != "pairwise" || len(s.Ranks) != 12 || s.Ranks[11] != "n11" || len(s.Rounds) != 11 || s.Bytes != 4e6 {
		t.Fatalf("named: %+v, %v", s, err)
	}
	s, err = Parse("alltoall:4e6:alg=auto:openmpi", nodes(12))
	if err != nil || s.Algorithm != "linear" || len(s.Ranks) != 12 || !strings.HasPrefix(s.Rule, "Open MPI 4.1.8 tuned fixed rule") {
		t.Fatalf("auto: %+v, %v", s, err)
	}
	s, err = Parse("bcast:1e6:root=3:ppn=2:ranks=8:alg=auto:openmpi", nodes(4))
	if err != nil || s.Root != 3 ||
		!slices.Equal(s.Ranks, []string{"n0", "n0", "n1", "n1", "n2", "n2", "n3", "n3"}) {
		t.Fatalf("ppn and root: %+v, %v", s, err)
	}
	if s, err = Parse("gather:100:ppn=3:alg=binomial", nodes(2)); err != nil || len(s.Ranks) != 6 {
		t.Fatalf("every node's ranks: %+v, %v", s, err)
	}
	// An Alltoallv's ranks are its matrix's columns, in order.
	matrix := filepath.Join(t.TempDir(), "sizes.csv")
	os.WriteFile(matrix, []byte("src,n2,n0,n1\nn0,10,0,20\nn1,5,7,0\nn2,0,1,2\n"), 0o644)
	s, err = Parse("alltoallv:"+matrix+":alg=pairwise", nodes(3))
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float64{{0, 1, 2}, {10, 0, 20}, {5, 7, 0}} // rows and columns n2, n0, n1
	if !slices.Equal(s.Ranks, []string{"n2", "n0", "n1"}) || !slices.EqualFunc(s.Sizes, want, slices.Equal) {
		t.Errorf("alltoallv: ranks %v, sizes %v, want %v", s.Ranks, s.Sizes, want)
	}
	if got := rounds(s); !slices.EqualFunc(got, spell("0>1:1 1>2:20 2>0:5", "0>2:2 1>0:10 2>1:7"), slices.Equal) {
		t.Errorf("alltoallv rounds %v", got)
	}
}

// Mistakes in a spec are bad input that quotes the spec and says what was wanted.
func TestParseRefuses(t *testing.T) {
	matrix := filepath.Join(t.TempDir(), "m.csv")
	os.WriteFile(matrix, []byte("src,n0,zz\nn0,0,1\nzz,1,0\n"), 0o644)
	for spec, want := range map[string]string{
		"alltoall":                                    "want OP:BYTES:alg=NAME",
		"alltoall:4e6":                                "want OP:BYTES:alg=NAME",
		"allreduce:4e6:alg=ring":                      "unknown collective \"allreduce\"",
		"alltoall:4e6:ranks=4":                        "no algorithm: want alg=NAME (linear, pairwise",
		"alltoall:4e6:alg=auto":                       "alg=auto names no library",
		"alltoall:4e6:alg=auto:intel":                 "unknown library \"intel\"",
		"alltoall:4e6:alg=ring":                       "alltoall has no algorithm \"ring\"",
		"alltoall:4e6:alg=pairwise:mpich":             "\"mpich\" is not key=value (a library follows alg=auto only)",
		"alltoall:4e6:alg=linear:alg=bruck":           "key \"alg\" given twice",
		"alltoall:4e6:alg=":                           "key \"alg\" has no value",
		"alltoall:4e6:colour=3:alg=linear":            "unknown key \"colour\"",
		"alltoall:-1:alg=linear":                      "size \"-1\" is outside 1 to",
		"alltoall:1.5:alg=linear":                     "is not a whole number of bytes",
		"alltoall:4e6:root=1:alg=linear":              "alltoall has no root",
		"bcast:4e6:root=x:alg=linear":                 "root \"x\" is not a rank",
		"bcast:4e6:root=9:alg=linear":                 "root 9 outside the ranks 0 to 5",
		"alltoall:4e6:ranks=1:alg=linear":             "ranks \"1\", want 2 to 6",
		"alltoall:4e6:ranks=7:alg=linear":             "ranks \"7\", want 2 to 6 (6 nodes × 1 per node)",
		"alltoall:4e6:ppn=0:alg=linear":               "ppn \"0\", want 1 to 1024",
		"alltoall:4e6:ppn=600:alg=linear":             "makes up to",
		"alltoallv:/nonexistent.csv:alg=linear":       "/nonexistent.csv",
		"alltoallv:" + matrix + ":ranks=2:alg=linear": "no ranks or ppn",
		"alltoallv:" + matrix + ":alg=linear":         "\"zz\" is not a node of the cluster",
	} {
		_, err := Parse(spec, nodes(6))
		if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want bad input saying %q", spec, err, want)
			continue
		}
		if !strings.HasPrefix(spec, "alltoallv") && !strings.Contains(err.Error(), badinput.Quote(spec)) {
			t.Errorf("Parse(%q): %v does not quote the spec", spec, err)
		}
	}
	if _, err := Parse("alltoall:1:ppn=1000:alg=bruck", nodes(300)); err == nil || !strings.Contains(err.Error(), "300000 ranks on 300 nodes, want 2 to 262144") {
		t.Errorf("300,000 ranks: %v", err)
	}
}

// Parse never panics, and what it accepts is a schedule of at least two ranks whose transfers
// join two of them with a positive size.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{"alltoall:4e6:ranks=4:alg=pairwise", "bcast:1e6:root=3:ppn=2:alg=auto:mpich",
		"reduce_scatter:10:alg=auto:openmpi", "allgather:7:alg=neighbor-exchange", "scatter:1:ranks=5:alg=binomial",
		"alltoall:1e3:alg=auto:openmpi:ranks=3", "gather:0:alg=linear"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		if strings.HasPrefix(spec, "alltoallv") {
			return // reads the file it names
		}
		s, err := Parse(spec, nodes(6))
		if err != nil {
			if !badinput.Is(err) {
				t.Fatalf("Parse(%q): %v is not bad input", spec, err)
			}
			return
		}
		if len(s.Ranks) < 2 || s.Algorithm == "" || s.Rule == "" {
			t.Fatalf("Parse(%q) = %+v", spec, s)
		}
		for _, round := range s.Rounds {
			for _, tr := range round {
				if tr.Src == tr.Dst || tr.Src < 0 || tr.Dst < 0 || tr.Src >= len(s.Ranks) || tr.Dst >= len(s.Ranks) || !(tr.Bytes > 0) {
					t.Fatalf("Parse(%q): transfer %+v", spec, tr)
				}
			}
		}
	})
}

// A choice of algorithm is one of the collective's algorithms or auto:LIBRARY; ExpandChoice
// expands by either, and refuses what CheckChoice refuses.
func TestChoice(t *testing.T) {
	c := Collective{Op: Alltoall, Ranks: []string{"a", "b", "c", "d"}, Bytes: 1e6}
	for choice, want := range map[string]string{
		"pairwise":     "",
		"auto:openmpi": "",
		"auto:mpich":   "",
		"auto:lam":     `unknown library "lam"`,
		"auto:":        `unknown library ""`,
		"ring":         `alltoall has no algorithm "ring"`,
		"":             `alltoall has no algorithm ""`,
	} {
		err := CheckChoice(Alltoall, choice)
		s, xerr := ExpandChoice(c, choice)
		switch {
		case want == "" && (err != nil || xerr != nil):
			t.Errorf("%q: check %v, expand %v; want it accepted", choice, err, xerr)
		case want == "" && strings.HasPrefix(choice, AutoPrefix) == (s.Rule == "named by the user"):
			t.Errorf("%q: rule %q", choice, s.Rule)
		case want != "" && (err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), want)):
			t.Errorf("%q: check %v, want bad input saying %s", choice, err, want)
		case want != "" && (xerr == nil || !badinput.Is(xerr)):
			t.Errorf("%q: expand %v, want bad input", choice, xerr)
		}
	}
	if err := CheckChoice("allreduce", "ring"); err == nil || !strings.Contains(err.Error(), `unknown collective "allreduce"`) {
		t.Errorf("an unknown collective: %v", err)
	}
}
