package exercise

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/factory"
	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/internal/dynclient"
	"github.com/cachelab/cachelab/internal/requestlog"
	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/notebooks/08-reconcile/exercise/model"
	"github.com/cachelab/cachelab/notebooks/internal/lab"
	"github.com/cachelab/cachelab/reflector"
)

// wireChecks check a Wire: it runs over an embedded etcd holding two
// pods and a configmap, with every request its informers send written
// down, and so does client-go's dynamic factory wired the recipe's way
// (every informer asked for, then Start, then WaitForCacheSync); the two
// are compared.
func wireChecks(wire model.WireFunc) []lab.Check {
	var (
		once      sync.Once
		mine, ref wiring
		setupErr  error
	)
	both := func() (wiring, wiring, error) {
		once.Do(func() { mine, ref, setupErr = runBoth(wire) })
		return mine, ref, setupErr
	}
	check := func(f func(mine, ref wiring) error) func() error {
		return func() error {
			mine, ref, err := both()
			if err != nil {
				return err
			}
			return f(mine, ref)
		}
	}
	return []lab.Check{
		{ID: "I1", Behaviour: "two controllers, one watch-list per resource", Run: check(func(mine, ref wiring) error {
			if slices.Equal(mine.requests, ref.requests) {
				return nil
			}
			msg := fmt.Sprintf("client-go's factory, wired the recipe's way, sends %q; yours sent %q.", ref.requests, mine.requests)
			if n := count(mine.requests, " pods "); n > 1 {
				msg += fmt.Sprintf(" %d requests for pods are %d informers of pods: did each controller make a factory of its own? Ask one factory for every informer (I1, I7).", n, n)
			}
			if count(mine.requests, " configmaps ") == 0 {
				msg += " Nothing asked the server for configmaps: was the informer asked for after Start? Start starts only what was asked for before it (I2)."
			}
			return fmt.Errorf("%s", msg)
		})},
		{ID: "I1", Behaviour: "the scaler and the labeler share the pods informer", Run: check(func(mine, ref wiring) error {
			switch {
			case mine.nilInformer != "":
				return fmt.Errorf("client-go's factory hands out an informer for each resource asked for (ForResource); yours returned none for %s", mine.nilInformer)
			case mine.shared != ref.shared:
				return fmt.Errorf("client-go's factory gives both controllers the same pods informer (ForResource twice, one informer); yours gave them two, each with its own cache, requests and events")
			}
			return nil
		})},
		{ID: "I2-I3", Behaviour: "every informer synced when Wire returns", Run: check(func(mine, ref wiring) error {
			if mine.err != "" {
				return fmt.Errorf("Wire returned the error %q, where client-go's factory, every informer asked for before Start, had every one synced", mine.err)
			}
			for i, name := range informerNames {
				if mine.synced[i] != ref.synced[i] {
					return fmt.Errorf("the %s informer had not synced when Wire returned, where client-go's had: an informer asked for after Start is not started until the next Start, a factory never started starts nothing, and WaitForCacheSync waits only for what Start started (I2, I3)", name)
				}
			}
			return nil
		})},
		{ID: "I3", Behaviour: "each cache holds what etcd holds", Run: check(func(mine, ref wiring) error {
			for i, name := range informerNames {
				if !slices.Equal(mine.caches[i], ref.caches[i]) {
					return fmt.Errorf("the %s informer's cache holds %q when Wire returns; client-go's holds %q", name, mine.caches[i], ref.caches[i])
				}
			}
			return nil
		})},
	}
}

var informerNames = []string{"scaler's pods", "labeler's pods", "labeler's configmaps"}

// wiring is what one side's wiring did.
type wiring struct {
	requests    []string // sorted
	shared      bool
	nilInformer string
	synced      [3]bool
	caches      [3][]string
	err         string
}

// wireTimeout bounds how long the check waits for Wire: a Wire that waits
// for an informer nothing started would wait for ever.
const wireTimeout = 30 * time.Second

