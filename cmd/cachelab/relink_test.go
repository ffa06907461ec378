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
	cases := []struct {
		bi   *debug.BuildInfo
		want []string
	}{
		{main("(devel)"), []string{"build", "-tags", "full", "-o", "/c/cachelab", modulePath + "/cmd/cachelab"}},
		{main(""), []string{"build", "-tags", "full", "-o", "/c/cachelab", modulePath + "/cmd/cachelab"}},
		{main("v0.4.0"), []string{"install", "-tags", "full", modulePath + "/cmd/cachelab@v0.4.0"}},
	}
	for _, c := range cases {
		got, err := relinkTo(c.bi, "/c/cachelab")
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("version %q: (-want +got)\n%s", c.bi.Main.Version, d)
		}
	}
	for _, bi := range []*debug.BuildInfo{nil, {Main: debug.Module{Path: "example.com/other"}}} {
		if _, err := relinkTo(bi, "/c/cachelab"); err == nil {
			t.Errorf("relinkTo(%v) built something", bi)
		}
	}
}
