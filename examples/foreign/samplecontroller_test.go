package foreign

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/controllertest"
)

// What explore finds in kubernetes/sample-controller, unchanged, in
// another process, with a story of a Foo made, scaled, and its
// Deployment renamed:
//
//   - no-stale-writes, in every run where it writes at all: when its
//     Deployment's ADDED event comes before the MODIFIED event of its own
//     status write, it reconciles the Foo its lister still holds, one
//     resourceVersion old, and its PUT of /status is answered 409
//     Conflict, again at each requeue (5 ms, doubling) until the event
//     comes. The conflict keeps the status right; it is a write from a
//     stale read all the same, which a watch event late by a few
//     milliseconds makes in a cluster.
//   - no-duplicates, wherever it sees the rename: it makes a Deployment
//     under the new name and leaves the old one, still controlled by the
//     Foo. sample-controller never deletes a Deployment; only the
//     garbage collector does, with the Foo.
//
// The placements here are three of the full exploration's
// (BenchmarkSampleController explores all of them), each replayed from
// the file its outcome gives, which must break the same invariants.
func TestSampleController(t *testing.T) {
	e := sampleController(t)
	for _, c := range []struct {
		p    controllertest.Placement
		want []string
	}{
		{controllertest.Placement{}, []string{"no-stale-writes", "no-duplicates"}},
		// It sees the rename only after it reconnects.
		{controllertest.Placement{Fault: "disconnect", At: 4, Heal: 5}, []string{"no-stale-writes", "no-duplicates"}},
		// It sees nothing until the end, and makes one Deployment, under
		// the name it has then.
		{controllertest.Placement{Fault: "disconnect", At: 1, Heal: 5}, []string{"no-stale-writes"}},
	} {
		playAndReplay(t, e, c.p, c.want)
	}
}

// BenchmarkSampleController explores the story with sample-controller
// under every placement of the default faults (-v prints the report).
//
//	go test ./examples/foreign -run XXX -bench SampleController -benchtime 1x -v
func BenchmarkSampleController(b *testing.B) {
	e := sampleController(b)
	for range b.N {
		rep, err := e.Run(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(rep.Placements()), "placements/op")
		if testing.Verbose() {
			b.Log(rep)
		}
	}
}

// sampleController is an exploration of the story with
// sample-controller's binary, built here from the module's source, in
// each placement's world.
func sampleController(t testing.TB) controllertest.Explore {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("a controller in another process is settled from what Linux's /proc shows of it (controllertest's outside path)")
	}
	dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "k8s.io/sample-controller").Output()
	if err != nil {
		t.Fatalf("go list -m k8s.io/sample-controller: %v", err)
	}
	crd, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(dir)), "artifacts", "examples", "crd-status-subresource.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "sample-controller")
	if out, err := exec.Command("go", "build", "-o", bin, "k8s.io/sample-controller").CombinedOutput(); err != nil {
		t.Fatalf("go build k8s.io/sample-controller: %v\n%s", err, out)
	}
	story, err := controllertest.ParseStory("sample-controller.story", []byte(sampleStory(string(crd))))
	if err != nil {
		t.Fatal(err)
	}
	return controllertest.Explore{
		Story:      story,
		World:      controllertest.Options{Resources: []string{"deployments"}, Outside: &controllertest.Outside{}},
		Controller: controllertest.Command([]string{bin, "-kubeconfig", "{kubeconfig}"}, controllertest.CommandOptions{}),
		Jobs:       4,
	}
}

// sampleStory is the story, with sample-controller's own CRD manifest.
func sampleStory(crd string) string {
	return "# sample-controller's Foo: made, scaled, its Deployment renamed.\n" +
		"crd\n" + crd + "----\n\n" +
		"create foos ns0/example-foo spec=(deploymentName=example-foo,replicas=1)\n----\n\n" +
		"update foos ns0/example-foo spec=(deploymentName=example-foo,replicas=3)\n----\n\n" +
		"update foos ns0/example-foo spec=(deploymentName=example-bar,replicas=3)\n----\n"
}
