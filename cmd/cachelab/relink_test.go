package main

import (
	"os/exec"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The plain build (the README's first command) leaves out what only the
// watch-cache world and the factory comparison need; -tags full has it.
// A new import that pulls them back in makes every newcomer's first
// build twice as long: this test names it.
func TestPlainBuildLeavesOutTheHeavyParts(t *testing.T) {
	heavy := []string{
		"k8s.io/apiserver/pkg/storage/cacher",   // the watch cache
		"k8s.io/apiserver/pkg/server",           // kube-apiserver's generic server
		"k8s.io/client-go/informers",            // every group's typed informers
		"k8s.io/client-go/kubernetes",           // every group's typed clients
		"k8s.io/api/apps/v1",                    // every group's types
		"github.com/cachelab/cachelab/sim/full", // what links them in
	}
	deps := func(tags ...string) []string {
		args := append([]string{"list", "-deps"}, tags...)
		out, err := exec.Command("go", append(args, ".")...).Output()
		if err != nil {
			t.Fatalf("go %s: %v", strings.Join(args, " "), err)
		}
		return strings.Fields(string(out))
	}
	plain, full := deps(), deps("-tags", "full")
	for _, p := range heavy {
		if slices.Contains(plain, p) {
			t.Errorf("the plain build of cachelab imports %s; it belongs behind package sim/full (sim/world/full.go)", p)
		}
		if !slices.Contains(full, p) {
			t.Errorf("the full build (-tags full) does not import %s", p)
		}
	}
	t.Logf("packages: %d in the plain build, %d in the full one", len(plain), len(full))
}

func TestRelinkBuildsTheSameCachelab(t *testing.T) {
	main := func(version string) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: version}}
	}
	build := []string{"build", "-tags", "full", "-o", "/c/cachelab", modulePath + "/cmd/cachelab"}
	cases := []struct {
		bi       *debug.BuildInfo
		checkout string
		want     []string // nil: it cannot
	}{
		// In a checkout, from it, whatever the binary says of itself.
		{main("(devel)"), "/src/cachelab", build},
		{main("v0.0.0-20261129120000-abcdef123456+dirty"), "/src/cachelab", build},
		{main("v0.4.0"), "/src/cachelab", build},
		{nil, "/src/cachelab", build},
		// Outside one, only a published version.
		{main("v0.4.0"), "", []string{"install", "-tags", "full", modulePath + "/cmd/cachelab@v0.4.0"}},
		{main("v0.4.1-0.20261129120000-abcdef123456"), "", nil},
		{main("v0.0.0-20261129120000-abcdef123456"), "", nil},
		{main("v0.4.0+dirty"), "", nil},
		{main("(devel)"), "", nil},
		{nil, "", nil},
		{&debug.BuildInfo{Main: debug.Module{Path: "example.com/other", Version: "v1.0.0"}}, "", nil},
	}
	for _, c := range cases {
		got, err := relinkTo(c.bi, c.checkout, "/c/cachelab")
		if c.want == nil {
			if err == nil {
				t.Errorf("%+v in %q: relinkTo = %q, want an error", c.bi, c.checkout, got)
			}
			continue
		}
		if err != nil {
			t.Errorf("%+v in %q: %v", c.bi, c.checkout, err)
			continue
		}
		if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("%+v in %q: (-want +got)\n%s", c.bi, c.checkout, d)
		}
	}
}
