package lab

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
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
	dirs, err := filepath.Glob("../../[0-9]*/exercise")
	if err != nil || len(dirs) < 10 {
		t.Fatalf("found %d exercise directories (%v), want one per chapter", len(dirs), err)
	}
	return dirs
}

// learnerFiles are the files of dir a learner writes: those solution/
// holds an answer to (its doc.go aside, which only names the package).
func learnerFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, "solution"))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		if !e.IsDir() && e.Name() != "doc.go" {
			files = append(files, e.Name())
		}
	}
	return files
}

// Each file a learner writes is kept, as it is handed out, in the
// exercise's skeleton/ directory, which TestSkeletonFails checks fails
// the lab: a copy that neither a learner's work nor a maintainer's
// comment can take out of CI's proof, as a hash of the learner's file
// did. The copy must still be the learner's file: the same Go tokens
// (comments and the package's name aside), or for a story the same
// bytes. Where the learner's file differs, git says whose it is: changed
// since the last commit, it is a learner's work (or a maintainer's not
// yet committed), and the test steps aside; as committed, the copy is
// out of date, and the test fails.
func TestSkeletonCopiesAreTheLearnersFiles(t *testing.T) {
	for _, dir := range exercises(t) {
		for _, name := range learnerFiles(t, dir) {
			file := filepath.Join(dir, name)
			shown := "notebooks/" + strings.TrimPrefix(file, "../../")
			t.Run(shown, func(t *testing.T) {
				diff := differs(t, dir, name, filepath.Join("skeleton", name))
				if diff == "" {
					return
				}
				switch changed, err := changedInGit(file); {
				case err != nil:
					t.Skipf("%s is not the skeleton (%s), and git cannot say whether it is your work: %v", shown, diff, err)
				case changed:
					t.Skipf("%s has changes since the last commit: it is your work (TestSkeletonFails checks the skeleton through skeleton/%s)", shown, name)
				default:
					t.Errorf("%s is as committed, but skeleton/%s, the skeleton TestSkeletonFails checks, is not a copy of it (%s): copy its code there, comments aside. (If you committed your own work to %s, this is not about it: restore the skeleton to run the maintainers' tests.)", shown, name, diff, name)
				}
			})
		}
	}
}

// differs says where file and copied (both in dir) first differ, or ""
// if they do not: Go files token by token, comments and the package's
// name aside; other files byte for byte.
func differs(t *testing.T, dir, file, copied string) string {
	t.Helper()
	a, b := read(t, filepath.Join(dir, file)), read(t, filepath.Join(dir, copied))
	if filepath.Ext(file) != ".go" {
		if string(a) != string(b) {
			return "their bytes differ"
		}
		return ""
	}
	return tokensDiffer(file, a, copied, b)
}

func read(t *testing.T, file string) []byte {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// changedInGit reports whether git has file as changed since the last
// commit (or untracked); an error when git cannot say (no git, or not a
// checkout: the module's zip has no .git).
func changedInGit(file string) (bool, error) {
	out, err := exec.Command("git", "status", "--porcelain", "--", file).Output()
	if err != nil {
		return false, err
	}
	return len(out) > 0, nil
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
