package campaigns

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/commcal/commcal/internal/badinput"
	"github.com/commcal/commcal/internal/stricttoml"
)

// Committed is the index of the TCP campaigns committed with commcal, relative to the
// module's root.
const Committed = "data/tcp/campaigns.toml"

// Role says how a campaign's dataset was used.
type Role string

const (
	// Development datasets are read while models are built and selected.
	Development Role = "development"
	// HeldOut datasets are not read until the model they test is committed, then scored once.
	HeldOut Role = "held-out"
)

// Campaign is one dataset of an index. In the file Path, Cluster and Catalogue are relative
// to the index's directory, with slashes; Load joins them to it, so that they open from the
// working directory.
type Campaign struct {
	// Name is the dataset's name, its directory's base name.
	Name string `toml:"name"`
	// Path is the dataset's directory.
	Path string `toml:"path"`
	// Shape names the cluster shape the campaign was measured on (its cluster's name).
	Shape string `toml:"shape"`
	// Cluster and Catalogue are the files commcal measure was given.
	Cluster   string `toml:"cluster"`
	Catalogue string `toml:"catalogue"`
	// Seed is the catalogue's seed, which draws its random patterns.
	Seed uint64 `toml:"seed"`
	// Role and Round: developed on from Round on, or held out for Round's model.
	Role  Role `toml:"role"`
	Round int  `toml:"round"`
	// Measured is the day of the measurement, YYYY-MM-DD.
	Measured string `toml:"measured"`
	// Options are the measurement's settings beyond the cluster and catalogue, if any.
	Options string `toml:"options"`
	// Use says what the dataset was used for.
	Use string `toml:"use"`
}

// Index is an index file's campaigns, in its order.
type Index struct {
	File      string
	Campaigns []Campaign
}

// Load reads and checks the index file; its campaigns' paths are joined to its directory. A
// file that is missing or not a valid index is bad input.
func Load(file string) (*Index, error) {
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, badinput.Errorf(file, "campaigns: no such file")
	} else if err != nil {
		return nil, fmt.Errorf("campaigns: %w", err)
	}
	cs, err := parse(data)
	if err != nil {
		return nil, badinput.Errorf(file, "campaigns: %w", err)
	}
	dir := filepath.Dir(file)
	for i := range cs {
		c := &cs[i]
		c.Path, c.Cluster, c.Catalogue = join(dir, c.Path), join(dir, c.Cluster), join(dir, c.Catalogue)
	}
	return &Index{File: file, Campaigns: cs}, nil
}

// LoadCommitted reads the committed index (Committed) of the module whose root is root: ".."
// from a package's directory, where its tests run.
func LoadCommitted(root string) (*Index, error) {
	return Load(filepath.Join(root, filepath.FromSlash(Committed)))
}

// CommittedCampaign is the campaign called name in the committed index under root.
func CommittedCampaign(root, name string) (Campaign, error) {
	ix, err := LoadCommitted(root)
	if err != nil {
		return Campaign{}, err
	}
	return ix.Find(name)
}

// Find is the campaign called name.
func (ix *Index) Find(name string) (Campaign, error) {
	for _, c := range ix.Campaigns {
		if c.Name == name {
			return c, nil
		}
	}
	return Campaign{}, badinput.Errorf(ix.File, "campaigns: no campaign %q", name)
}

// Paths are the campaigns' dataset directories, in the index's order.
func (ix *Index) Paths() []string {
	paths := make([]string, len(ix.Campaigns))
	for i, c := range ix.Campaigns {
		paths[i] = c.Path
	}
	return paths
}

// parse decodes an index and checks every campaign, and that no two share a name.
func parse(data []byte) ([]Campaign, error) {
	var doc struct {
		Campaign []Campaign `toml:"campaign"`
	}
	if err := stricttoml.Decode(data, &doc); err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(doc.Campaign))
	for i, c := range doc.Campaign {
		if err := c.check(); err != nil {
			return nil, fmt.Errorf("campaign[%d] %q: %w", i, c.Name, err)
		}
		if seen[c.Name] {
			return nil, fmt.Errorf("campaign[%d]: a second campaign %q", i, c.Name)
		}
		seen[c.Name] = true
	}
	return doc.Campaign, nil
}

// check says what is missing or wrong in a campaign as the file has it.
func (c Campaign) check() error {
	for _, f := range []struct{ key, value string }{{"name", c.Name}, {"path", c.Path}, {"shape", c.Shape}, {"cluster", c.Cluster}, {"catalogue", c.Catalogue}} {
		if f.value == "" {
			return fmt.Errorf("no %s", f.key)
		}
	}
	for _, p := range []string{c.Path, c.Cluster, c.Catalogue} {
		if !filepath.IsLocal(filepath.FromSlash(p)) {
			return fmt.Errorf("path %q is not within the index's directory", p)
		}
	}
	if filepath.Base(filepath.FromSlash(c.Path)) != c.Name {
		return fmt.Errorf("path %q does not end in the campaign's name", c.Path)
	}
	if c.Role != Development && c.Role != HeldOut {
		return fmt.Errorf("role %q, want %q or %q", c.Role, Development, HeldOut)
	}
	if c.Round < 1 {
		return fmt.Errorf("round: %d, want 1 or more", c.Round)
	}
	if _, err := time.Parse(time.DateOnly, c.Measured); err != nil {
		return fmt.Errorf("measured %q is not a date (YYYY-MM-DD)", c.Measured)
	}
	return nil
}

// join is p, relative to the index's directory dir with slashes, as a path from the working
// directory.
func join(dir, p string) string { return filepath.Join(dir, filepath.FromSlash(p)) }
