package scenario

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A scenario is data: this package sits below the runner (package sim)
// and imports none of what a run needs, so that a reader learns what a
// scenario may say without reading how one runs (doc.go).
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
			for _, p := range forbidden {
				if strings.HasPrefix(path, p) {
					t.Errorf("%s imports %s: package scenario may not depend on the runner, the world, etcd, client-go or the informers", f, path)
				}
			}
		}
	}
}
