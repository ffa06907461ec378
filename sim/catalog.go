package sim

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
)

// The built-in scenarios: a catalog of walkthroughs, each answering a
// question people ask about informers.
//
//go:embed scenarios/*.txt
var builtin embed.FS

// Catalog returns the built-in scenarios, sorted by name.
func Catalog() ([]*Scenario, error) {
	entries, err := fs.ReadDir(builtin, "scenarios")
	if err != nil {
		return nil, err
	}
	var out []*Scenario
	for _, e := range entries {
		src, err := builtin.ReadFile(path.Join("scenarios", e.Name()))
		if err != nil {
			return nil, err
		}
		sc, err := Parse(path.Join("sim", "scenarios", e.Name()), src)
		if err != nil {
			return nil, err
		}
		out = append(out, sc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Load finds a scenario: a built-in one by name, or else a file.
func Load(nameOrFile string) (*Scenario, error) {
	if !strings.ContainsAny(nameOrFile, `/\.`) {
		cat, err := Catalog()
		if err != nil {
			return nil, err
		}
		var names []string
		for _, sc := range cat {
			if sc.Name == nameOrFile {
				return sc, nil
			}
			names = append(names, sc.Name)
		}
		if _, err := os.Stat(nameOrFile); err != nil {
			return nil, fmt.Errorf("no built-in scenario %q and no such file; built-in: %s", nameOrFile, strings.Join(names, ", "))
		}
	}
	src, err := os.ReadFile(nameOrFile)
	if err != nil {
		return nil, err
	}
	return Parse(nameOrFile, src)
}
