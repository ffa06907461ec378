package scenario

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// leaves are the packages of cachelab's this one imports: the "did you
// mean" for an unknown command, shared with the CLI's for an unknown
// scenario name; and the levers, what each command acts on and so where
// it can run. Each imports nothing but the standard library
// (TestLeavesAreLeaves).
var leaves = map[string]string{
	"github.com/cachelab/cachelab/internal/suggest": "../../internal/suggest",
	"github.com/cachelab/cachelab/sim/lever":        "../lever",
}

// A scenario is data: this package sits below the runner (package sim)
// and imports none of what a run needs, so that a reader learns what a
// scenario may say without reading how one runs (doc.go). Of cachelab's
// own packages it imports only leaves.
func TestImportsNothingARunNeeds(t *testing.T) {
	forbidden := []string{"github.com/cachelab/cachelab/", "go.etcd.io/", "k8s.io/client-go", "k8s.io/apiserver"}
	for f, paths := range imports(t, ".") {
		for _, path := range paths {
			if _, ok := leaves[path]; ok {
				continue
			}
			for _, p := range forbidden {
				if strings.HasPrefix(path, p) {
					t.Errorf("%s imports %s: package scenario may not depend on the runner, the world, etcd, client-go or the informers", f, path)
				}
			}
		}
	}
}

// The leaves, which TestImportsNothingARunNeeds lets this package
// import, import nothing but the standard library: nothing through them
// can bring in what a run needs.
func TestLeavesAreLeaves(t *testing.T) {
	for pkg, dir := range leaves {
		files := imports(t, dir)
		if len(files) == 0 {
			t.Fatalf("no files in %s (%s)", dir, pkg)
		}
		for f, paths := range files {
			for _, path := range paths {
				if first, _, _ := strings.Cut(path, "/"); strings.Contains(first, ".") {
					t.Errorf("%s imports %s: a package outside the standard library", f, path)
				}
			}
		}
	}
}

// imports are the import paths of each non-test Go file in dir.
func imports(t *testing.T, dir string) map[string][]string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	out := map[string][]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		out[f] = []string{}
		for _, imp := range ast.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			out[f] = append(out[f], path)
		}
	}
	return out
}
