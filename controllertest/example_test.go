package controllertest_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/cachelab/cachelab/controllertest"
	"github.com/cachelab/cachelab/examples/fooctl"
)

// Explore a small operator (package fooctl's, fixed) under every
// placement of a watch the server ends: each placement is played in a
// world of its own, the operator started anew in it, and the invariants
// checked at the end. The report groups the placements by what they
// broke; this operator keeps every invariant.
func ExampleExplore() {
	story, err := controllertest.ParseStory("story.txt", []byte(`# A Foo is made, then deleted.
crd
`+fooctl.CRD+`----

create foos ns0/f spec=(color=blue,replicas=2)
----

delete foos ns0/f
----
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	rep, err := controllertest.Explore{
		Story: story,
		World: controllertest.Options{Resources: []string{"configmaps", "deployments"}},
		Controller: func(ctx context.Context, w *controllertest.World) error {
			c, err := fooctl.New(fooctl.Options{
				Config:    w.Config(),       // its clients reach the world's kube-apiserver
				Clock:     w.Clock(),        // its queue waits on the world's clock
				Metrics:   w.QueueMetrics(), // the world sees its queue
				Reconcile: fooctl.Fixed,
			})
			if err != nil {
				return err
			}
			return c.Run(ctx)
		},
		Faults:     []string{"close-watch"},
		Namespaces: []string{fooctl.Registry}, // where it registers each Foo
		Unowned:    []string{fooctl.Registry}, // registrations have no owner
	}.Run(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(strings.ReplaceAll(rep.String(), "\n\n", "\n"))
	// Output:
	// explored story: the baseline and 4 placements
	// baseline (no faults): kept every invariant
	// 4 placements kept every invariant:
	//   - close-watch before step 1 (crd)
	//   - close-watch before step 2 (create foos ns0/f spec=(color=blue,replicas=2))
	//   - close-watch before step 3 (delete foos ns0/f)
	//   - close-watch after the last step
}
