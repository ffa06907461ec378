package lab

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// What every chapter's lab must have, so that CI proves it both ways and
// a learner's lab command shows the learner's sheet alone (issue 47).
// These tests read the chapters' exercise directories, as
// cells/prose_test.go reads their READMEs.

// exercises are the chapters' exercise directories.
func exercises(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob("../../0*/exercise")
	if err != nil || len(dirs) < 9 {
		t.Fatalf("found %d exercise directories (%v), want one per chapter", len(dirs), err)
	}
	return dirs
}

// The lab command a chapter prints (go test -tags lab -v
// ./notebooks/<chapter>/exercise) runs the learner's lab and nothing
// else: the maintainers' tests (TestSolutionPasses, TestSkeletonFails,
// ...) are built only without the lab tag, so that no "--- PASS:
// TestSolutionPasses" above the sheet reads as the learner's result.
// Without the tag, as CI runs them, they are all there, and the lab is
// not (it fails on the skeleton).
func TestTheLabCommandRunsOnlyTheLab(t *testing.T) {
	for _, dir := range exercises(t) {
		t.Run(dir, func(t *testing.T) {
			if got := testsOf(t, dir, "lab"); !slices.Equal(got, []string{"TestLab"}) {
				t.Errorf("go test -tags lab runs %v, want [TestLab] alone", got)
			}
			got := testsOf(t, dir)
			for _, want := range []string{"TestSolutionPasses", "TestSkeletonFails"} {
				if !slices.Contains(got, want) {
					t.Errorf("go test (CI) runs %v, without %s", got, want)
				}
			}
			if slices.Contains(got, "TestLab") {
				t.Errorf("go test (CI) runs TestLab, which fails on the skeleton")
			}
		})
	}
}

// testsOf are the Test functions go test builds in dir with tags (TestMain
// aside), sorted.
func testsOf(t *testing.T, dir string, tags ...string) []string {
	t.Helper()
	ctx := build.Default
	ctx.BuildTags = tags
	pkg, err := ctx.ImportDir(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	var tests []string
	fset := token.NewFileSet()
	for _, name := range append(pkg.TestGoFiles, pkg.XTestGoFiles...) {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Test") && fn.Name.Name != "TestMain" {
				tests = append(tests, fn.Name.Name)
			}
		}
	}
	slices.Sort(tests)
	return tests
}
