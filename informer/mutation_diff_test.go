package informer_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/cachelab/cachelab/informer"
	dt "github.com/cachelab/cachelab/internal/difftest"
	"github.com/cachelab/cachelab/internal/testdeadline"
)

// client-go: mutation_detector.go, shared_informer.go (P19): with
// KUBE_CACHE_MUTATION_DETECTOR=true in the environment at start, an
// informer whose handler changes an object it was given prints
// "CACHE <type>[i] ALTERED!" with both versions side by side and panics
// "cache <type> modified" within a second. The variable is read when the
// program starts, so each side runs in a child process of this test
// binary. Their first CACHE line and their panic must be the same, and
// both dumps must show the change; the dumps themselves print maps in map
// order, which differs from run to run on either side. The warning that
// the detector is on must be the same too, logged at the same site
// (P22).
func TestMutationDetector(t *testing.T) {
	if side := os.Getenv("CACHELAB_MUTATING_CHILD"); side != "" {
		runMutatingInformer(side)
		return
	}
	got, logs := map[string]string{}, map[string]string{}
	// Only the detector ends a child, and only the test binary's deadline
	// bounds the wait for it (package testdeadline): how soon the child
	// starts and its detector looks grows with the machine's load.
	deadline := testdeadline.Context(t)
	for _, side := range []string{"cachelab", "client-go"} {
		cmd := exec.CommandContext(deadline, os.Args[0], "-test.run=^TestMutationDetector$", "-test.count=1")
		cmd.Env = append(os.Environ(), "KUBE_CACHE_MUTATION_DETECTOR=true", "CACHELAB_MUTATING_CHILD="+side)
		out, err := cmd.CombinedOutput()
		if deadline.Err() != nil {
			t.Fatalf("%s: the detector did not end the mutating informer's process by the test binary's deadline:\n%s", side, out)
		}
		if err == nil {
			t.Fatalf("%s: the mutating informer's process did not fail:\n%s", side, out)
		}
		got[side], logs[side] = detectorReport(string(out)), logged(string(out))
	}
	frame := func(report string) [2]string {
		lines := strings.Split(report, "\n")
		return [2]string{lines[0], lines[len(lines)-1]}
	}
	if a, b := logs["cachelab"], logs["client-go"]; a != b || !strings.Contains(b, "Mutation detector is enabled") {
		t.Errorf("what the informers logged differs:\ncachelab:\n%s\nclient-go:\n%s", a, b)
	}
	if frame(got["cachelab"]) != frame(got["client-go"]) || !strings.Contains(got["client-go"], "ALTERED!") {
		t.Errorf("what the detector reported differs:\ncachelab:\n%s\nclient-go:\n%s", got["cachelab"], got["client-go"])
	}
	const change = `(string) (len=7) "touched": (string) (len=3) "yes"`
	for side, report := range got {
		if !strings.Contains(report, change) {
			t.Errorf("%s's report does not show the change %s:\n%s", side, change, report)
		}
	}
	t.Log(logs["client-go"] + "\n" + got["client-go"])
}

// logPrefix marks the lines a child process logged through klog.
const logPrefix = "LOGGED "

// logged is what a child's report says it logged, in order.
func logged(report string) string {
	var out []string
	for _, l := range strings.Split(report, "\n") {
		if strings.HasPrefix(l, logPrefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// detectorReport is the output from the first "CACHE " line to the
// panic's first line.
func detectorReport(out string) string {
	i := strings.Index(out, "CACHE ")
	if i < 0 {
		return "(no CACHE line)\n" + out
	}
	rest := out[i:]
	j := strings.Index(rest, "panic: ")
	if j < 0 {
		return rest
	}
	end := strings.IndexByte(rest[j:], '\n')
	if end < 0 {
		end = len(rest) - j
	}
	return rest[:j+end]
}

// runMutatingInformer runs side's informer with a handler that labels
// every object it is given, and waits for the detector to end the
// process: nothing else ends it (the parent test kills it at its
// deadline).
func runMutatingInformer(side string) {
	log := &dt.Log{}
	klog.SetLogger(dt.InfoLogger(log)) // the detector warns through klog's global logger
	srv := dt.NewServer()
	srv.Write("ADDED", dt.Pod("ns/a"))
	mutate := func(obj any) { obj.(*unstructured.Unstructured).SetLabels(map[string]string{"touched": "yes"}) }
	ctx := context.Background()
	if side == "cachelab" {
		inf := informer.New(srv, informer.Options{ExampleObject: &unstructured.Unstructured{}})
		_, _ = inf.AddEventHandler(informer.ResourceEventHandlerFuncs{AddFunc: mutate})
		go inf.Run(ctx)
	} else {
		inf := cache.NewSharedIndexInformer(srv, &unstructured.Unstructured{}, 0, cache.Indexers{})
		_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: mutate})
		go inf.RunWithContext(ctx)
	}
	for _, l := range log.Take() { // the warning, logged as the informer was made
		fmt.Println(logPrefix + l)
	}
	select {}
}

// Options.DetectMutations turns the detector on without the environment
// variable, and OnMutation hears its message (the one client-go panics
// with, TestMutationDetector) instead of the panic, so a test or a
// workshop cell can show the detector at work (P19).
func TestOnMutation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := dt.NewServer()
		srv.Write("ADDED", dt.Pod("ns/a"))
		var heard []string
		inf := informer.New(srv, informer.Options{ExampleObject: &unstructured.Unstructured{}, DetectMutations: true,
			OnMutation: func(msg string) { heard = append(heard, msg) }})
		given := make(chan *unstructured.Unstructured, 2)
		_, _ = inf.AddEventHandler(informer.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
			given <- obj.(*unstructured.Unstructured)
		}})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); inf.Run(ctx) }()
		synctest.Wait()
		// The change a handler would make, made while the detector
		// waits for its next look. (A handler that made it in its call
		// would race with that look, in client-go too: the detector reads
		// objects others may write, which is its point. Here the next
		// object the informer hands on orders the change before the look,
		// for the race detector's sake.)
		(<-given).SetLabels(map[string]string{"touched": "yes"})
		srv.Write("ADDED", dt.Pod("ns/b"))
		synctest.Wait()
		<-given
		time.Sleep(time.Second)
		synctest.Wait()
		cancel()
		<-done
		if len(heard) == 0 || heard[0] != "cache *unstructured.Unstructured modified" {
			t.Errorf("OnMutation heard %q", heard)
		}
	})
}
