// Package full links into a run the parts that make cachelab's build
// heavy (sim/world's Full): kube-apiserver's storage and watch cache
// (package apistorage) and kube-apiserver over HTTPS (package
// kubeapiserver), the watch-cache world; and client-go's typed
// SharedInformerFactory, the reference package factory is compared
// with. Importing it is enough:
//
//	import _ "github.com/cachelab/cachelab/sim/full"
//
// cachelab's binary imports it when built with -tags full (as releases
// are), and every test that runs those parts imports it. A build without
// it runs everything else, and says so when a scenario needs them.
package full

import (
	"context"
	"fmt"
	"runtime/pprof"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/cachelab/cachelab/apistorage"
	"github.com/cachelab/cachelab/apistorage/source"
	"github.com/cachelab/cachelab/crd"
	"github.com/cachelab/cachelab/kubeapiserver"
	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/world"
)

func init() {
	world.Link(world.Full{
		NewAPIServer:       newAPIServer,
		Waiting:            waiting,
		ServeHTTPS:         serveHTTPS,
		NewClientGoFactory: newClientGoFactory,
		TypedObject:        typedObject,
		CustomResource:     customResource,
	})
	scenario.LinkCustomResources(func(manifest []byte) (scenario.Admit, error) {
		return customResource(manifest)
	})
}

// customResource is what kube-apiserver's apiextensions does with a
// custom resource's writes (package crd).
func customResource(manifest []byte) (func(obj, old map[string]any) error, error) {
	d, err := crd.Compile(manifest)
	if err != nil {
		return nil, err
	}
	return d.Admit, nil
}

var _ world.Server = (*apistorage.ListerWatcher)(nil)

// apiServer is an apistorage.Server as the world knows it.
type apiServer struct{ *apistorage.Server }

func (a apiServer) ListerWatcher(namespace string) world.Server {
	return a.Server.ListerWatcher(namespace)
}

func newAPIServer(ctx context.Context, client *clientv3.Client, res listwatch.Resource, clk clock.WithTicker, name string) (world.APIServer, error) {
	s, err := apistorage.New(ctx, client, res, apistorage.Options{Cache: true, Clock: clk, Name: name})
	if err != nil {
		return nil, err
	}
	return apiServer{s}, nil
}

func waiting(dump []string, servers ...world.APIServer) int {
	ss := make([]*apistorage.Server, len(servers))
	for i, s := range servers {
		ss[i] = s.(apiServer).Server
	}
	return apistorage.Waiting(dump, ss...)
}

// httpsServer is a kubeapiserver.Server as the world knows it.
type httpsServer struct{ *kubeapiserver.Server }

func serveHTTPS(ctx context.Context, apis []world.APIServer, clk clock.Clock, labels func(user string) pprof.LabelSet) (world.HTTPSServer, error) {
	var also []*apistorage.Server
	for _, a := range apis[1:] {
		also = append(also, a.(apiServer).Server)
	}
	s, err := kubeapiserver.New(ctx, apis[0].(apiServer).Server, kubeapiserver.Options{Clock: clk, Labels: labels, Also: also})
	if err != nil {
		return nil, err
	}
	return httpsServer{s}, nil
}

func (h httpsServer) Watches(user string) (open int, taken int64) {
	w := h.Server.Watches(user)
	return w.Open, w.Taken
}

func (h httpsServer) LastListFrom(user string) (source.Source, bool) {
	last, ok := h.Server.LastList(user)
	return last.From, ok
}

func (h httpsServer) Endpoint(user, host string) (world.Endpoint, error) {
	cc, err := h.Server.Client(user)
	if err != nil {
		return world.Endpoint{}, err
	}
	cc.Host = host
	tlsc, err := cc.TLS()
	if err != nil {
		return world.Endpoint{}, err
	}
	return world.Endpoint{Host: host, TLS: tlsc, REST: cc.REST()}, nil
}

// clientGoFactory is client-go's typed factory, with no client: the
// runner gives every informer through InformerFor.
type clientGoFactory struct {
	informers.SharedInformerFactory
}

func newClientGoFactory(resync time.Duration) world.ClientGoFactory {
	return clientGoFactory{informers.NewSharedInformerFactoryWithOptions(nil, resync)}
}

// typedObject is client-go's Go type for gvk, from the scheme its
// typed clients and informers use.
func typedObject(gvk schema.GroupVersionKind) runtime.Object {
	if !scheme.Scheme.Recognizes(gvk) {
		// A custom resource's: client-go's dynamic clients and
		// informers hold it as an *Unstructured, whatever its kind.
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		return u
	}
	obj, err := scheme.Scheme.New(gvk)
	if err != nil {
		panic(fmt.Sprintf("sim/full: client-go has no type for %s: %v", gvk, err)) // the built-in resources all have one
	}
	return obj
}

func (f clientGoFactory) InformerFor(obj runtime.Object, newFunc func(resync time.Duration) cache.SharedIndexInformer) cache.SharedIndexInformer {
	return f.SharedInformerFactory.InformerFor(obj, func(_ kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
		return newFunc(resync)
	})
}
