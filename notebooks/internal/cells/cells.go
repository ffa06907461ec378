// Package cells keeps each chapter's README.md in step with the code that
// backs it. A README shows a chapter's runnable cells, which are Go
// Example functions in the chapter's _test.go files, and quotes the
// scenario files it tells stories with, between markers:
//
//	<!-- cell: ExampleIndexByApp -->
//	```go
//	(the function's body, as written)
//	```
//	Output:
//	```
//	(its // Output: comment, which `go test` checks)
//	```
//	<!-- end -->
//
//	<!-- source: pod -->
//	```go
//	(a helper function the cells use, with its doc comment)
//	```
//	<!-- end -->
//
//	<!-- scenario: late-handler -->
//	```
//	(sim/scenarios/late-handler.txt, which `go test ./sim` checks)
//	```
//	<!-- end -->
//
//	<!-- mermaid: late-handler --object ns0/a -->
//	```mermaid
//	(what `cachelab run late-handler --output mermaid --object ns0/a`
//	draws: the scenario is run, on an embedded etcd, and drawn; --object
//	is optional)
//	```
//	<!-- end -->
//
// Check fails when a block differs from its source, or names one that does
// not exist, or when an Example is shown nowhere. A diagram is its
// source's too: a scenario whose trace changed fails the check until its
// diagram is drawn again. With -update it rewrites
// the blocks instead:
//
//	go test ./notebooks/... -run TestREADME -update
package cells

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite README.md cells from the Example functions and scenario files")

// cell is an Example (its body and its expected output), or a helper
// function the cells use (its whole declaration, in code).
type cell struct {
	code, output string
	helper       bool
}

var marker = regexp.MustCompile(`(?s)<!-- (cell|source|scenario|mermaid): ([A-Za-z0-9_-]+)((?: --object [^ ]+)?) -->\n(.*?)<!-- end -->`)

// Check compares dir/README.md with the Examples and helpers in dir's test
// files and with the scenario files under root/sim/scenarios, and fails t
// on each difference; with -update it rewrites README.md instead.
func Check(t *testing.T, dir, root string) {
	t.Helper()
	problems, err := Compare(dir, root, *update)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", filepath.Join(dir, "README.md"), p)
	}
	if len(problems) > 0 {
		t.Log("to refresh README.md from the cells: go test ./notebooks/... -run TestREADME -update")
	}
}

// Compare returns what differs between dir/README.md and its sources,
// sorted; with write, it rewrites README.md from them and returns nothing.
func Compare(dir, root string, write bool) ([]string, error) {
	cells, err := examples(dir)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "README.md")
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	shown := map[string]bool{}
	var problems []string
	out := marker.ReplaceAllStringFunc(string(src), func(block string) string {
		m := marker.FindStringSubmatch(block)
		kind, name, args, body := m[1], m[2], m[3], m[4]
		want, err := render(kind, name, args, cells, root)
		if err != nil {
			problems = append(problems, err.Error())
			return block
		}
		shown[name] = true
		if body != want {
			problems = append(problems, fmt.Sprintf("%s %q differs from its source:\n--- README.md\n%s--- source\n%s", kind, name, body, want))
		}
		return fmt.Sprintf("<!-- %s: %s%s -->\n%s<!-- end -->", kind, name, args, want)
	})
	for name, c := range cells {
		if !shown[name] && !c.helper {
			problems = append(problems, fmt.Sprintf("%s is a cell of this chapter but README.md does not show it (add <!-- cell: %s --> <!-- end -->)", name, name))
		}
	}
	if write {
		return nil, os.WriteFile(path, []byte(out), 0o644)
	}
	sort.Strings(problems)
	return problems, nil
}

func render(kind, name, args string, cells map[string]cell, root string) (string, error) {
	switch kind {
	case "mermaid":
		return diagram(name, strings.TrimPrefix(args, " --object "))
	case "scenario":
		b, err := os.ReadFile(filepath.Join(root, "sim", "scenarios", name+".txt"))
		if err != nil {
			return "", fmt.Errorf("scenario %q: %v", name, err)
		}
		return "```\n" + string(b) + "```\n", nil
	}
	c, ok := cells[name]
	if !ok || c.helper != (kind == "source") {
		return "", fmt.Errorf("%s %q: no such function in this chapter's tests (cell: an Example; source: a helper)", kind, name)
	}
	s := "```go\n" + c.code + "```\n"
	if c.output != "" {
		s += "Output:\n```\n" + c.output + "```\n"
	}
	return s, nil
}

// examples reads the Example functions of dir's test files.
func examples(dir string) (map[string]cell, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return nil, err
	}
	out := map[string]cell{}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, f, src, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || fn.Body == nil {
				continue
			}
			if !strings.HasPrefix(fn.Name.Name, "Example") {
				start := fn.Pos()
				if fn.Doc != nil {
					start = fn.Doc.Pos()
				}
				decl := string(src[fset.Position(start).Offset:fset.Position(fn.End()).Offset])
				out[fn.Name.Name] = cell{code: decl + "\n", helper: true}
				continue
			}
			body := string(src[fset.Position(fn.Body.Lbrace).Offset+1 : fset.Position(fn.Body.Rbrace).Offset])
			out[fn.Name.Name] = split(body)
		}
	}
	return out, nil
}

// split separates an Example's body into its code (one tab less) and its
// "// Output:" comment's text.
func split(body string) cell {
	lines := strings.Split(strings.Trim(body, "\n"), "\n")
	var c cell
	inOutput := false
	for _, l := range lines {
		l = strings.TrimPrefix(l, "\t")
		switch {
		case strings.TrimSpace(l) == "// Output:" || strings.TrimSpace(l) == "// Unordered output:":
			inOutput = true
		case inOutput:
			c.output += strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(l), "//"), " ") + "\n"
		default:
			c.code += l + "\n"
		}
	}
	c.code = strings.TrimRight(c.code, "\n") + "\n"
	return c
}
