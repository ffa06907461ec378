package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/wire"
)

// Options says which cluster: a kubeconfig and a context in it.
type Options struct {
	// Kubeconfig is the kubeconfig file; "" reads what kubectl reads
	// (the files in KUBECONFIG, else ~/.kube/config).
	Kubeconfig string
	// Context is the kubeconfig's context to use; "" for its current one.
	Context string
}

// Cluster is a cluster a run can reach: its kubeconfig read, its server
// answering, pods served.
type Cluster struct {
	cfg     *rest.Config
	context string
	version string
	dyn     dynamic.Interface
	rest    rest.Interface
	// serviceAccounts is whether the server serves serviceaccounts: a
	// real cluster does, and refuses a pod until its namespace's default
	// service account exists (its ServiceAccount admission plugin).
	serviceAccounts bool
}

var (
	podsGVR       = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	saGVR         = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
)

// Open reads the kubeconfig and asks the server for its version and its
// core resources: a cluster that cannot be reached, or does not serve
// pods and namespaces, is said so before a run makes anything there. A
// kubeconfig that names no cluster to use is a *KubeconfigError, found
// before anything is reached.
// Open writes nothing, not even to the kubeconfig (client-go may rewrite
// a kubeconfig to migrate it or to keep a refreshed token; neither here).
func Open(ctx context.Context, opts Options) (*Cluster, error) {
	cfg, name, err := loadKubeconfig(opts)
	if err != nil {
		return nil, err
	}
	cfg.AuthConfigPersister = nil // a refreshed token stays in memory
	c := &Cluster{cfg: cfg, context: name}
	if err := c.probe(ctx); err != nil {
		return nil, fmt.Errorf("the cluster of context %q (%s): %w", name, cfg.Host, err)
	}
	return c, nil
}

// where names the kubeconfig files a rule set reads, for messages.
func where(rules *clientcmd.ClientConfigLoadingRules) string {
	if rules.ExplicitPath != "" {
		return rules.ExplicitPath
	}
	if len(rules.Precedence) == 1 {
		return rules.Precedence[0]
	}
	return fmt.Sprintf("%v", rules.Precedence)
}

// probe asks the server for its version and its core resources, within
// 15 s.
func (c *Cluster) probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	rc := c.Config()
	rc.NegotiatedSerializer = codecs.WithoutConversion()
	var err error
	if c.rest, err = rest.UnversionedRESTClientFor(rc); err != nil {
		return err
	}
	var v version.Info
	if err := getJSON(ctx, c.rest, "/version", &v); err != nil {
		return fmt.Errorf("no answer to GET /version: %w", err)
	}
	c.version = v.GitVersion
	var core metav1.APIResourceList
	if err := getJSON(ctx, c.rest, "/api/v1", &core); err != nil {
		return fmt.Errorf("no answer to GET /api/v1: %w", err)
	}
	served := map[string]bool{}
	for _, r := range core.APIResources {
		served[r.Name] = true
	}
	for _, r := range []string{"pods", "namespaces"} {
		if !served[r] {
			return fmt.Errorf("the server does not serve %s", r)
		}
	}
	c.serviceAccounts = served["serviceaccounts"]
	dyn, err := dynamic.NewForConfig(c.Config())
	if err != nil {
		return err
	}
	c.dyn = dyn
	return ctx.Err()
}

// codecs is what the cluster's REST client needs to send and read JSON.
// Its answers are read raw, so it registers no API group's types: the
// kubernetes/scheme of client-go's discovery client would compile every
// group's (k8s.io/api), a tenth of cachelab's build, for two GETs.
var codecs = serializer.NewCodecFactory(runtime.NewScheme())

// getJSON GETs path and decodes its JSON answer into out, as client-go's
// discovery client reads /version and /api/v1.
func getJSON(ctx context.Context, rc rest.Interface, path string, out any) error {
	raw, err := rc.Get().AbsPath(path).Do(ctx).Raw()
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("its answer is not what kube-apiserver answers: %w", err)
	}
	return nil
}

// Config is a copy of the cluster's client configuration, with a dialer
// of its own: client-go shares a cached transport between configurations
// that are alike, and each side of a comparison must have its own
// connections (close its idle connections when done).
func (c *Cluster) Config() *rest.Config {
	cfg := rest.CopyConfig(c.cfg)
	cfg.Dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	return cfg
}

// Wire is the configuration of package wire's client for the cluster:
// its address, and client-go's transport for the kubeconfig, which turns
// its credentials (a client certificate, a token, an exec plugin) into
// requests; nothing in it decides what is asked or how an answer is read.
func (c *Cluster) Wire() (wire.Config, error) { return wireConfig(c.Config()) }

func wireConfig(cfg *rest.Config) (wire.Config, error) {
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return wire.Config{}, err
	}
	return wire.Config{Host: cfg.Host, Transport: rt}, nil
}

// Describe says which cluster: its server, the context, and its version.
func (c *Cluster) Describe() string {
	return fmt.Sprintf("%s (context %s, %s)", c.cfg.Host, c.context, c.version)
}

