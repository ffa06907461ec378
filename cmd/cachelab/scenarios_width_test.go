package main

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/scenario"
)

// What 'cachelab scenarios' prints fits the terminal (issue 47, case 21).
// CACHELAB_TERM_WIDTH stands for a terminal's width; a line may pass it
// only to hold a word longer than the line.

// fits reports the first line of out wider than width that is not one
// overlong word, or "".
func fits(out string, width int) string {
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if utf8.RuneCountInString(l) > width && len(strings.Fields(l)) > 1 {
			return l
		}
	}
	return ""
}

// --commands wraps to the terminal's width, and to 80 columns with no
// terminal. Every command's help starts in one column; a usage too long
// for the usage column has lines of its own above its help.
func TestCommandsFitTheWidth(t *testing.T) {
	for _, tc := range []struct {
		name     string
		env      map[string]string
		terminal bool
		width    int
	}{
		{"no terminal", nil, false, 80},
		{"40 columns", map[string]string{envTermWidth: "40"}, true, 40},
		{"60 columns", map[string]string{envTermWidth: "60"}, true, 60},
		{"100 columns", map[string]string{envTermWidth: "100"}, true, 100},
		{"300 columns", map[string]string{envTermWidth: "300"}, true, 300},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCLI("", tc.terminal, tc.env)
			c.run(t, exitOK, "scenarios", "--commands")
			out := c.stdout.String()
			if l := fits(out, tc.width); l != "" {
				t.Errorf("a line of %d columns, over %d:\n%s\nall of it:\n%s", utf8.RuneCountInString(l), tc.width, l, out)
			}
			checkColumns(t, out)
		})
	}
}

// CACHELAB_TERM_WIDTH=0 wraps nothing: one line a command.
func TestCommandsUnwrapped(t *testing.T) {
	c := newCLI("", true, map[string]string{envTermWidth: "0"})
	c.run(t, exitOK, "scenarios", "--commands")
	lines := strings.Split(strings.TrimSuffix(c.stdout.String(), "\n"), "\n")
	docs := scenario.CommandDocs()
	if len(lines) != len(docs) {
		t.Fatalf("%d lines for %d commands:\n%s", len(lines), len(docs), c.stdout.String())
	}
	checkColumns(t, c.stdout.String())
}

// checkColumns checks that out lists every command in order, its usage
// and then its help, and that every help starts in the column the help of
// compact (whose usage is short) starts in.
func checkColumns(t *testing.T, out string) {
	t.Helper()
	blocks := entries(out)
	docs := scenario.CommandDocs()
	if len(blocks) != len(docs) {
		t.Fatalf("%d entries for %d commands:\n%s", len(blocks), len(docs), out)
	}
	col := -1
	for i, d := range docs {
		if d.Name == "compact" {
			col = strings.Index(blocks[i][0], d.Help[:10])
		}
	}
	if col < len("compact")+2 {
		t.Fatalf("compact's help is not on its line:\n%s", out)
	}
	for i, d := range docs {
		usage, help := split(blocks[i], col)
		if usage != d.Usage || help != d.Help {
			t.Errorf("%s, its help from column %d:\nusage %q\nwant  %q\nhelp  %q\nwant  %q\nits lines:\n%s",
				d.Name, col, usage, d.Usage, help, d.Help, strings.Join(blocks[i], "\n"))
		}
	}
}

// entries cuts out into one block of lines per command: each starts at
// the left margin, and every other line of it is indented.
func entries(out string) [][]string {
	var blocks [][]string
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if !strings.HasPrefix(l, " ") || len(blocks) == 0 {
			blocks = append(blocks, nil)
		}
		blocks[len(blocks)-1] = append(blocks[len(blocks)-1], l)
	}
	return blocks
}

// split reads an entry's usage and help back, the help being what its
// lines hold from column col on where nothing but the usage's first line
// comes before.
func split(block []string, col int) (usage, help string) {
	var u, h []string
	for i, l := range block {
		before, after := l, ""
		if len(l) > col {
			before, after = l[:col], l[col:]
		}
		switch {
		case strings.TrimSpace(before) == "" && after != "":
			h = append(h, strings.TrimSpace(after))
		case i == 0 && strings.HasSuffix(before, "  ") && after != "" && after[0] != ' ':
			u = append(u, strings.TrimSpace(before))
			h = append(h, strings.TrimSpace(after))
		default:
			u = append(u, strings.TrimSpace(l))
		}
	}
	return strings.Join(u, " "), strings.Join(h, " ")
}

// 'cachelab scenarios NAME' wraps every line to the width, not only the
// description: the heading, Covers, Server and its reason, Steps, each
// step, and the line about --file.
func TestDescribeFitsTheWidth(t *testing.T) {
	inProcess(t) // beside the scripts (places_test.go)
	cat, err := sim.Catalog()
	if err != nil {
		t.Fatal(err)
	}
	for _, width := range []int{50, 60, 80} {
		for _, sc := range cat {
			c := newCLI("", true, map[string]string{envTermWidth: strconv.Itoa(width)})
			c.run(t, exitOK, "scenarios", sc.Name)
			if l := fits(c.stdout.String(), width); l != "" {
				t.Errorf("cachelab scenarios %s at %d columns: a line of %d:\n%s\nall of it:\n%s", sc.Name, width, utf8.RuneCountInString(l), l, c.stdout.String())
			}
		}
	}
}