// runBoth runs wire and client-go's reference wiring over one etcd.
func runBoth(wire model.WireFunc) (mine, ref wiring, err error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e, err := listwatch.StartEmbedded(ctx, listwatch.EmbeddedOptions{})
	if err != nil {
		return mine, ref, fmt.Errorf("the lab could not start etcd: %w", err)
	}
	defer e.Close()
	for gvr, keys := range map[schema.GroupVersionResource][]string{Pods: {"shop/web", "shop/db"}, ConfigMaps: {"shop/settings"}} {
		wr := listwatch.NewWriter(e.Client(), resourceOf(gvr), listwatch.WriterOptions{})
		for _, k := range keys {
			o := &unstructured.Unstructured{}
			o.SetAPIVersion("v1")
			o.SetKind(resourceOf(gvr).Kind)
			ns, name, _ := strings.Cut(k, "/")
			o.SetNamespace(ns)
			o.SetName(name)
			if _, err := wr.Create(ctx, o); err != nil {
				return mine, ref, fmt.Errorf("the lab could not write %s: %w", k, err)
			}
		}
	}

	var mineLog, refLog requestlog.Log
	var factories []*factory.Factory
	var mu sync.Mutex
	newFactory := func() *factory.Factory {
		f := factory.New(client(e, &mineLog), 0)
		mu.Lock()
		defer mu.Unlock()
		factories = append(factories, f)
		return f
	}
	wireCtx, stopWire := context.WithCancel(ctx)
	defer stopWire()
	type answer struct {
		w   model.Wired
		err error
	}
	done := make(chan answer, 1)
	go func() {
		var a answer
		a.err = lab.Safely(func() error {
			var err error
			a.w, err = wire(wireCtx, newFactory)
			return err
		})
		done <- a
	}()
	var a answer
	select {
	case a = <-done:
	case <-time.After(wireTimeout):
		return mine, ref, fmt.Errorf("Wire did not return within %v: is it waiting for an informer that nothing started (asked for after Start, or a factory never started)?", wireTimeout)
	}
	if a.err != nil {
		mine.err = a.err.Error()
	}
	for i, inf := range []*informer.SharedIndexInformer{a.w.ScalerPods, a.w.LabelerPods, a.w.LabelerConfigMaps} {
		if inf == nil {
			if mine.nilInformer == "" {
				mine.nilInformer = "the " + informerNames[i] + " informer"
			}
			continue
		}
		mine.synced[i], mine.caches[i] = inf.HasSynced(), keysOf(inf.GetIndexer().List())
	}
	mine.shared = a.w.ScalerPods != nil && a.w.ScalerPods == a.w.LabelerPods
	mine.requests = mineLog.Lines()

	cg := dynamicinformer.NewDynamicSharedInformerFactory(dynclient.New(client(e, &refLog)), 0)
	infs := []cache.SharedIndexInformer{cg.ForResource(Pods).Informer(), cg.ForResource(Pods).Informer(), cg.ForResource(ConfigMaps).Informer()}
	cg.Start(ctx.Done())
	cg.WaitForCacheSync(ctx.Done())
	for i, inf := range infs {
		ref.synced[i], ref.caches[i] = inf.HasSynced(), keysOf(inf.GetIndexer().List())
	}
	ref.shared = infs[0] == infs[1]
	ref.requests = refLog.Lines()

	stopWire()
	cancel()
	mu.Lock()
	defer mu.Unlock()
	for _, f := range factories {
		f.Shutdown()
	}
	cg.Shutdown()
	return mine, ref, nil
}

func keysOf(list []any) []string {
	var out []string
	for _, o := range list {
		k, _ := cache.MetaNamespaceKeyFunc(o)
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func count(lines []string, what string) int {
	n := 0
	for _, l := range lines {
		if strings.Contains(l, what) {
			n++
		}
	}
	return n
}

func resourceOf(gvr schema.GroupVersionResource) listwatch.Resource {
	if gvr == ConfigMaps {
		return listwatch.Resource{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}
	}
	return listwatch.Pods
}

// client is a factory's client over e, each request written to log.
func client(e *listwatch.Embedded, log *requestlog.Log) func(schema.GroupVersionResource, string) reflector.ListerWatcher {
	return func(gvr schema.GroupVersionResource, ns string) reflector.ListerWatcher {
		return log.Wrap(listwatch.NewListerWatcher(e.Client(), resourceOf(gvr), listwatch.Options{Namespace: ns}), gvr.Resource)
	}
}
