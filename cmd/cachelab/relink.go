package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/cachelab/cachelab/sim"
	simworld "github.com/cachelab/cachelab/sim/world"
)

// A plain build of cachelab (go run ./cmd/cachelab, the README's first
// command) leaves out kube-apiserver's watch cache and client-go's typed
// informer factory: they are about half of what a cold build compiles,
// and the main job does not need them (sim/world's Full). A run that
// needs them is refused before its first step (sim.NotLinkedError); the
// process then builds cachelab with -tags full, once, into the user's
// cache directory, and runs the same command line there, in the same
// directory, with the same streams, and exits as it exits. Go's build
// cache makes every build after the first a link at most.

// modulePath is cachelab's module, which a relink builds from.
const modulePath = "github.com/cachelab/cachelab"

// relinkTo is what builds the full binary: the go command's arguments,
// run in the current directory. In a checkout of cachelab (checkout is
// the module's directory there, "" outside one) it builds from the
// checkout, whatever the binary says of itself: go build stamps a
// checkout's binary with a pseudo-version (+dirty when edited), which no
// proxy serves. Outside one, a binary installed at a published version
// installs that version.
func relinkTo(bi *debug.BuildInfo, checkout, out string) ([]string, error) {
	pkg := modulePath + "/cmd/cachelab"
	if checkout != "" {
		return []string{"build", "-tags", "full", "-o", out, pkg}, nil
	}
	if bi == nil || bi.Main.Path != modulePath {
		return nil, errors.New("this binary does not say which cachelab it was built from")
	}
	v := bi.Main.Version
	if v == "" || v == "(devel)" || strings.Contains(v, "+") || pseudoVersion.MatchString(v) {
		return nil, errors.New("this binary was built from a checkout, and to build the full one the current directory must be in it")
	}
	return []string{"install", "-tags", "full", pkg + "@" + v}, nil
}

// pseudoVersion matches a Go pseudo-version's tail: a commit, not a
// release (v0.0.0-20261129120000-abcdef123456).
var pseudoVersion = regexp.MustCompile(`[-.]\d{14}-[0-9a-f]{12}$`)

// relink builds the full cachelab and runs args in it (see above), or
// says why it cannot, with what to do instead.
func (m *Main) relink(ctx context.Context, args []string, why *sim.NotLinkedError) int {
	bin, err := m.buildFull(ctx, why)
	if err != nil {
		m.errorf("cachelab: %v", err)
		return exitUsage
	}
	cmd := exec.Command(bin, args...) // not CommandContext: a signal reaches it too, and it cleans up
	cmd.Stdin, cmd.Stdout, cmd.Stderr = m.Stdin, m.Stdout, m.Stderr
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee) && ee.Exited():
		return ee.ExitCode()
	case errors.As(err, &ee):
		return exitSignalBase + signalNumber(ee)
	}
	m.errorf("cachelab: running the full build: %v", err)
	return exitRunError
}

// buildFull builds cachelab with -tags full into the user's cache
// directory and returns the binary's path.
func (m *Main) buildFull(ctx context.Context, why *sim.NotLinkedError) (string, error) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("%v (building it here needs the go command, which is not on PATH)", why)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("%v (no cache directory to build it in: %v)", why, err)
	}
	// In a checkout of cachelab, build from it (relinkTo).
	checkout := ""
	if out, err := exec.CommandContext(ctx, gobin, "list", "-m", "-f", "{{.Path}} {{.Dir}}").Output(); err == nil {
		if path, dir, _ := strings.Cut(strings.TrimSpace(string(out)), " "); path == modulePath {
			checkout = dir
		}
	}
	// One binary per checkout, or per version: two checkouts that shared
	// one would rebuild it in turn, and a run could start one half
	// written by the other.
	bi, _ := debug.ReadBuildInfo()
	from := checkout
	if from == "" && bi != nil {
		from = bi.Main.Version
	}
	sum := sha256.Sum256([]byte(from))
	dir := filepath.Join(cache, "cachelab", fmt.Sprintf("full-%s_%s-%x", runtime.GOOS, runtime.GOARCH, sum[:6]))
	bin := filepath.Join(dir, "cachelab"+exeSuffix())
	goArgs, err := relinkTo(bi, checkout, bin)
	if err != nil {
		return "", fmt.Errorf("%v (%v)", why, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("%v (%v)", why, err)
	}
	fmt.Fprintf(m.Stderr, "cachelab: %s, which this build leaves out to build faster; building cachelab with it (go %s; "+
		"a few minutes the first time, then cached) ...\n", why.Scenario+" "+why.Needs, strings.Join(goArgs, " "))
	build := exec.CommandContext(ctx, gobin, goArgs...)
	build.Stdout, build.Stderr = m.Stderr, m.Stderr
	if goArgs[0] == "install" {
		build.Env = append(os.Environ(), "GOBIN="+dir)
	}
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("building cachelab with -tags full: %v", err)
	}
	return bin, nil
}

func exeSuffix() string {
	if runtime.GOOS == "windows" {
		return ".exe"
	}
	return ""
}

// notLinked is the run's *sim.NotLinkedError, if err is one.
func notLinked(err error) *sim.NotLinkedError {
	var nl *sim.NotLinkedError
	if errors.As(err, &nl) && simworld.Linked() == nil {
		return nl
	}
	return nil
}

// signalNumber is the number of the signal that ended a process.
func signalNumber(ee *exec.ExitError) int {
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return int(ws.Signal())
	}
	return exitRunError - exitSignalBase
}
