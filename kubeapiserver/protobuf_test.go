package kubeapiserver_test

import (
	"bytes"
	"context"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/cachelab/cachelab/apistorage"
	"github.com/cachelab/cachelab/internal/apiworld"
	"github.com/cachelab/cachelab/kubeapiserver"
	"github.com/cachelab/cachelab/listwatch"
)

// A typed clientset made from a kubeconfig, with no ContentType, sends
// its creates, updates and deletes of built-in kinds as protobuf
// (client-go: rest/request.go UseProtobufAsDefault), and the server
// takes them as kube-apiserver does: each object it answers is the one
// it answers a clientset that sends JSON, but for what the server picks
// anew each time (uid, resourceVersion, creationTimestamp, the times in
// managedFields). A delete whose uid precondition is not the object's is
// 409, so the protobuf DeleteOptions was read. Every response is JSON.
func TestTypedClientWritesProtobufBodies(t *testing.T) {
	wd := apiworld.StartCluster(t)
	js := typedClient(t, wd, "json", runtime.ContentTypeJSON)
	pb := typedClient(t, wd, "protobuf", "")
	ctx := context.Background()
	if _, err := pb.CoreV1().Namespaces().Create(ctx, namespace("ns0"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace ns0 from protobuf: %v", err)
	}

	t.Run("namespace", func(t *testing.T) {
		sameThroughBoth(t, js, pb, func(c kubernetes.Interface) typed[*corev1.Namespace] { return c.CoreV1().Namespaces() },
			func() *corev1.Namespace { return namespace("ns1") }, nil) // a namespace is not updated (see Options.Namespaces)
	})
	t.Run("configmap", func(t *testing.T) {
		sameThroughBoth(t, js, pb, func(c kubernetes.Interface) typed[*corev1.ConfigMap] { return c.CoreV1().ConfigMaps("ns0") },
			configMap, func(cm *corev1.ConfigMap) { cm.Data["k"] = "v2" })
	})
	t.Run("secret", func(t *testing.T) {
		sameThroughBoth(t, js, pb, func(c kubernetes.Interface) typed[*corev1.Secret] { return c.CoreV1().Secrets("ns0") },
			secret, func(s *corev1.Secret) { s.Data["k"] = []byte{0, 1, 2} })
	})
	t.Run("pod", func(t *testing.T) {
		sameThroughBoth(t, js, pb, func(c kubernetes.Interface) typed[*corev1.Pod] { return c.CoreV1().Pods("ns0") },
			pod, func(p *corev1.Pod) { p.Labels["app"] = "y" })
	})
	t.Run("deployment", func(t *testing.T) {
		sameThroughBoth(t, js, pb, func(c kubernetes.Interface) typed[*appsv1.Deployment] { return c.AppsV1().Deployments("ns0") },
			deployment, func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To(int32(3)) })
	})

	js.wire.want(t, runtime.ContentTypeJSON)
	pb.wire.want(t, runtime.ContentTypeProtobuf)
}

// typed is what the test uses of a typed client of one resource:
// client-go's gentype.Client and its siblings have these methods.
type typed[T metav1.Object] interface {
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
}

// sameThroughBoth takes an object through its life (lifecycle) with the
// JSON clientset, then, under the same name, with the protobuf one, and
// compares what the server answered each.
func sameThroughBoth[T metav1.Object](t *testing.T, js, pb *clientset, client func(kubernetes.Interface) typed[T], obj func() T, change func(T)) {
	t.Helper()
	want := lifecycle(t, client(js), obj(), change)
	got := lifecycle(t, client(pb), obj(), change)
	for _, o := range slices.Concat(want, got) {
		picked(o)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the server's answers to protobuf bodies (+) and to JSON ones (-):\n%s", diff)
	}
}

