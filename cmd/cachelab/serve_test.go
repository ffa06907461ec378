package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cachelab/cachelab/internal/outsidecli"
)

// The command's tests link what a full build links for serve.
func init() { outside = runOutsideJobInTests }

func runOutsideJobInTests(ctx context.Context, j outsideJob, stdout, stderr io.Writer) (bool, error) {
	return outsidecli.Run(ctx, outsidecli.Job(j), stdout, stderr)
}

const fooStory = "../../examples/fooctl/footest/story.txt"

// runCLI runs cachelab with args in the test's process.
func runCLI(ctx context.Context, args ...string) (code int, stdout, stderr string) {
	var out, errb syncBuffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	code = m.Run(ctx, args)
	return code, out.String(), errb.String()
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Serve and explore --serve refuse what they cannot do before they
// start anything, saying what and where.
func TestServeRefusals(t *testing.T) {
	dir := t.TempDir()
	there := filepath.Join(dir, "there")
	os.WriteFile(there, nil, 0o600)
	stopping := filepath.Join(dir, "stopping.txt")
	os.WriteFile(stopping, []byte("# A configmap, then the controller stops.\ncreate configmaps ns0/a\n----\n\nstop\n----\n"), 0o600)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", fooStory}, "serve needs --kubeconfig-out FILE"},
		{[]string{"serve", fooStory, "--kubeconfig-out", there}, "the file is there"},
		{[]string{"serve", fooStory, "--kubeconfig-out", filepath.Join(dir, "no", "kc")}, "no directory"},
		{[]string{"serve", filepath.Join(dir, "missing.txt"), "--kubeconfig-out", filepath.Join(dir, "kc")}, "the story: open"},
		{[]string{"serve", stopping, "--kubeconfig-out", filepath.Join(dir, "kc")}, "stopping.txt:5: serve cannot stop your controller"},
		{[]string{"explore", "--serve", fooStory}, "explore --serve takes a story file, then --"},
		{[]string{"explore", "--serve", "--plant", "x", fooStory, "--", "true"}, "--plant is explore's own"},
		{[]string{"explore", "--serve", "--faults", "flood", fooStory, "--", "true"}, `no fault "flood"`},
	} {
		code, _, stderr := runCLI(context.Background(), c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("cachelab %s: exit %d, stderr %q; want exit %d and %q", strings.Join(c.args, " "), code, stderr, exitUsage, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "kc")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused serve left a kubeconfig: %v", err)
	}
}

// fooctlBinary builds the worked example's operator as a binary of its
// own: a controller in another process that knows nothing of cachelab.
func fooctlBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "fooctl")
	if out, err := exec.Command("go", "build", "-o", bin, "../../examples/fooctl/cmd/fooctl").CombinedOutput(); err != nil {
		t.Fatalf("go build fooctl: %v\n%s", err, out)
	}
	return bin
}

// serve waits for a controller, plays the story to it, judges it, and
// removes its kubeconfig; explore --serve runs the controller once per
// placement and finds the mistaken one's duplicate.
func TestServeAndExploreServe(t *testing.T) {
	bin := fooctlBinary(t)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	ctx := context.Background()
	type result struct {
		code           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, out, errs := runCLI(ctx, "serve", fooStory, "--kubeconfig-out", kubeconfig, "--unowned", "registry", "--connect", "1m")
		done <- result{code, out, errs}
	}()
	for deadline := time.Now().Add(30 * time.Second); ; {
		if _, err := os.Stat(kubeconfig); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("serve wrote no kubeconfig within 30 s")
		}
		<-time.After(10 * time.Millisecond) // polling for the file: nothing else says it is there
	}
	ctl := exec.Command(bin)
	ctl.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	if err := ctl.Start(); err != nil {
		t.Fatal(err)
	}
	defer ctl.Wait()
	defer ctl.Process.Kill()
	r := <-done
	if r.code != exitOK || !strings.HasPrefix(r.stdout, "no faults: kept every invariant") || !strings.Contains(r.stderr, "you can stop your controller") {
		t.Errorf("serve: exit %d, stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(kubeconfig); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("serve left its kubeconfig: %v", err)
	}

	code, out, errs := runCLI(ctx, "explore", "--serve", "--faults", "close-watch", "--unowned", "registry", fooStory, "--", bin, "-mistaken")
	if code != exitDiverged || !strings.Contains(out, "baseline (no faults): broke no-duplicates") {
		t.Errorf("explore --serve of the mistaken operator: exit %d, stdout:\n%s\nstderr:\n%s", code, out, errs)
	}
}
