//go:build !race

// The detector catches a data race on purpose: the handler writes an
// object the detector reads on its own goroutine, with nothing ordering
// the two. Under -race the race detector reports it first (and fails the
// test), which is the other way to catch this bug; so this cell runs
// without -race only.

package failures_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/listwatch"
)

// metadataOnly is a transform that keeps only an object's names and
// resourceVersion, as a PartialObjectMetadata: a cache of metadata, and a
// small one to print.
func metadataOnly(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Namespace: u.GetNamespace(), Name: u.GetName(), ResourceVersion: u.GetResourceVersion(),
	}}, nil
}

// A handler that labels the object it was given changes the informer's
// cache behind its back: every other reader now sees a label the server
// never had. The cache mutation detector (on with
// KUBE_CACHE_MUTATION_DETECTOR=true, or DetectMutations) keeps a copy of
// everything it cached and, within a second, prints the object as cached
// (left) next to its copy (right), then panics (here OnMutation hears it
// instead, and the report goes to a buffer, of which a few lines are
// printed).
func Example_cacheMutation() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	etcd, err := listwatch.StartEmbedded(ctx, listwatch.EmbeddedOptions{})
	if err != nil {
		panic(err)
	}
	defer etcd.Close()
	writer := listwatch.NewWriter(etcd.Client(), listwatch.Pods, listwatch.WriterOptions{})
	web := &unstructured.Unstructured{}
	web.SetAPIVersion("v1")
	web.SetKind("Pod")
	web.SetNamespace("shop")
	web.SetName("web")
	if _, err := writer.Create(ctx, web); err != nil {
		panic(err)
	}

	caught := make(chan string, 1)
	var report bytes.Buffer
	inf := informer.New(listwatch.NewListerWatcher(etcd.Client(), listwatch.Pods, listwatch.Options{}), informer.Options{
		ExampleObject:   &unstructured.Unstructured{},
		DetectMutations: true,
		OnMutation:      func(msg string) { caught <- msg },
		MutationReport:  &report,
	})
	if err := inf.SetTransform(metadataOnly); err != nil {
		panic(err)
	}
	inf.AddEventHandler(informer.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			pod := obj.(*metav1.PartialObjectMetadata)
			pod.Labels = map[string]string{"seen-by": "me"} // the bug: label pod.DeepCopy() instead
		},
	})
	done := make(chan struct{})
	go func() { defer close(done); inf.Run(ctx) }()
	msg := <-caught
	cancel()
	<-done
	for _, line := range strings.Split(report.String(), "\n") {
		line = strings.TrimSpace(line)
		for _, start := range []string{"CACHE", "Name:", "Labels:", `(string) (len=7) "seen-by"`} {
			if strings.HasPrefix(line, start) {
				fmt.Println(line)
			}
		}
	}
	fmt.Println("then:", msg)
	// Output:
	// CACHE *unstructured.Unstructured[0] ALTERED!
	// Name: (string) (len=3) "web",                           Name: (string) (len=3) "web",
	// Labels: (map[string]string) (len=1) {                   Labels: (map[string]string) <nil>,
	// (string) (len=7) "seen-by": (string) (len=2) "me"     Annotations: (map[string]string) <nil>,
	// then: cache *unstructured.Unstructured modified
}
