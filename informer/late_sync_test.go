package informer_test

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/informer"
	dt "github.com/cachelab/cachelab/internal/difftest"
)

// holdFirst is a handler whose first call waits until release is closed.
type holdFirst struct {
	entered chan struct{}
	release chan struct{}
	calls   int
}

func (h *holdFirst) OnAdd(any, bool) {
	h.calls++
	if h.calls == 1 {
		close(h.entered)
		<-h.release
	}
}
func (h *holdFirst) OnUpdate(any, any) {}
func (h *holdFirst) OnDelete(any)      {}

// client-go: shared_informer.go AddEventHandlerWithOptions (P8, P9): a
// handler added after the informer synced has its catch-up adds counted
// before its registration starts watching for the informer's sync
// (client-go starts watchSynced only after the loop that adds them), so
// while the handler holds in its first initial add the registration is
// never synced. cachelab started that watch before the adds and, now and
// then, reported a late registration synced before it had counted any
// (found by go test -race ./sim under load). Not in a synctest bubble: the
// order of goroutines is what is tested, so many handlers are added, each
// a new chance for the old race.
func TestLateRegistrationCountsItsAddsFirst(t *testing.T) {
	const rounds = 300
	for _, st := range bothStacks {
		t.Run(string(st), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			type inf struct {
				name string
				add  func(h *holdFirst) (hasSynced func() bool, remove func())
			}
			if st == informer.Classic {
				clientfeaturestesting.SetFeatureDuringTest(t, features.InOrderInformers, false)
				clientfeaturestesting.SetFeatureDuringTest(t, features.WatchListClient, false)
			}
			cl, cg := dt.NewServer(), dt.NewServer()
			for _, s := range []*dt.Server{cl, cg} {
				for _, k := range []string{"ns/a", "ns/b", "ns/c"} {
					s.Write("ADDED", pod(k))
				}
			}
			cli := informer.New(cl, informer.Options{Stack: st, ExampleObject: &unstructured.Unstructured{}})
			cgi := cache.NewSharedIndexInformer(cg, &unstructured.Unstructured{}, 0, cache.Indexers{})
			go cli.Run(ctx)
			go cgi.RunWithContext(ctx)
			// Synced once their checkers are done: a wait on a channel,
			// not a poll.
			<-cli.HasSyncedChecker().Done()
			<-cgi.HasSyncedChecker().Done()
			infs := []inf{
				{"cachelab", func(h *holdFirst) (func() bool, func()) {
					reg, err := cli.AddEventHandler(h)
					if err != nil {
						t.Fatal(err)
					}
					return reg.HasSynced, func() { _ = cli.RemoveEventHandler(reg) }
				}},
				{"client-go", func(h *holdFirst) (func() bool, func()) {
					reg, err := cgi.AddEventHandler(h)
					if err != nil {
						t.Fatal(err)
					}
					return reg.HasSynced, func() { _ = cgi.RemoveEventHandler(reg) }
				}},
			}
			for _, in := range infs {
				for i := range rounds {
					h := &holdFirst{entered: make(chan struct{}), release: make(chan struct{})}
					hasSynced, remove := in.add(h)
					<-h.entered
					if hasSynced() {
						t.Fatalf("%s, round %d of %d: a late registration reports synced while its handler holds in its first initial add", in.name, i+1, rounds)
					}
					close(h.release)
					remove()
				}
			}
		})
	}
}
