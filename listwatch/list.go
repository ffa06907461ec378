package listwatch

import (
	"context"
	"errors"
	"strconv"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// maxChunk is the most keys read from etcd at once when a selector makes a
// page need more reads (kube-apiserver's maxLimit).
const maxChunk = 10000

// listRequest is a validated LIST: what to read and at which revision.
type listRequest struct {
	filter    filter
	prefix    string // the namespace's (or resource's) key prefix
	start     string // the first key to read
	rev       int64  // the revision to read at; 0 means the latest
	minRV     int64  // the read revision must be at least this (NotOlderThan)
	limit     int64  // items per page; 0 means all
	continued bool   // start and rev came from a continue token
	single    bool   // read the one key start names, not a range (scope)
}

// ListWithContext lists the resource's objects at one etcd revision (E3),
// a page at a time if opts.Limit is set (E4), filtered by the selectors
// (E5). The list's resourceVersion is the revision it was read at.
func (lw *ListerWatcher) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	req, err := lw.parseList(opts)
	if err != nil {
		return nil, err
	}
	return lw.readList(ctx, req)
}

// parseList validates opts and works out the read revision:
//
//	resourceVersion ""              the latest revision
//	"0" (any)                       the latest (no cache to serve older data)
//	N, match NotOlderThan           the latest, which must be at least N
//	N, match Exact                  exactly N
//	N, no match (legacy)            exactly N with a limit, else like NotOlderThan
//	continue token                  the token's revision (or the latest if -1)
func (lw *ListerWatcher) parseList(opts metav1.ListOptions) (listRequest, error) {
	req := listRequest{limit: opts.Limit}
	in, f, err := parseOptions(opts, false, lw.WatchListFeature())
	if err != nil {
		return req, err
	}
	req.filter = f
	req.prefix, req.start, req.single = lw.scope(f, in.Continue != "")
	if in.Continue != "" {
		return lw.parseContinue(req, in)
	}
	rv, errs := parseResourceVersion(in.ResourceVersion)
	if errs != nil {
		return req, badRequest("invalid resource version: %v", errs.ToAggregate())
	}
	switch in.ResourceVersionMatch {
	case metav1.ResourceVersionMatchNotOlderThan:
		req.minRV = rv
	case metav1.ResourceVersionMatchExact:
		req.rev = rv
	case "":
		if in.Limit > 0 && rv > 0 && !req.single {
			req.rev = rv
		} else {
			req.minRV = rv
		}
	}
	return req, nil
}

// parseContinue reads a continue token, then refuses a resourceVersion
// beside it, in kube-apiserver's order (storage.ValidateListOptions).
func (lw *ListerWatcher) parseContinue(req listRequest, in metainternalversion.ListOptions) (listRequest, error) {
	start, rev, err := decodeContinue(in.Continue, req.prefix)
	if err != nil {
		return req, badRequest("invalid continue token: %v", err)
	}
	if in.ResourceVersion != "" && in.ResourceVersion != "0" {
		return req, badRequest("specifying resource version is not allowed when using continue")
	}
	req.start, req.continued = start, true
	if rev > 0 {
		req.rev = rev
	}
	return req, nil
}

// parseResourceVersion parses a resourceVersion: "" and "0" are 0. A
// value that is not a number is invalid in kube-apiserver's words
// (storage.APIObjectVersioner): a LIST makes that a 400, a WATCH a 422.
func parseResourceVersion(rv string) (int64, field.ErrorList) {
	if rv == "" || rv == "0" {
		return 0, nil
	}
	n, err := strconv.ParseUint(rv, 10, 63)
	if err != nil {
		return 0, field.ErrorList{field.Invalid(field.NewPath("resourceVersion"), rv, err.Error())}
	}
	return int64(n), nil
}

// page is what one LIST read produced.
type page struct {
	items     []*unstructured.Unstructured
	rev       int64
	next      string // the key to continue from, "" if the list is complete
	remaining int64  // keys after this page (only meaningful with next)

	corrupt []corruptValue // values that did not decode (E12), in key order
	tooMany bool           // reading stopped at maxCorrupt of them
	clean   int            // items before the first corrupt value
}

