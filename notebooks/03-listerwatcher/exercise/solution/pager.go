// Package solution is the reference solution of chapter 3's lab.
package solution

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

// ListFunc is the exercise's ListFunc (a package of its own cannot import
// the exercise, whose tests import this one).
type ListFunc func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error)

// ListAll is the exercise's pager, done: client-go's ListPager.List
// (tools/pager/pager.go) with FullListIfExpired, returning keys.
func ListAll(ctx context.Context, list ListFunc, pageSize int64) ([]string, string, error) {
	opts := metav1.ListOptions{Limit: pageSize}
	var keys []string
	var resourceVersion string
	for page := 1; ; page++ {
		if err := ctx.Err(); err != nil {
			return nil, "", err
		}
		obj, err := list(ctx, opts)
		if err != nil {
			if opts.Continue == "" || !apierrors.IsResourceExpired(err) {
				return nil, "", err // the first page, or not an expired token
			}
			// The revision the pages are read at is gone: list everything
			// at once, as first asked (here: the latest, no limit), and
			// return that list alone.
			return fullList(ctx, list)
		}
		m, err := meta.ListAccessor(obj)
		if err != nil {
			return nil, "", fmt.Errorf("returned object must be a list: %v", err)
		}
		if page == 1 {
			resourceVersion = m.GetResourceVersion() // every page is read at it
		}
		if keys, err = appendKeys(keys, obj); err != nil {
			return nil, "", err
		}
		if m.GetContinue() == "" {
			return keys, resourceVersion, nil
		}
		opts.Continue = m.GetContinue() // same limit, no resourceVersion
	}
}

// fullList is the fallback: one LIST without limit or continue.
func fullList(ctx context.Context, list ListFunc) ([]string, string, error) {
	obj, err := list(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, "", err
	}
	m, err := meta.ListAccessor(obj)
	if err != nil {
		return nil, "", fmt.Errorf("returned object must be a list: %v", err)
	}
	keys, err := appendKeys(nil, obj)
	if err != nil {
		return nil, "", err
	}
	return keys, m.GetResourceVersion(), nil
}

// appendKeys appends the key of each of list's items to keys.
func appendKeys(keys []string, list runtime.Object) ([]string, error) {
	err := meta.EachListItem(list, func(obj runtime.Object) error {
		key, err := cache.MetaNamespaceKeyFunc(obj)
		keys = append(keys, key)
		return err
	})
	return keys, err
}
