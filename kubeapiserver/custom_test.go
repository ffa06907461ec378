package kubeapiserver_test

import (
	"context"
	"net"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/cachelab/cachelab/apistorage"
	"github.com/cachelab/cachelab/internal/apiworld"
	"github.com/cachelab/cachelab/kubeapiserver"
	"github.com/cachelab/cachelab/listwatch"
)

// foos is a custom resource, kept where kube-apiserver keeps one.
var foos = listwatch.Resource{Group: "example.com", Version: "v1", Resource: "foos", Kind: "Foo", Namespaced: true, Store: "example.com/foos"}

// A server serves a custom resource's group version beside the core
// group's, each server with a scheme of its own: client-go's dynamic
// client lists and watches it, and discovery names it.
func TestServesACustomResource(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := listwatch.StartEmbedded(ctx, listwatch.EmbeddedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	clk := clocktesting.NewFakeClock(apiworld.Epoch)
	pods, err := apistorage.New(ctx, e.Client(), listwatch.Pods, apistorage.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer pods.Close()
	st, err := apistorage.New(ctx, e.Client(), foos, apistorage.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	w := listwatch.NewWriter(e.Client(), foos, listwatch.WriterOptions{})
	f := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Foo",
		"metadata": map[string]any{"namespace": "ns0", "name": "f"}, "spec": map[string]any{"replicas": int64(2)}}}
	if _, err := w.Create(ctx, f); err != nil {
		t.Fatal(err)
	}
	srv, err := kubeapiserver.New(ctx, pods, kubeapiserver.Options{Also: []*apistorage.Server{st}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cc, err := srv.Client("kubectl")
	if err != nil {
		t.Fatal(err)
	}
	cfg := cc.REST()
	cfg.Dial = (&net.Dialer{}).DialContext
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer utilnet.CloseIdleConnectionsFor(hc.Transport)
	dyn, err := dynamic.NewForConfigAndClient(cfg, hc)
	if err != nil {
		t.Fatal(err)
	}
	list, err := dyn.Resource(foos.GroupVersionResource()).Namespace("ns0").List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.Items[0].GetName() != "f" {
		t.Fatalf("LIST foos: %v, %v; want ns0/f", list, err)
	}
	wi, err := dyn.Resource(foos.GroupVersionResource()).Watch(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatalf("WATCH foos: %v", err)
	}
	defer wi.Stop()
	ev := <-wi.ResultChan()
	if u, ok := ev.Object.(*unstructured.Unstructured); !ok || u.GetName() != "f" {
		t.Errorf("WATCH foos: first event %v %T; want ADDED ns0/f", ev.Type, ev.Object)
	}
}
