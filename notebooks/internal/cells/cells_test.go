package cells

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const chapterTest = `package ch_test

import "fmt"

// greet is a helper.
func greet() string { return "hello" }

func ExampleGreet() {
	fmt.Println(greet())
	// Output:
	// hello
}

func ExampleUnshown() {
	// Output:
}
`

const readme = "# Chapter\n\n<!-- cell: ExampleGreet -->\n<!-- end -->\n\n<!-- source: greet -->\n<!-- end -->\n\n<!-- cell: ExampleMissing -->\n<!-- end -->\n"

// A README out of step with its cells is reported, block by block; -update
// rewrites it so that it is in step.
func TestCompare(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("ch_test.go", chapterTest)
	write("README.md", readme)
	problems, err := Compare(dir, dir, false)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(problems, "\n")
	for _, want := range []string{
		`cell "ExampleGreet" differs from its source`,
		`source "greet" differs from its source`,
		`cell "ExampleMissing": no such function`,
		`ExampleUnshown is a cell of this chapter but README.md does not show it`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q; got:\n%s", want, got)
		}
	}
	if _, err := Compare(dir, dir, true); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "README.md"))
	if !strings.Contains(string(b), "```go\nfmt.Println(greet())\n```\nOutput:\n```\nhello\n```\n") {
		t.Errorf("rewritten README lacks the cell:\n%s", b)
	}
	problems, _ = Compare(dir, dir, false)
	if len(problems) != 2 { // the missing Example, and the unshown one
		t.Errorf("after the rewrite, got %d problems, want 2: %v", len(problems), problems)
	}
}

// A diagram block is drawn from a run of its scenario: an empty or stale
// one is reported, -update draws it, and a marker naming no scenario or a
// malformed object is reported too.
func TestCompareDiagram(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "README.md")
	write := func(text string) {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("# Chapter\n\n<!-- mermaid: add-update-delete --object ns0/b -->\n<!-- end -->\n" +
		"<!-- mermaid: no-such-scenario -->\n<!-- end -->\n<!-- mermaid: add-update-delete --object ns0 -->\n<!-- end -->\n")
	problems, err := Compare(dir, dir, false)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(problems, "\n")
	for _, want := range []string{`mermaid "add-update-delete" differs from its source`, `mermaid "no-such-scenario": no built-in scenario`,
		`mermaid "add-update-delete": trace: object "ns0": want namespace/name`} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q; got:\n%s", want, got)
		}
	}
	if _, err := Compare(dir, dir, true); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	drawn := string(b)
	if !strings.Contains(drawn, "<!-- mermaid: add-update-delete --object ns0/b -->\n```mermaid\n%% cachelab ") ||
		!strings.Contains(drawn, "    api->>refl: w1 ns0/b@5 DELETED\n") {
		t.Fatalf("-update did not draw the diagram:\n%s", drawn)
	}
	write(strings.Replace(drawn, "ns0/b@5 DELETED", "ns0/b@6 DELETED", 1)) // a trace that has changed since
	problems, _ = Compare(dir, dir, false)
	if got := strings.Join(problems, "\n"); !strings.Contains(got, `mermaid "add-update-delete" differs from its source`) {
		t.Errorf("a stale diagram is not reported; got:\n%s", got)
	}
}