// Host is the server's address.
func (c *Cluster) Host() string { return c.cfg.Host }

// Namespace is the namespace a run made for itself, and its writes there
// (Of: writer.go).
type Namespace struct {
	c       *Cluster
	name    string
	objects map[string]*Objects // by resource, each made at its first use
	rest    rest.Interface      // for DELETE, whose answer the dynamic client drops
}

// Begin makes the run's namespace, named prefix and five random
// characters (the server picks them: generateName), labelled as
// cachelab's, and waits until pods can be made in it: on a real cluster,
// until its default service account exists.
func (c *Cluster) Begin(ctx context.Context, prefix string) (*Namespace, error) {
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetGenerateName(prefix)
	ns.SetLabels(map[string]string{"app.kubernetes.io/managed-by": "cachelab"})
	made, err := c.dyn.Resource(namespacesGVR).Create(ctx, ns, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("making the run's namespace: %w", err)
	}
	n := &Namespace{c: c, name: made.GetName(), objects: map[string]*Objects{}, rest: c.rest}
	if c.serviceAccounts {
		if err := n.waitServiceAccount(ctx); err != nil {
			_ = n.End(context.WithoutCancel(ctx))
			return nil, err
		}
	}
	return n, nil
}

// waitServiceAccount waits, for at most 60 s, for the namespace's default
// service account, which the cluster's service account controller makes:
// until then its ServiceAccount admission plugin refuses every pod.
func (n *Namespace) waitServiceAccount(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	sa := n.c.dyn.Resource(saGVR).Namespace(n.name)
	for {
		_, err := sa.Get(ctx, "default", metav1.GetOptions{})
		if err == nil {
			return nil
		}
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("the run's namespace %s: its default service account: %w", n.name, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the run's namespace %s: its default service account did not appear in 60 s "+
				"(the cluster's service account controller makes it; pods are refused until it does)", n.name)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Name is the namespace's name.
func (n *Namespace) Name() string { return n.name }

// End deletes the run's objects (pods, configmaps, secrets: Kept) and
// then its namespace, and waits, for at most 60 s, until the namespace
// is gone: on a real cluster it is Terminating for a moment while its
// namespace controller empties it. Deleting the objects first leaves
// that controller nothing to do, and leaves nothing behind on a server
// that has none (in process). An object of the run's that still has
// finalizers (a scenario's, which no controller of the cluster's
// removes) has them taken off first: it would hold the namespace
// Terminating for ever. End
// deletes nothing outside the namespace, and nothing it did not make: it
// deletes the namespace only if it still carries the run's label.
func (n *Namespace) End(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	nss := n.c.dyn.Resource(namespacesGVR)
	cur, err := nss.Get(ctx, n.name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("the run's namespace %s: %w", n.name, err)
	case cur.GetLabels()["app.kubernetes.io/managed-by"] != "cachelab":
		return fmt.Errorf("the namespace %s is no longer labelled as cachelab's: left as it is", n.name)
	}
	var errs []error
	for _, res := range Kept {
		if _, used := n.objects[res.Resource]; !used && res != listwatch.Pods {
			continue // the run wrote none: no request for it
		}
		api := n.c.dyn.Resource(res.GroupVersionResource()).Namespace(n.name)
		list, err := api.List(ctx, metav1.ListOptions{})
		if err != nil {
			errs = append(errs, fmt.Errorf("listing the run's %s: %w", res.Resource, err))
			continue
		}
		for _, o := range list.Items {
			if err := unfinalize(ctx, api, &o); err != nil {
				errs = append(errs, fmt.Errorf("taking the finalizers off %s %s/%s: %w", res.Kind, n.name, o.GetName(), err))
				continue
			}
			if err := api.Delete(ctx, o.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("deleting %s %s/%s: %w", res.Kind, n.name, o.GetName(), err))
			}
		}
	}
	uid := cur.GetUID()
	err = nss.Delete(ctx, n.name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) {
		return errors.Join(append(errs, fmt.Errorf("deleting the run's namespace %s: %w", n.name, err))...)
	}
	for {
		_, err := nss.Get(ctx, n.name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return errors.Join(errs...)
		}
		select {
		case <-ctx.Done():
			return errors.Join(append(errs, fmt.Errorf("the run's namespace %s is still there after 60 s (Terminating): "+
				"`kubectl get namespace %s -o yaml` says what holds it", n.name, n.name))...)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// unfinalize takes o's finalizers off, if it has any, reading it again
// after a conflict (a controller of the cluster's may write it too).
func unfinalize(ctx context.Context, api dynamic.ResourceInterface, o *unstructured.Unstructured) error {
	for len(o.GetFinalizers()) > 0 {
		o.SetFinalizers(nil)
		_, err := api.Update(ctx, o, metav1.UpdateOptions{})
		switch {
		case err == nil, apierrors.IsNotFound(err):
			return nil // taken off, or the last one's going deleted it
		case !apierrors.IsConflict(err):
			return err
		}
		if o, err = api.Get(ctx, o.GetName(), metav1.GetOptions{}); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		}
	}
	return nil
}