// readList reads chunks from etcd at one revision until the page is full
// or the keys run out, then builds the list object.
func (lw *ListerWatcher) readList(ctx context.Context, req listRequest) (runtime.Object, error) {
	p, err := lw.readPage(ctx, req)
	if err != nil {
		return nil, lw.listError(ctx, err, req)
	}
	if len(p.corrupt) > 0 {
		return nil, lw.storageReadError(p.corrupt, p.tooMany)
	}
	return lw.listObject(req, p)
}

func (lw *ListerWatcher) readPage(ctx context.Context, req listRequest) (page, error) {
	p := page{rev: req.rev}
	end := clientv3.GetPrefixRangeEnd(req.prefix)
	key, chunk := req.start, req.limit
	for {
		ops := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(chunk)}
		if req.single {
			ops = nil // the one key
		}
		if p.rev > 0 {
			ops = append(ops, clientv3.WithRev(p.rev)) // every chunk at the first one's revision
		}
		resp, err := lw.client.Get(ctx, key, ops...)
		if err != nil {
			return p, err
		}
		if p.rev == 0 {
			if p.rev = resp.Header.Revision; req.minRV > p.rev {
				return p, tooLargeResourceVersion(req.minRV, p.rev, 0)
			}
		}
		for i, kv := range resp.Kvs {
			obj, err := decodeValue(kv.Value, kv.ModRevision)
			if err != nil {
				// Like kube-apiserver: note it, read on (it takes no
				// place in the page), fail the LIST at the end.
				if len(p.corrupt) == 0 {
					p.clean = len(p.items)
				}
				p.corrupt = append(p.corrupt, corruptValue{key: string(kv.Key), rev: kv.ModRevision, err: err})
				if p.tooMany = len(p.corrupt) >= maxCorrupt; p.tooMany {
					return p, nil
				}
				continue
			}
			if req.filter.matches(obj) {
				p.items = append(p.items, obj)
			}
			if req.limit > 0 && int64(len(p.items)) == req.limit && (i < len(resp.Kvs)-1 || resp.More) {
				p.next = string(kv.Key) + "\x00"
				p.remaining = resp.Count - int64(i+1)
				return p, nil
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return p, nil
		}
		key = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
		if !req.filter.empty() {
			chunk = min(2*chunk, maxChunk) // selectors drop items: read more at once
		}
	}
}

// listError turns an etcd error into the API error kube-apiserver returns.
func (lw *ListerWatcher) listError(ctx context.Context, err error, req listRequest) error {
	var status apierrors.APIStatus
	switch {
	case errors.As(err, &status):
		return err
	case errors.Is(err, rpctypes.ErrCompacted) && req.continued:
		e := apierrors.NewResourceExpired(inconsistentContinue)
		e.ErrStatus.ListMeta.Continue, _ = encodeContinue(req.start, req.prefix, -1)
		return e
	case errors.Is(err, rpctypes.ErrCompacted):
		return apierrors.NewResourceExpired(expiredList)
	case errors.Is(err, rpctypes.ErrFutureRev):
		current, _ := lw.currentRevision(ctx)
		return tooLargeResourceVersion(req.rev, current, 0)
	}
	return apierrors.NewInternalError(err)
}

func (lw *ListerWatcher) currentRevision(ctx context.Context) (int64, error) {
	return currentRevision(ctx, lw.client)
}

// currentRevision is etcd's revision now: the header of the cheapest read.
func currentRevision(ctx context.Context, client *clientv3.Client) (int64, error) {
	resp, err := client.Get(ctx, "/", clientv3.WithCountOnly())
	if err != nil {
		return 0, err
	}
	return resp.Header.Revision, nil
}

func (lw *ListerWatcher) listObject(req listRequest, p page) (runtime.Object, error) {
	list := &unstructured.UnstructuredList{}
	gvk := lw.res.GroupVersionKind()
	list.SetAPIVersion(gvk.GroupVersion().String())
	list.SetKind(gvk.Kind + "List")
	list.SetResourceVersion(strconv.FormatInt(p.rev, 10))
	if p.next != "" {
		token, err := encodeContinue(p.next, req.prefix, p.rev)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		list.SetContinue(token)
		if req.filter.empty() {
			list.SetRemainingItemCount(&p.remaining)
		}
	}
	list.Items = make([]unstructured.Unstructured, len(p.items))
	for i, obj := range p.items {
		list.Items[i] = *obj
	}
	return list, nil
}
