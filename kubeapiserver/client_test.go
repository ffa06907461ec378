package kubeapiserver_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/cachelab/cachelab/internal/apiworld"
)

// A client that knows nothing of cachelab finds the server as it finds a
// cluster: from a kubeconfig, through discovery, then by GET, LIST and
// WATCH on the resource discovery names. client-go's own discovery,
// kubeconfig loader and dynamic client are that client here.
func TestClientGoFindsAndReadsPods(t *testing.T) {
	wd := apiworld.Start(t, true)
	wd.Create(t, apiworld.Pod("ns0", "a", nil), apiworld.Pod("ns1", "b", nil))
	cc, err := wd.Server.Client("kubectl")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := cc.WriteKubeconfig(path, "kubectl", "ns0"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the kubeconfig: %v, mode %v; want 0600", err, fi.Mode())
	}
	if err := cc.WriteKubeconfig(path, "kubectl", ""); err == nil {
		t.Error("WriteKubeconfig wrote over a file that was there")
	}
	loaded := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: path}, nil)
	cfg, err := loaded.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	if ns, _, err := loaded.Namespace(); err != nil || ns != "ns0" {
		t.Errorf("the kubeconfig's namespace: %q, %v; want ns0", ns, err)
	}
	cfg.Dial = (&net.Dialer{}).DialContext // a transport of its own, closed below
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer utilnet.CloseIdleConnectionsFor(hc.Transport)
	disc, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, hc)
	if err != nil {
		t.Fatal(err)
	}
	rl, err := disc.ServerResourcesForGroupVersion("v1")
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(rl.APIResources, func(r metav1.APIResource) bool { return r.Name == "pods" })
	if i < 0 || !rl.APIResources[i].Namespaced || !slices.Contains(rl.APIResources[i].Verbs, "watch") {
		t.Fatalf("discovery of v1: %+v; want pods, namespaced, with watch", rl.APIResources)
	}
	dyn, err := dynamic.NewForConfigAndClient(cfg, hc)
	if err != nil {
		t.Fatal(err)
	}
	pods := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "pods"})
	got, err := pods.Namespace("ns0").Get(context.Background(), "a", metav1.GetOptions{})
	if err != nil || got.GetName() != "a" || got.GetResourceVersion() != "2" {
		t.Errorf("GET ns0/a: %v, %v", got, err)
	}
	if _, err := pods.Namespace("ns0").Get(context.Background(), "nope", metav1.GetOptions{}); err == nil {
		t.Error("GET of a pod that does not exist succeeded")
	}
	if err := pods.Namespace("ns0").Delete(context.Background(), "a", metav1.DeleteOptions{}); err == nil {
		t.Error("DELETE succeeded on a server that serves only reads")
	}
	list, err := pods.List(context.Background(), metav1.ListOptions{})
	if err != nil || len(list.Items) != 2 {
		t.Errorf("LIST: %v, %v", list, err)
	}
	if rs := wd.Server.Requests("kubectl"); len(rs) < 5 {
		t.Errorf("the server's log of the user's requests: %v", rs)
	}
	// Without a client certificate the server answers 401.
	anon := rest.CopyConfig(cfg)
	anon.CertData, anon.KeyData = nil, nil
	anonHC, err := rest.HTTPClientFor(anon)
	if err != nil {
		t.Fatal(err)
	}
	defer utilnet.CloseIdleConnectionsFor(anonHC.Transport)
	anonDyn, err := dynamic.NewForConfigAndClient(anon, anonHC)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := anonDyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "pods"}).List(context.Background(), metav1.ListOptions{}); err == nil {
		t.Error("a client without a certificate listed pods")
	}
}
