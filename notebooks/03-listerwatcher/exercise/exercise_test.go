//go:build !lab

// The maintainers' tests of the lab, which CI runs: the reference
// solution passes, the skeleton fails, every check can fail. The lab
// command (go test -tags lab) leaves them out, so that what it prints is
// the learner's sheet alone.

package exercise

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/cachelab/cachelab/notebooks/03-listerwatcher/exercise/skeleton"
	"github.com/cachelab/cachelab/notebooks/03-listerwatcher/exercise/solution"
	"github.com/cachelab/cachelab/notebooks/internal/lab"
)

// reference is the solution, called with this package's ListFunc.
func reference(ctx context.Context, list ListFunc, pageSize int64) ([]string, string, error) {
	return solution.ListAll(ctx, solution.ListFunc(list), pageSize)
}

// The reference solution passes every check.
func TestSolutionPasses(t *testing.T) {
	lab.SolutionPasses(t, Checks(reference))
}

// The skeleton as handed out, kept in skeleton/pager.go (the learner's
// file may be their work by now), fails the lab, and each failure says
// what client-go does instead.
func TestSkeletonFails(t *testing.T) {
	lab.SkeletonFails(t, Checks(func(ctx context.Context, list ListFunc, pageSize int64) ([]string, string, error) {
		return skeleton.ListAll(ctx, skeleton.ListFunc(list), pageSize)
	}))
}

// Every check can fail: each is failed by at least one of these plausible
// mistakes, so none passes whatever the code does.
func TestEachCheckCanFail(t *testing.T) {
	mistakes := map[string]flaws{
		"first page at resourceVersion 0":             {firstRV: "0"},
		"the first page's resourceVersion resent":     {resendRV: true},
		"the newest item's resourceVersion":           {newestItemRV: true},
		"a full last page taken for a middle one":     {stopOnShortPage: true},
		"no fallback: the 410 is returned":            {noFallback: true},
		"fallback on any error":                       {fallbackOnAnyError: true},
		"carry on with the 410's continue token":      {continueAfter410: true},
		"fallback appended to the pages already read": {keepPages: true},
		"the first page's resourceVersion kept":       {keepFirstRV: true},
		"fallback paged again":                        {pagedFallback: true},
	}
	var mu sync.Mutex
	failed := map[int]bool{}
	t.Run("mistakes", func(t *testing.T) {
		for name, f := range mistakes {
			t.Run(name, func(t *testing.T) {
				t.Parallel() // each check starts etcds of its own
				rs := lab.Run(Checks(f.listAll))
				if lab.Passed(rs) {
					t.Errorf("mistake %q passes every check", name)
				}
				mu.Lock()
				defer mu.Unlock()
				for i, r := range rs {
					if r.Err != nil {
						failed[i] = true
					}
					if r.Err != nil && !strings.Contains(r.Err.Error(), "client-go") {
						t.Errorf("%s %s: the message does not say what client-go does: %v", r.ID, r.Behaviour, r.Err)
					}
				}
			})
		}
	})
	for i, c := range Checks(reference) {
		if !failed[i] {
			t.Errorf("%s %s: no mistake fails it", c.ID, c.Behaviour)
		}
	}
}

// flaws are mistakes a pager can make; the zero value makes none.
type flaws struct {
	firstRV            string // the first page's resourceVersion ("" is right)
	resendRV           bool   // send the first page's resourceVersion again with continue
	newestItemRV       bool   // report the newest item's resourceVersion, not the list's
	stopOnShortPage    bool   // take a page shorter than the limit as the last, not one without continue
	noFallback         bool   // return the 410 of an expired continue token
	fallbackOnAnyError bool   // fall back to a full list whatever the error
	continueAfter410   bool   // carry on paging with the token the 410 carries
	keepPages          bool   // keep the pages read before the fallback's full list
	keepFirstRV        bool   // keep the first page's resourceVersion after the fallback
	pagedFallback      bool   // fall back by paging again from the start
}

// listAll is the reference pager with f's mistakes.
func (f flaws) listAll(ctx context.Context, list ListFunc, pageSize int64) ([]string, string, error) {
	opts := metav1.ListOptions{Limit: pageSize, ResourceVersion: f.firstRV}
	var all []string
	var rv string
	for {
		obj, err := list(ctx, opts)
		if err != nil {
			if token := f.tokenIn(err, opts); token != "" {
				opts.Continue = token
				continue
			}
			if !f.fallsBack(err, opts) {
				return nil, "", err
			}
			return f.fallback(ctx, list, pageSize, all, rv)
		}
		ks, err := listKeys(obj)
		if err != nil {
			return nil, "", err
		}
		m, _ := meta.ListAccessor(obj)
		if opts.Continue == "" || f.newestItemRV {
			rv = f.resourceVersion(obj, m, rv)
		}
		all = append(all, ks...)
		last := m.GetContinue() == ""
		if f.stopOnShortPage {
			last = int64(len(ks)) < pageSize
		}
		if last {
			return all, rv, nil
		}
		opts.Continue = m.GetContinue()
		opts.ResourceVersion = ""
		if f.resendRV {
			opts.ResourceVersion = m.GetResourceVersion()
		}
	}
}

// tokenIn is the continue token of a 410 that f carries on with, or "".
func (f flaws) tokenIn(err error, opts metav1.ListOptions) string {
	var s apierrors.APIStatus
	if !f.continueAfter410 || opts.Continue == "" || !apierrors.IsResourceExpired(err) || !errors.As(err, &s) {
		return ""
	}
	return s.Status().ListMeta.Continue
}

func (f flaws) fallsBack(err error, opts metav1.ListOptions) bool {
	if f.fallbackOnAnyError {
		return true
	}
	return !f.noFallback && opts.Continue != "" && apierrors.IsResourceExpired(err)
}

// resourceVersion is the list's, or with newestItemRV the newest item's
// so far (newest is the newest before this page).
func (f flaws) resourceVersion(list runtime.Object, m metav1.ListInterface, newest string) string {
	if !f.newestItemRV {
		return m.GetResourceVersion()
	}
	_ = meta.EachListItem(list, func(obj runtime.Object) error {
		item, _ := meta.Accessor(obj)
		if rv := item.GetResourceVersion(); len(rv) > len(newest) || (len(rv) == len(newest) && rv > newest) {
			newest = rv
		}
		return nil
	})
	return newest
}

// fallback does what f does once a next page has expired: pages are the
// keys read so far and firstRV the first page's resourceVersion.
func (f flaws) fallback(ctx context.Context, list ListFunc, pageSize int64, pages []string, firstRV string) ([]string, string, error) {
	var ks []string
	var rv string
	var err error
	if f.pagedFallback {
		ks, rv, err = flaws{}.listAll(ctx, list, pageSize)
	} else {
		ks, rv, err = solution.ListAll(ctx, solution.ListFunc(list), 0) // limit 0: one LIST of everything
	}
	if err != nil {
		return nil, "", err
	}
	if f.keepPages {
		ks = append(pages, ks...)
	}
	if f.keepFirstRV {
		rv = firstRV
	}
	return ks, rv, nil
}
