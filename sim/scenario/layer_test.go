package scenario

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// suggestPackage, the one package of cachelab's this one imports: the
// "did you mean" for an unknown command, shared with the CLI's for an
// unknown scenario name. It imports nothing but the standard library
// (TestSuggestIsALeaf).
const suggestPackage = "github.com/cachelab/cachelab/internal/suggest"

// A scenario is data: this package sits below the runner (package sim)
// and imports none of what a run needs, so that a reader learns what a
// scenario may say without reading how one runs (doc.go). Of cachelab's
// own packages it imports only suggestPackage.
func TestImportsNothingARunNeeds(t *testing.T) {
	forbidden := []string{"github.com/cachelab/cachelab/", "go.etcd.io/", "k8s.io/client-go", "k8s.io/apiserver"}
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if path == suggestPackage {
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

// suggestPackage, which TestImportsNothingARunNeeds lets this package
// import, imports nothing but the standard library: nothing through it
// can bring in what a run needs.
func TestSuggestIsALeaf(t *testing.T) {
	files, _ := filepath.Glob("../../internal/suggest/*.go")
	if len(files) == 0 {
		t.Fatal("no files in internal/suggest")
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if first, _, _ := strings.Cut(path, "/"); strings.Contains(first, ".") {
				t.Errorf("%s imports %s: a package outside the standard library", f, path)
			}
		}
	}
}