// lifecycle creates obj through c, updates it with change (unless nil),
// is refused a delete with a uid precondition that is not the object's,
// deletes it with its own, and returns what the server answered: the
// object created, the object updated, and a GET of it before the
// delete.
func lifecycle[T metav1.Object](t *testing.T, c typed[T], obj T, change func(T)) []T {
	t.Helper()
	ctx := context.Background()
	made, err := c.Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating %s: %v", obj.GetName(), err)
	}
	out := []T{made}
	if change != nil {
		got, err := c.Get(ctx, obj.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		change(got)
		updated, err := c.Update(ctx, got, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("updating %s: %v", obj.GetName(), err)
		}
		out = append(out, updated)
	}
	last, err := c.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, last)

	// kube-apiserver: a delete whose preconditions the object does not
	// meet is 409 Conflict (registry store.go Delete).
	other := types.UID("not-" + last.GetUID())
	err = c.Delete(ctx, obj.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &other}})
	if !apierrors.IsConflict(err) || code(err) != http.StatusConflict {
		t.Errorf("a delete of %s with uid precondition %s: %v; want 409 Conflict", obj.GetName(), other, err)
	}
	uid := last.GetUID()
	if err := c.Delete(ctx, obj.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); err != nil {
		t.Fatalf("deleting %s with uid precondition %s: %v", obj.GetName(), uid, err)
	}
	if _, err := c.Get(ctx, obj.GetName(), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("GET of %s after its delete: %v; want 404", obj.GetName(), err)
	}
	return out
}

// picked clears what the server picks anew for each object, whoever
// sends it: its uid, resourceVersion and creationTimestamp, and the times
// in its managedFields (the wall clock's).
func picked(o metav1.Object) {
	o.SetUID("")
	o.SetResourceVersion("")
	o.SetCreationTimestamp(metav1.Time{})
	mf := o.GetManagedFields()
	for i := range mf {
		mf[i].Time = nil
	}
	o.SetManagedFields(mf)
}

// A protobuf body the server cannot take is refused with a Status, 4xx,
// never 500: one that does not decode, or is of a kind that has no Go
// type here, is 400 (the filter's, as kube-apiserver's create handler
// refuses a body it cannot decode); one that decodes to another kind
// than the resource's is 400 from the handler, as its JSON would be.
func TestProtobufBodiesRefused(t *testing.T) {
	wd := apiworld.StartCluster(t)
	pb := typedClient(t, wd, "protobuf", "")
	ctx := context.Background()
	if _, err := pb.CoreV1().Namespaces().Create(ctx, namespace("ns0"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, method, path string
		body               []byte
		want               string // in the Status's message
	}{
		{"garbage after the prefix", "POST", "/api/v1/namespaces/ns0/configmaps", []byte("k8s\x00\xff\xff\xff"), "as a ConfigMap: unexpected EOF"},
		{"no prefix", "PUT", "/api/v1/namespaces/ns0/configmaps/cm", []byte(`{"kind":"ConfigMap"}`), "does not appear to be a protobuf message"},
		{"no body", "POST", "/apis/apps/v1/namespaces/ns0/deployments", nil, "empty data"},
		{"a kind without a Go type", "POST", "/api/v1/namespaces/ns0/pods", envelope(t, "example.com/v1", "Foo"), `no kind "Foo" is registered`},
		{"another kind", "POST", "/api/v1/namespaces/ns0/configmaps", encode(t, secret()), "Secret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := pb.CoreV1().RESTClient().Verb(tc.method).AbsPath(tc.path).
				SetHeader("Content-Type", runtime.ContentTypeProtobuf).Body(tc.body).Do(ctx).Error()
			if code(err) != http.StatusBadRequest || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s %s: %v (%d); want 400 saying %q", tc.method, tc.path, err, code(err), tc.want)
			}
		})
	}
	if list, err := pb.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != 0 {
		t.Errorf("the configmaps after the refused writes: %v, %v; want none", list, err)
	}
}

