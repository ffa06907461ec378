package controllertest

import (
	"context"
	"os"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

func TestMain(m *testing.M) {
	klog.SetLogger(logr.Discard()) // kube-apiserver's and client-go's logs
	os.Exit(m.Run())
}

// childMaker is a small controller: for each configmap labelled
// role=parent it makes a configmap <name>-child, which it controls. It
// builds its clients from w.Config() and gives its queue w.Clock() and
// w.QueueMetrics(), as a controller under test should.
func childMaker(ctx context.Context, w *World) error {
	cs, err := kubernetes.NewForConfig(w.Config())
	if err != nil {
		return err
	}
	f := informers.NewSharedInformerFactory(cs, 0)
	cms := f.Core().V1().ConfigMaps()
	q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "configmaps", Clock: w.Clock(), MetricsProvider: w.QueueMetrics()})
	defer q.ShutDown()
	enqueue := func(obj any) {
		if k, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
			q.Add(k)
		}
	}
	if _, err := cms.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, n any) { enqueue(n) }}); err != nil {
		return err
	}
	f.Start(ctx.Done())
	defer f.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), cms.Informer().HasSynced) {
		return ctx.Err()
	}
	go func() {
		for {
			k, shut := q.Get()
			if shut {
				return
			}
			if err := makeChild(ctx, cs, cms.Lister(), k); err != nil {
				q.AddRateLimited(k)
			} else {
				q.Forget(k)
			}
			q.Done(k)
		}
	}()
	<-ctx.Done()
	return nil
}

// makeChild reconciles one configmap's key.
func makeChild(ctx context.Context, cs kubernetes.Interface, lister corelisters.ConfigMapLister, key string) error {
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	cm, err := lister.ConfigMaps(ns).Get(name)
	if apierrors.IsNotFound(err) || err == nil && cm.Labels["role"] != "parent" {
		return nil
	}
	if err != nil {
		return err
	}
	yes := true
	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-child",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: name, UID: cm.UID, Controller: &yes}}}}
	_, err = cs.CoreV1().ConfigMaps(ns).Create(ctx, child, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// story parses a story, or fails the test.
func story(t testing.TB, src string) *Story {
	t.Helper()
	s, err := ParseStory("story.txt", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// start starts a world for the test, closed when it ends.
func start(t testing.TB, opts Options) *World {
	t.Helper()
	w, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := w.Close(); err != nil {
			t.Error(err)
		}
	})
	return w
}

// names are the namespace/name of objs.
func names(objs []unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetNamespace()+"/"+o.GetName())
	}
	return out
}
