//go:build !lab

// The maintainers' tests of the lab, which CI runs: the reference
// solution passes, the skeleton fails, every check can fail. The lab
// command (go test -tags lab) leaves them out, so that what it prints is
// the learner's sheet alone.

package exercise

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/examples/fooctl"
	"github.com/cachelab/cachelab/notebooks/10-your-controller/exercise/skeleton"
	"github.com/cachelab/cachelab/notebooks/10-your-controller/exercise/solution"
	"github.com/cachelab/cachelab/notebooks/internal/lab"
)

// The reference solution passes every check.
func TestSolutionPasses(t *testing.T) {
	t.Parallel()
	lab.SolutionPasses(t, Checks(Operator{solution.Reconcile, solution.OnDelete}))
}

// The skeleton as handed out, kept in skeleton/reconcile.go (the
// learner's file may be their work by now), fails the lab, and each
// failure says what the explorer found.
func TestSkeletonFails(t *testing.T) {
	t.Parallel()
	lab.SkeletonFailsAgainst(t, "the explorer", Checks(Operator{skeleton.Reconcile, skeleton.OnDelete}))
}

// Every check can fail, and says so where the learner can act on it:
// each plausible half-fix below (the chapter warns of each) fails a
// check whose message holds the words it must, and each check is failed
// by at least one of them, so none passes whatever the operator does.
func TestEachCheckCanFail(t *testing.T) {
	t.Parallel()
	mistakes := []lab.Mistake{
		{Name: "the finalizer, but the Deployment still listed and made with generateName",
			Checks: Checks(Operator{finalizerOnly, solution.OnDelete}),
			Says: []string{"the explorer played fooctl's story with no faults", "broke no-duplicates",
				"are both controlled by Foo f: a child made twice"}},
		{Name: "a named Deployment, and a delete handler that reads tombstones, with no finalizer",
			Checks: Checks(Operator{namedOnly, tombstoneCleanup}),
			Says: []string{"stop before step 4 (delete foos ns0/f), start at the end",
				"broke registered: registration ns0.f is for a Foo that does not exist", "  stop\n"}},
	}
	lab.MistakesFail(t, Checks(Operator{solution.Reconcile, solution.OnDelete}), mistakes)
}

// finalizerOnly is the solution's reconcile with the skeleton's
// Deployment: it holds the Foo with a finalizer, but makes the
// Deployment again whenever its cache's list has none.
func finalizerOnly(ctx context.Context, c *fooctl.Controller, key string) error {
	f, err := c.Foo(key)
	if err != nil || f == nil || f.GetDeletionTimestamp() != nil {
		return solution.Reconcile(ctx, c, key)
	}
	if err := solution.Reconcile(ctx, c, key); err != nil {
		return err
	}
	return skeleton.Reconcile(ctx, c, key)
}

// namedOnly is the solution's reconcile without its finalizer: it makes
// each child once, and cleans up nothing itself.
func namedOnly(ctx context.Context, c *fooctl.Controller, key string) error {
	f, err := c.Foo(key)
	if err != nil || f == nil {
		return err
	}
	ns, name := f.GetNamespace(), f.GetName()
	if err := c.Register(ctx, ns, name); err != nil {
		return err
	}
	if err := c.EnsureConfigMap(ctx, f); err != nil {
		return err
	}
	_, replicas := fooctl.Spec(f)
	return createNamed(ctx, c, f, replicas)
}

// createNamed makes the Foo's Deployment under its own name, if the
// server has none.
func createNamed(ctx context.Context, c *fooctl.Controller, f *unstructured.Unstructured, replicas int32) error {
	if _, err := c.Deployments.Deployments(f.GetNamespace()).Get(f.GetName()); err == nil {
		return nil
	}
	_, err := c.Kube.AppsV1().Deployments(f.GetNamespace()).Create(ctx, fooctl.NewDeployment(f, replicas, ""), metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// tombstoneCleanup removes the registration of a Foo it is told was
// deleted, a tombstone's too: it fixes the partition, not the stop.
func tombstoneCleanup(c *fooctl.Controller) func(obj any) {
	return func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if f, ok := obj.(*unstructured.Unstructured); ok {
			_ = c.Unregister(context.Background(), f.GetNamespace(), f.GetName())
		}
	}
}
