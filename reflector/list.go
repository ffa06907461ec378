package reflector

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// defaultPageSize is the LIST page size unless WatchListPageSize says
// otherwise (client-go's pager default).
const defaultPageSize = 500

// List is the LIST step (F1, F5): it lists every page, hands the items to
// Store.Replace with the list's resourceVersion, and then sets the last
// synced RV to it. A 410 or "too large resource version" marks the last
// synced RV unavailable and lists once more at once with RV "". It returns
// nil without touching the store if ctx ends.
//
// The requests run on a goroutine of their own, as in client-go (F8): when
// ctx ends, List returns at once even if the ListerWatcher ignores ctx and
// blocks, and whatever it returns later is dropped; a panic there is
// raised again here, on the reflector's goroutine.
func (r *Reflector) List(ctx context.Context) error {
	requested := r.relistRV()
	pageSize := r.pageSize(requested)
	var (
		list      runtime.Object
		paginated bool
		err       error
	)
	listed := make(chan struct{})
	panicked := make(chan any, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				panicked <- p
			}
		}()
		list, paginated, err = r.listPages(ctx, metav1.ListOptions{ResourceVersion: requested}, pageSize)
		if isExpired(err) || isTooLargeRV(err) {
			r.markRVUnavailable(err)
			list, paginated, err = r.listPages(ctx, metav1.ListOptions{ResourceVersion: r.relistRV()}, pageSize)
		}
		if err == nil && isTableList(list) {
			err = fmt.Errorf("unsupported list gvk: %v, type: %v", list.GetObjectKind().GroupVersionKind(), r.typeDescription)
		}
		close(listed)
	}()
	select {
	case <-ctx.Done():
		return nil
	case p := <-panicked:
		panic(p)
	case <-listed:
	}
	if ctx.Err() != nil {
		return nil // both were ready; client-go picks either at random
	}
	if err != nil {
		return fmt.Errorf("failed to list %v: %w", r.typeDescription, err)
	}
	if requested == "0" && paginated {
		r.paginatedResult = true
	}
	r.setRVUnavailable(false)
	return r.replaceWithList(list)
}

// pageSize is the limit of the first page. A LIST at RV "0" is served from
// the apiserver's watch cache, which ignores limits; so is an exact RV,
// which is why client-go asks for it unpaged, unless an earlier RV "0"
// list came back paged anyway (F1).
func (r *Reflector) pageSize(rv string) int64 {
	switch {
	case r.opts.WatchListPageSize != 0:
		return r.opts.WatchListPageSize
	case r.paginatedResult:
		return defaultPageSize
	case rv != "" && rv != "0":
		return 0
	}
	return defaultPageSize
}

func (r *Reflector) markRVUnavailable(err error) {
	r.trace(Event{Step: StepRVUnavailable, Err: err})
	r.setRVUnavailable(true)
}

// listPages asks for pages until the last one and returns their items as
// one list, with the first page's resourceVersion. If a continuation was
// compacted away (410), it lists once more without a limit, as client-go's
// pager does. paginated reports whether more than one page was read.
func (r *Reflector) listPages(ctx context.Context, opts metav1.ListOptions, limit int64) (list runtime.Object, paginated bool, err error) {
	opts.Limit = limit
	first := opts
	var merged *unstructured.UnstructuredList
	var items []runtime.Object
	for {
		// Like client-go's pager (run with context.Background()), this
		// does not stop between pages when ctx ends: each request gets
		// ctx, and a ListerWatcher that honours it fails at once.
		page, err := r.requestList(ctx, opts)
		if err != nil {
			if !apierrors.IsResourceExpired(err) || opts.Continue == "" {
				return nil, paginated, err
			}
			full := first
			full.Limit = 0
			page, err = r.requestList(ctx, full)
			return page, paginated, err
		}
		pageMeta, err := meta.ListAccessor(page)
		if err != nil {
			return nil, paginated, fmt.Errorf("returned object must be a list: %v", err)
		}
		if pageMeta.GetContinue() == "" && merged == nil {
			return page, paginated, nil
		}
		if merged == nil {
			merged = &unstructured.UnstructuredList{}
			merged.SetResourceVersion(pageMeta.GetResourceVersion())
		}
		pageItems, err := meta.ExtractListWithAlloc(page)
		if err != nil {
			return nil, paginated, err
		}
		items = append(items, pageItems...)
		if pageMeta.GetContinue() == "" {
			return &pagedList{UnstructuredList: merged, items: items}, paginated, nil
		}
		opts.Continue = pageMeta.GetContinue()
		opts.ResourceVersion, opts.ResourceVersionMatch = "", ""
		paginated = true
	}
}

func (r *Reflector) requestList(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	r.trace(Event{Step: StepList, Options: &opts})
	return r.lw.ListWithContext(ctx, opts)
}

// pagedList is the pages of one LIST joined: any item type, one
// resourceVersion. (client-go uses its internal List type for this.)
type pagedList struct {
	*unstructured.UnstructuredList
	items []runtime.Object
}

// replaceWithList is the end of a LIST: Store.Replace, then the last synced
// RV moves to the list's.
func (r *Reflector) replaceWithList(list runtime.Object) error {
	var rv string
	var items []runtime.Object
	if p, ok := list.(*pagedList); ok {
		rv, items = p.GetResourceVersion(), p.items
	} else {
		listMeta, err := meta.ListAccessor(list)
		if err != nil {
			return fmt.Errorf("unable to understand list result %#v: %v", list, err)
		}
		rv = listMeta.GetResourceVersion()
		if items, err = meta.ExtractListWithAlloc(list); err != nil {
			return fmt.Errorf("unable to understand list result %#v (%v)", list, err)
		}
	}
	found := make([]any, len(items))
	for i, item := range items {
		found[i] = item
	}
	if err := r.replace(found, rv); err != nil {
		return fmt.Errorf("unable to sync list result: %v", err)
	}
	r.setLastSyncRV(rv)
	return nil
}

func (r *Reflector) replace(objs []any, rv string) error {
	if err := r.store.Replace(objs, rv); err != nil {
		return err
	}
	r.trace(Event{Step: StepReplace, RV: rv, Count: len(objs)})
	return nil
}

// isTableList reports a server answering with a Table (kubectl's output
// form), which an informer cannot use.
func isTableList(obj runtime.Object) bool {
	u, ok := obj.(*unstructured.UnstructuredList)
	return ok && tableGVKs[u.GroupVersionKind()]
}
