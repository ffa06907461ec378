package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/internal/testdeadline"
)

// The image copies the Linux binaries goreleaser built, from where
// goreleaser puts them in the image's build context.
func TestReleaseConfigImageTakesTheLinuxBinaries(t *testing.T) {
	c, b := readReleaseConfig(t)
	if len(c.DockersV2) != 1 {
		t.Fatalf(".goreleaser.yaml has %d images (dockers_v2), want 1", len(c.DockersV2))
	}
	d := c.DockersV2[0]
	if !slices.Equal(d.IDs, []string{b.ID}) {
		t.Errorf("image takes builds %q, want [%q]", d.IDs, b.ID)
	}
	for _, p := range d.Platforms {
		goos, goarch, _ := strings.Cut(p, "/")
		if goos != "linux" || !slices.Contains(b.Goarch, goarch) {
			t.Errorf("image platform %s: not a Linux binary the build makes", p)
		}
	}
	dockerfile, err := os.ReadFile("../../" + d.Dockerfile)
	if err != nil {
		t.Fatal(err)
	}
	if copyLine := "COPY $TARGETPLATFORM/" + b.Binary + " "; !strings.Contains(string(dockerfile), copyLine) {
		t.Errorf("%s does not say %q: goreleaser puts each platform's binary there", d.Dockerfile, copyLine)
	}
}

// The release image (release.Dockerfile, built by goreleaser) runs a
// scenario to the end: the binary is static, it is the full build (the
// scenario runs behind the watch cache, the default world, which a plain
// build could only reach by building itself with the go command, which
// the image has not), and the nonroot user can write the embedded etcd's
// data directory. Where no container engine
// answers, the test skips at once, saying so. Where one does, it costs a
// build of cachelab for Linux as the release builds it (several minutes
// on a cold build cache) and a pull of distroless: -short skips it.
//
// It builds what goreleaser would give the Dockerfile, with the same go
// build flags and ldflags (.goreleaser.yaml), at the same place in the
// build context ($TARGETPLATFORM/cachelab), for the engine's platform.
func TestReleaseImageRunsAScenario(t *testing.T) {
	platform := containerEngine(t)
	if testing.Short() {
		t.Skip("-short: building cachelab for the image takes minutes")
	}
	c, b := readReleaseConfig(t)
	buildDir := t.TempDir()
	buildReleaseBinary(t, b, platform, filepath.Join(buildDir, filepath.FromSlash(platform), b.Binary))
	dockerfile, err := os.ReadFile("../../" + c.DockersV2[0].Dockerfile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(buildDir, "Dockerfile"), dockerfile, 0o644); err != nil {
		t.Fatal(err)
	}

	image := "cachelab-image-test:" + strconv.Itoa(os.Getpid())
	// With BuildKit, --platform sets TARGETPLATFORM; the classic builder
	// takes it as a build argument.
	docker(t, "build", "--platform", platform, "--build-arg", "TARGETPLATFORM="+platform, "-t", image, buildDir)
	t.Cleanup(func() { exec.Command("docker", "rmi", "-f", image).Run() })

	out := docker(t, "run", "--rm", image, "version")
	if first, _, _ := strings.Cut(out, "\n"); strings.Join(strings.Fields(first), " ") != "cachelab image-test" {
		t.Errorf("the image's cachelab version says %q, want the stamped version image-test", first)
	}
	if strings.Contains(out, "not in this build") {
		t.Errorf("the image's cachelab is a plain build, without every world:\n%s", out)
	}
	out = docker(t, "run", "--rm", image, "run", "add-update-delete")
	if want := "client-go agreed at every step"; !strings.Contains(out, want) {
		t.Errorf("run add-update-delete in the image printed no %q:\n%s", want, out)
	}
}

// containerEngine is the platform (linux/amd64) of the container engine
// the docker command talks to; without one the test skips, saying why.
func containerEngine(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("docker"); err != nil {
		t.Skip("no docker command on PATH: the release image cannot be built here")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "docker", "version", "--format", "{{.Server.Os}}/{{.Server.Arch}}")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Skipf("no container engine answers, so the release image cannot be built here (docker version: %v: %s)",
			err, strings.TrimSpace(stderr.String()))
	}
	platform := strings.TrimSpace(stdout.String())
	if !strings.HasPrefix(platform, "linux/") {
		t.Skipf("the container engine runs %s containers; the release image is Linux's", platform)
	}
	return platform
}

// buildReleaseBinary builds cmd/cachelab for platform into out as
// .goreleaser.yaml's build b does, stamped with the version image-test.
func buildReleaseBinary(t *testing.T, b releaseBuild, platform, out string) {
	t.Helper()
	goos, goarch, _ := strings.Cut(platform, "/")
	args := append([]string{"build"}, b.Flags...)
	args = append(args, "-tags", strings.Join(b.Tags, ","), "-ldflags", ldflagsFor(b, "image-test"), "-o", out, b.Main)
	cmd := exec.Command("go", args...)
	cmd.Dir = "../.." // b.Main is relative to the repository's root
	cmd.Env = append(append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch), b.Env...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
}

// docker runs the docker command with args and returns its stdout; it
// fails the test, with stderr, when the command fails or outlasts the
// test binary's deadline (package testdeadline: a build or a run takes
// as long as the machine's load makes it).
func docker(t *testing.T, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(testdeadline.Context(t), "docker", args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("docker %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}
