package reflector_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/reflector"
	"github.com/cachelab/cachelab/store"
)

// A reflector over embedded etcd, in watch-list mode, keeping a plain
// store in step; its trace says which step did what.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	etcd, err := listwatch.StartEmbedded(ctx, listwatch.EmbeddedOptions{})
	if err != nil {
		panic(err)
	}
	defer etcd.Close()
	writer := listwatch.NewWriter(etcd.Client(), listwatch.Pods, listwatch.WriterOptions{})
	lw := listwatch.NewListerWatcher(etcd.Client(), listwatch.Pods, listwatch.Options{})
	if _, err := writer.Create(ctx, examplePod("web")); err != nil {
		panic(err)
	}

	cache := store.New(store.Options{})
	seen := make(chan reflector.Event, 100)
	r := reflector.New(lw, cache, reflector.Options{
		UseWatchList: true,
		Rand:         rand.New(rand.NewPCG(1, 2)),
		Trace:        func(e reflector.Event) { seen <- e },
	})
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()

	show := func(until reflector.Step) {
		for e := range seen {
			switch e.Step {
			case reflector.StepWatchList, reflector.StepWatch:
				fmt.Printf("%s rv=%q\n", e.Step, e.Options.ResourceVersion)
			case reflector.StepReplace:
				fmt.Printf("%s %d object(s) at rv=%s\n", e.Step, e.Count, e.RV)
			case reflector.StepEvent:
				u := e.Object.(*unstructured.Unstructured)
				fmt.Printf("%s %s %s@%s\n", e.Step, e.Type, u.GetName(), u.GetResourceVersion())
			}
			if e.Step == until {
				return
			}
		}
	}
	show(reflector.StepReplace)
	if _, err := writer.Create(ctx, examplePod("db")); err != nil {
		panic(err)
	}
	show(reflector.StepEvent)
	keys := cache.ListKeys()
	slices.Sort(keys)
	fmt.Println("store:", keys, "last synced RV:", r.LastSyncResourceVersion())
	cancel()
	<-done
	// Output:
	// watch-list rv=""
	// event ADDED web@2
	// event BOOKMARK @2
	// replace 1 object(s) at rv=2
	// event ADDED db@3
	// store: [default/db default/web] last synced RV: 3
}

func examplePod(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("Pod")
	u.SetNamespace("default")
	u.SetName(name)
	return u
}
