package main

import (
	"go/build/constraint"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/cachelab/cachelab/sim"
)

// The release (.goreleaser.yaml) is built by goreleaser, which CI does not
// run: installing it costs minutes of CPU, and each of its six targets
// compiles about 1,400 packages. These tests read its configuration
// instead, in milliseconds, and check what a workshop relies on.

// releaseConfig is the part of .goreleaser.yaml these tests check.
type releaseConfig struct {
	Builds   []releaseBuild `json:"builds"`
	Checksum struct {
		NameTemplate string `json:"name_template"`
	} `json:"checksum"`
	DockersV2 []struct {
		IDs        []string `json:"ids"`
		Dockerfile string   `json:"dockerfile"`
		Platforms  []string `json:"platforms"`
	} `json:"dockers_v2"`
}

// releaseBuild is one of goreleaser's go builds.
type releaseBuild struct {
	ID      string   `json:"id"`
	Main    string   `json:"main"`
	Binary  string   `json:"binary"`
	Env     []string `json:"env"`
	Flags   []string `json:"flags"`
	Tags    []string `json:"tags"`
	Ldflags []string `json:"ldflags"`
	Goos    []string `json:"goos"`
	Goarch  []string `json:"goarch"`
}

// readReleaseConfig reads the repository's .goreleaser.yaml and its one
// build.
func readReleaseConfig(t *testing.T) (releaseConfig, releaseBuild) {
	t.Helper()
	data, err := os.ReadFile("../../.goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c releaseConfig
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	if len(c.Builds) != 1 {
		t.Fatalf(".goreleaser.yaml has %d builds, want the one of cmd/cachelab", len(c.Builds))
	}
	return c, c.Builds[0]
}

// The linker's -X sets only a string variable: were sim.Version a
// constant, -X would be ignored without a word, and every release would
// print the version in the source. This line does not compile then.
var _ *string = &sim.Version

// The release binaries are what `go build ./cmd/cachelab` makes, for six
// platforms, static, with every world, and stamped with the release's
// version where `cachelab version` and every trace header read it.
func TestReleaseConfigBuildsEveryPlatformStampedAndFull(t *testing.T) {
	c, b := readReleaseConfig(t)
	if b.Main != "./cmd/cachelab" || b.Binary != "cachelab" {
		t.Errorf("build main %q binary %q, want ./cmd/cachelab and cachelab", b.Main, b.Binary)
	}
	for _, want := range []struct {
		what string
		list []string
		item string
	}{
		{"env", b.Env, "CGO_ENABLED=0"}, // a static binary, for distroless/static
		{"flags", b.Flags, "-trimpath"},
	} {
		if !slices.Contains(want.list, want.item) {
			t.Errorf("build %s %q has no %q", want.what, want.list, want.item)
		}
	}
	if !fullBuild(t, b.Tags) {
		t.Errorf("build tags %q leave out sim/full (cmd/cachelab/full.go): release binaries carry every world", b.Tags)
	}
	if got, want := sorted(b.Goos), []string{"darwin", "linux", "windows"}; !slices.Equal(got, want) {
		t.Errorf("goos %q, want %q", got, want)
	}
	if got, want := sorted(b.Goarch), []string{"amd64", "arm64"}; !slices.Equal(got, want) {
		t.Errorf("goarch %q, want %q", got, want)
	}
	versionVar := reflect.TypeFor[sim.Options]().PkgPath() + ".Version"
	if got := stampedVar(b); got != versionVar {
		t.Errorf("ldflags %q stamp %q, want -X %s={{ .Version }}", b.Ldflags, got, versionVar)
	}
	if c.Checksum.NameTemplate == "" {
		t.Error("no checksum file named")
	}
}

// fullBuild reports whether a build with tags compiles
// cmd/cachelab/full.go, which links in sim/full: the watch-cache world
// and client-go's informer factory.
func fullBuild(t *testing.T, tags []string) bool {
	t.Helper()
	src, err := os.ReadFile("full.go")
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(string(src), "\n")
	expr, err := constraint.Parse(line)
	if err != nil {
		t.Fatalf("full.go: %v", err)
	}
	return expr.Eval(func(tag string) bool { return slices.Contains(tags, tag) })
}

// stampedVar is the variable the build's ldflags stamp the release's
// version into (-X variable={{ .Version }}), or "".
func stampedVar(b releaseBuild) string {
	const version = "release-version"
	for _, f := range strings.Fields(ldflagsFor(b, version)) {
		if v, ok := strings.CutSuffix(f, "="+version); ok {
			return v
		}
	}
	return ""
}

// ldflagsFor is the build's ldflags with the release's version set to
// version, as goreleaser renders them.
func ldflagsFor(b releaseBuild, version string) string {
	return regexp.MustCompile(`\{\{\s*\.Version\s*\}\}`).ReplaceAllLiteralString(strings.Join(b.Ldflags, " "), version)
}

func sorted(s []string) []string { return slices.Sorted(slices.Values(s)) }
