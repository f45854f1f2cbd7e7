package campaigns

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/commcal/commcal/cluster"
	"github.com/commcal/commcal/internal/badinput"
)

// entry is a valid campaign as an index file has it, with one line replaced (key = value) or
// added.
func entry(replace ...string) string {
	lines := []string{`name = "a-seed3"`, `path = "campaigns/a/a-seed3"`, `shape = "a"`, `cluster = "clusters/a.toml"`,
		`catalogue = "catalogues/catalogue-seed3.toml"`, `seed = 3`, `role = "held-out"`, `round = 2`, `measured = "2026-11-24"`,
		`use = "scored once"`}
	for _, r := range replace {
		key, _, _ := strings.Cut(r, " =")
		i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, key+" =") })
		if i < 0 {
			lines = append(lines, r)
		} else {
			lines[i] = r
		}
	}
	return "[[campaign]]\n" + strings.Join(lines, "\n") + "\n"
}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		name, index string
		want        string // a part of the error; "" for none
	}{
		{"valid", entry(), ""},
		{"options", entry(`options = "--socket-buffer 131072"`), ""},
		{"development", entry(`role = "development"`), ""},
		{"empty", "", ""},
		{"unknown key", entry(`colour = "red"`), `unknown key(s) "campaign.colour"`},
		{"no name", entry(`name = ""`), "no name"},
		{"no catalogue", entry(`catalogue = ""`), "no catalogue"},
		{"role", entry(`role = "test"`), `role "test", want "development" or "held-out"`},
		{"round", entry(`round = 0`), "round: 0, want 1 or more"},
		{"date", entry(`measured = "24/11/2026"`), `measured "24/11/2026" is not a date`},
		{"absolute", entry(`cluster = "/etc/a.toml"`), `path "/etc/a.toml" is not within`},
		{"outside", entry(`catalogue = "../catalogue.toml"`), `path "../catalogue.toml" is not within`},
		{"path and name", entry(`path = "campaigns/a/b"`), `path "campaigns/a/b" does not end in the campaign's name`},
		{"twice", entry() + entry(), `campaign[1]: a second campaign "a-seed3"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			cs, err := parse([]byte(c.index))
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("error %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("error %v, want one saying %q", err, c.want)
			case c.want == "" && c.index != "" && (len(cs) != 1 || cs[0].Seed != 3 || cs[0].Round != 2 || cs[0].Name != "a-seed3"):
				t.Fatalf("campaigns %+v", cs)
			}
		})
	}
}

// TestLoad: paths are joined to the index's directory, Find and Paths follow the file, and a
// missing file, a bad index or an unknown name is bad input naming the file.
func TestLoad(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "campaigns.toml")
	second := strings.NewReplacer(`"a-seed3"`, `"a-seed4"`, "a/a-seed3", "a/a-seed4").Replace(entry())
	if err := os.WriteFile(file, []byte(entry()+"\n"+second), 0o644); err != nil {
		t.Fatal(err)
	}
	ix, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "campaigns", "a", "a-seed3"), filepath.Join(dir, "campaigns", "a", "a-seed4")}
	if got := ix.Paths(); !slices.Equal(got, want) {
		t.Errorf("Paths %q, want %q", got, want)
	}
	c, err := ix.Find("a-seed4")
	if err != nil || c.Path != want[1] || c.Cluster != filepath.Join(dir, "clusters", "a.toml") || c.Catalogue != filepath.Join(dir, "catalogues", "catalogue-seed3.toml") {
		t.Errorf("Find: %+v, %v", c, err)
	}
	if _, err := ix.Find("b"); !badinput.Is(err) || !strings.Contains(err.Error(), file) {
		t.Errorf("Find of an unknown name: %v", err)
	}
	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(bad, []byte(entry(`round = -1`)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{bad, filepath.Join(dir, "none.toml")} {
		if _, err := Load(f); !badinput.Is(err) || !strings.Contains(err.Error(), f) {
			t.Errorf("Load(%s): %v, want bad input naming the file", f, err)
		}
	}
}

// TestCommitted checks the committed index against the tree: every dataset directory under
// campaigns/ is indexed, every campaign's directory holds a dataset measured on its shape's
// cluster, its cluster file describes that cluster and its catalogue has its seed.
func TestCommitted(t *testing.T) {
	ix, err := LoadCommitted(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := filepath.Glob(filepath.Join("..", "..", "data", "tcp", "campaigns", "*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(dirs)
	indexed := slices.Sorted(slices.Values(ix.Paths()))
	if len(dirs) < 50 || !slices.Equal(dirs, indexed) {
		t.Fatalf("dataset directories %q, indexed %q", dirs, indexed)
	}
	for _, c := range ix.Campaigns {
		var m struct {
			Cluster struct {
				Name string `json:"name"`
			} `json:"cluster"`
		}
		data, err := os.ReadFile(filepath.Join(c.Path, "manifest.json"))
		if err == nil {
			err = json.Unmarshal(data, &m)
		}
		if err != nil || m.Cluster.Name != c.Shape || filepath.Base(filepath.Dir(c.Path)) != c.Shape {
			t.Errorf("%s: manifest's cluster %q (%v), shape %q", c.Path, m.Cluster.Name, err, c.Shape)
		}
		if cl, err := cluster.Load(c.Cluster); err != nil {
			t.Errorf("%s: %v", c.Name, err)
		} else if cl.Name() != c.Shape {
			t.Errorf("%s: cluster %s is %q, shape %q", c.Name, c.Cluster, cl.Name(), c.Shape)
		}
		var cat struct {
			Seed uint64 `toml:"seed"`
		}
		if _, err := toml.DecodeFile(c.Catalogue, &cat); err != nil || cat.Seed != c.Seed {
			t.Errorf("%s: catalogue %s has seed %d (%v), the index %d", c.Name, c.Catalogue, cat.Seed, err, c.Seed)
		}
	}
}

// FuzzParse: no index, however malformed, makes the parser panic, and what it accepts passes
// the checks again.
func FuzzParse(f *testing.F) {
	f.Add([]byte(entry()))
	f.Add([]byte(entry(`options = "x"`) + entry(`name = "b"`, `path = "b"`)))
	if data, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(Committed))); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cs, err := parse(data)
		if err != nil {
			return
		}
		for _, c := range cs {
			if err := c.check(); err != nil {
				t.Fatalf("accepted %+v: %v", c, err)
			}
		}
	})
}