// A protobuf body sent to a custom resource is left as it came, and the
// handler answers 415, naming the media type it takes: a custom resource
// has no Go type to decode it into, here as in kube-apiserver.
func TestProtobufBodyOfACustomResource(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := listwatch.StartEmbedded(ctx, listwatch.EmbeddedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	clk := clocktesting.NewFakeClock(apiworld.Epoch)
	var storages []*apistorage.Server
	for _, res := range []listwatch.Resource{listwatch.Pods, foos} {
		st, err := apistorage.New(ctx, e.Client(), res, apistorage.Options{Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		storages = append(storages, st)
	}
	srv, err := kubeapiserver.New(ctx, storages[0], kubeapiserver.Options{Writes: true, Also: storages[1:]})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cc, err := srv.Client("kubectl")
	if err != nil {
		t.Fatal(err)
	}
	hc, err := rest.HTTPClientFor(cc.REST())
	if err != nil {
		t.Fatal(err)
	}
	defer utilnet.CloseIdleConnectionsFor(hc.Transport)
	c, err := rest.UnversionedRESTClientForConfigAndClient(dynamic.ConfigFor(cc.REST()), hc)
	if err != nil {
		t.Fatal(err)
	}
	foo := `{"apiVersion":"example.com/v1","kind":"Foo","metadata":{"name":"f"}}`
	for _, tc := range []struct {
		contentType string
		body        []byte
		want        int32
	}{
		{runtime.ContentTypeProtobuf, envelope(t, "example.com/v1", "Foo"), http.StatusUnsupportedMediaType},
		{runtime.ContentTypeJSON, []byte(foo), 0},
	} {
		err := c.Post().AbsPath("/apis/example.com/v1/namespaces/ns0/foos").SetHeader("Content-Type", tc.contentType).Body(tc.body).Do(ctx).Error()
		if code(err) != tc.want || (tc.want != 0 && !strings.Contains(err.Error(), "application/json")) {
			t.Errorf("creating a foo as %s: %v (%d); want %d", tc.contentType, err, code(err), tc.want)
		}
	}
}

// clientset is a typed clientset, and what went over its wire.
type clientset struct {
	*kubernetes.Clientset
	wire *wire
}

// typedClient is a typed clientset of user's, as a controller makes one
// from a kubeconfig; contentType, unless "", is its rest.Config's
// ContentType and AcceptContentTypes.
func typedClient(t *testing.T, wd *apiworld.World, user, contentType string) *clientset {
	t.Helper()
	cfg, hc := wd.HTTPClient(t, user)
	cfg.QPS, cfg.Burst = -1, 0 // no rate limiter: a test's few requests need not wait for the wall clock
	if contentType != "" {
		cfg.ContentType, cfg.AcceptContentTypes = contentType, contentType
	}
	w := &wire{rt: hc.Transport}
	cs, err := kubernetes.NewForConfigAndClient(cfg, &http.Client{Transport: w})
	if err != nil {
		t.Fatal(err)
	}
	return &clientset{Clientset: cs, wire: w}
}

// wire is a transport that notes the media type of each request body it
// sends and of each response it gets.
type wire struct {
	rt   http.RoundTripper
	mu   sync.Mutex
	sent []string // "POST /api/v1/namespaces application/json", one per request with a body
	got  []string // "POST /api/v1/namespaces application/json", one per response
}

func (w *wire) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := w.rt.RoundTrip(req)
	w.mu.Lock()
	defer w.mu.Unlock()
	if req.Body != nil {
		w.sent = append(w.sent, req.Method+" "+req.URL.Path+" "+mediaType(req.Header))
	}
	if err == nil {
		w.got = append(w.got, req.Method+" "+req.URL.Path+" "+mediaType(resp.Header))
	}
	return resp, err
}

// want checks that every body went out as media and every response came
// back as JSON.
func (w *wire) want(t *testing.T, media string) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.sent) == 0 {
		t.Errorf("no request with a body went out; want some as %s", media)
	}
	for _, s := range w.sent {
		if !strings.HasSuffix(s, " "+media) {
			t.Errorf("a body went out as %q; want %s", s, media)
		}
	}
	for _, g := range w.got {
		if !strings.HasSuffix(g, " "+runtime.ContentTypeJSON) {
			t.Errorf("a response came back as %q; want %s", g, runtime.ContentTypeJSON)
		}
	}
}

// mediaType is a header's Content-Type without its parameters.
func mediaType(h http.Header) string {
	m, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	return m
}

// envelope is a protobuf body of a kind with no fields, as a typed
// client would send one: the k8s\x00 prefix and a runtime.Unknown.
func envelope(t *testing.T, apiVersion, kind string) []byte {
	t.Helper()
	return encode(t, &runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: apiVersion, Kind: kind}})
}

// encode is obj as a protobuf body. A typed object must have its
// apiVersion and kind set: the serializer writes them as they are.
func encode(t *testing.T, obj runtime.Object) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := protobuf.NewSerializer(nil, nil).Encode(obj, &b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func namespace(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"team": "a"}}}
}

func configMap() *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Labels: map[string]string{"app": "x"}},
		Data: map[string]string{"k": "v"}, BinaryData: map[string][]byte{"b": {0xff}}}
}

// secret has its apiVersion and kind, for encode.
func secret() *corev1.Secret {
	return &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}, ObjectMeta: metav1.ObjectMeta{Name: "s"},
		Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"k": []byte("v")}}
}

func pod() *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"app": "x"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox", Command: []string{"sleep", "1"}}}}}
}

func deployment() *appsv1.Deployment {
	labels := map[string]string{"app": "d"}
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
			},
		}}
}
