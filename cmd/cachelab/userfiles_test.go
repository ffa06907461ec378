package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The files a run reads and writes belong to the user: it never writes
// over the scenario it runs, and --rewrite changes a file's text only,
// not what the file is (its links, its inode, its mode). Issue 27, cases
// 7 and 8; testdata/script/user-files.txtar tries the same from a shell.

const mineScenario = "# Mine: a pod created before the informer starts.\n# Covers: P1\n\ncreate ns0/a\n----\n\nstart\n----\n"

// writeScenario writes mineScenario to dir/name and returns its path.
func writeScenario(t *testing.T, dir, name string) string {
	t.Helper()
	file := filepath.Join(dir, name)
	if err := os.WriteFile(file, []byte(mineScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// --rewrite writes into the file in place: a hard link to it sees the
// new text, and the file is the same file (inode) it was.
func TestRewriteKeepsHardLinks(t *testing.T) {
	dir := t.TempDir()
	file := writeScenario(t, dir, "mine.txt")
	other := filepath.Join(dir, "other.txt")
	if err := os.Link(file, other); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	c := newCLI("", false, nil)
	c.run(t, exitOK, "run", file, "--rewrite")
	after, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) {
		t.Errorf("%s is another file after --rewrite: its hard link %s kept the old text", file, other)
	}
	if got := readFile(t, other); !strings.Contains(got, "etcd             create ns0/a@2") {
		t.Errorf("the hard link %s does not hold the rewritten text:\n%s", other, got)
	}
}

// --output html= naming a hard link to the scenario is the scenario too.
func TestPageIsNotTheScenarioByAHardLink(t *testing.T) {
	dir := t.TempDir()
	file := writeScenario(t, dir, "mine.txt")
	page := filepath.Join(dir, "page.html")
	if err := os.Link(file, page); err != nil {
		t.Fatal(err)
	}
	c := newCLI("", false, nil)
	c.run(t, exitUsage, "run", file, "--output", "html="+page)
	if got := readFile(t, file); got != mineScenario {
		t.Errorf("the scenario was written over:\n%s", got)
	}
	if !strings.Contains(c.stderr.String(), "that is the scenario file this run reads") {
		t.Errorf("stderr does not say why:\n%s", c.stderr.String())
	}
}

// A stdout that goes to the scenario file (cachelab run x.txt >> x.txt)
// is refused before the run: the trace would be written into the
// scenario it runs. So is a page written where stdout goes (--output
// html=out.txt > out.txt): the page and the trace would overwrite each
// other.
func TestStdoutIsNotAnInput(t *testing.T) {
	dir := t.TempDir()
	file := writeScenario(t, dir, "mine.txt")
	out, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	c := newCLI("", false, nil)
	c.Stdout = out
	c.run(t, exitUsage, "run", file)
	if got := readFile(t, file); got != mineScenario {
		t.Errorf("the scenario was written into:\n%s", got)
	}
	if want := "cachelab: stdout is the scenario file " + file + ": the trace would be written into the scenario it runs\n"; c.stderr.String() != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", c.stderr.String(), want)
	}

	trace := filepath.Join(dir, "out.txt")
	out2, err := os.Create(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer out2.Close()
	c = newCLI("", false, nil)
	c.Stdout = out2
	c.run(t, exitUsage, "run", file, "--output", "html="+trace)
	if want := "cachelab: --output html=" + trace + ": that is where stdout goes; the page and the text trace would overwrite each other\n"; c.stderr.String() != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", c.stderr.String(), want)
	}
}
