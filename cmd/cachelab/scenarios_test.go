package main

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/scenario"
)

// --file prints each built-in scenario byte for byte as its file in
// sim/scenarios holds it, so that a copy runs and checks as the original.
func TestScenarioFileIsVerbatim(t *testing.T) {
	cat, err := sim.Catalog()
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range cat {
		want, err := os.ReadFile("../../" + sc.File)
		if err != nil {
			t.Fatal(err)
		}
		c := newCLI("", false, nil)
		c.run(t, exitOK, "scenarios", sc.Name, "--file")
		if got := c.stdout.String(); got != string(want) {
			t.Errorf("cachelab scenarios %s --file does not print %s as it is", sc.Name, sc.File)
		}
	}
}

// Every built-in scenario is shown with each of its steps on a line of
// its own, numbered, with its line in the file.
func TestScenarioShowsEveryStep(t *testing.T) {
	cat, err := sim.Catalog()
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range cat {
		c := newCLI("", false, nil)
		c.run(t, exitOK, "scenarios", sc.Name)
		lines := strings.Split(c.stdout.String(), "\n")
		for n, st := range sc.Steps {
			want := []string{strconv.Itoa(n + 1), strconv.Itoa(st.Line)}
			want = append(want, strings.Fields(st.Text)...)
			if !slices.ContainsFunc(lines, func(l string) bool { return slices.Equal(strings.Fields(l), want) }) {
				t.Errorf("cachelab scenarios %s: no line %q:\n%s", sc.Name, strings.Join(want, " "), c.stdout.String())
			}
		}
	}
}

// The world a scenario runs in, as its "# Server:" line says, or as its
// levers call for when it says nothing.
func TestWorld(t *testing.T) {
	for _, tc := range []struct{ server, steps, want string }{
		{"# Server: watchcache\n", "start\n----\n", "watchcache: kube-apiserver's watch cache in front of etcd\n         (its \"# Server:\" line)"},
		{"# Server: etcd\n", "start\n----\n", "etcd: kube-apiserver with its watch cache off, every request read from etcd\n         (its \"# Server:\" line)"},
		{"# Server: any\n", "start\n----\n", "watchcache: kube-apiserver's watch cache in front of etcd\n         (the default; its \"# Server: any\" line says it means the same with --server etcd)"},
		{"", "put-raw ns0/a garbage\n----\n", "etcd: kube-apiserver with its watch cache off, every request read from etcd\n         (it pulls a lever only that world has)"},
		{"", "start\n----\n", "watchcache: kube-apiserver's watch cache in front of etcd\n         (the default: it names no server and pulls no etcd-only lever)"},
	} {
		src := "# A scenario.\n# Covers: P1\n" + tc.server + "\n" + tc.steps
		sc, err := scenario.Parse("x.txt", []byte(src))
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if got := world(sc); got != tc.want {
			t.Errorf("%s\ngot  %q\nwant %q", src, got, tc.want)
		}
	}
}

// 'cachelab scenarios commands' (and the like) is a natural guess at
// --commands: it points there, and at what the other words would mean,
// rather than searching the catalog for a scenario of that name.
func TestScenariosSubcommandGuesses(t *testing.T) {
	for _, tc := range []struct{ word, want string }{
		{"commands", "'cachelab scenarios --commands'"},
		{"command", "'cachelab scenarios --commands'"},
		{"list", "'cachelab scenarios', with no name,"},
		{"help", "'cachelab scenarios --help'"},
	} {
		c := newCLI("", false, nil)
		c.run(t, exitUsage, "scenarios", tc.word)
		if got := c.stderr.String(); !strings.Contains(got, tc.want) || !strings.Contains(got, `"`+tc.word+`"`) {
			t.Errorf("cachelab scenarios %s: stderr %q, want it to name %q and say %s", tc.word, got, tc.word, tc.want)
		}
		if c.stdout.Len() > 0 {
			t.Errorf("cachelab scenarios %s printed on stdout: %q", tc.word, c.stdout.String())
		}
	}
}
