// Package exercise is chapter 3's lab: write a pager, the loop that turns
// LISTs with limit and continue into one whole list, and check it against
// client-go's (k8s.io/client-go/tools/pager):
//
//	go test -tags lab -v ./notebooks/03-listerwatcher/exercise
//
// Every check runs on a real etcd, once under client-go's pager and once
// under yours, and prints "pass" or the first place where the two part
// ways: a LIST sent differently, other keys, another resourceVersion. The
// reference solution is in solution/; try without it first.
package exercise

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ListFunc is one LIST call, such as a ListerWatcher's ListWithContext. It
// has the shape of client-go's pager.ListPageFunc.
type ListFunc func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error)

// ListAll lists every object behind list, at most pageSize in each LIST
// (pageSize > 0), and returns their keys ("namespace/name", in the order
// the server sent them) and the list's resourceVersion. It behaves as
// client-go's pager does (pager.New with PageSize = pageSize, then List
// with empty ListOptions):
//
//   - the first LIST asks for the latest objects: Limit pageSize, and no
//     resourceVersion;
//   - while a page comes back with a continue token, the next LIST sends
//     that token with the same limit; the page without one is the last
//     (E4);
//   - the resourceVersion is the list's, not an item's: every page is
//     read at the first page's revision (E3);
//   - when a next page fails with 410 Expired (etcd compacted that
//     revision while you were paging), client-go's pager gives up paging
//     and does one LIST of everything at once; find out exactly what it
//     sends, and what it returns, in
//     $(go env GOMODCACHE)/k8s.io/client-go@v0.37.2/tools/pager/pager.go;
//   - any other error is returned as it is.
//
// Hints: meta.ListAccessor(obj) gives a list's resourceVersion and
// continue token; meta.EachListItem visits its items, and
// cache.MetaNamespaceKeyFunc keys each one; apierrors.IsResourceExpired
// recognises a 410 Expired.
func ListAll(ctx context.Context, list ListFunc, pageSize int64) (items []string, resourceVersion string, err error) {
	// TODO: write the pager.
	return nil, "", errors.New("ListAll is not written yet")
}
