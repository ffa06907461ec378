package exercise

import (
	"context"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/pager"

	"github.com/cachelab/cachelab/notebooks/internal/lab"
)

// ListAllFunc is a pager to check: yours (ListAll) or the reference.
type ListAllFunc func(ctx context.Context, list ListFunc, pageSize int64) (items []string, resourceVersion string, err error)

// Checks are the behaviours the lab checks. Each plays one scenario twice,
// each time on a fresh embedded etcd written the same way (so that the
// revisions, and the continue tokens, are the same): once under
// client-go's pager and once under listAll. It compares the LISTs each
// sent, then the error, the keys and the resourceVersion each returned.
func Checks(listAll ListAllFunc) []lab.Check {
	same := func(s scenario) func() error { return func() error { return compare(listAll, s) } }
	return []lab.Check{
		{ID: "E4", Behaviour: "pages of 2 over 5 objects", Run: same(scenario{
			name: "5 pods (and one deleted) in pages of 2", pageSize: 2,
			pods: []string{"shop/a", "shop/b", "lab/job", "shop/c", "shop/d", "shop/old"}, deleted: []string{"shop/old"},
		})},
		{ID: "E3", Behaviour: "every page at one revision (later writes unseen)", Run: same(scenario{
			name: "5 pods in pages of 2, shop/bb created and shop/d deleted after the first page", pageSize: 2,
			pods:  []string{"shop/a", "shop/b", "shop/c", "shop/d", "shop/e"},
			after: map[int]func(context.Context, *world) error{1: writeBetweenPages},
		})},
		{ID: "E4", Behaviour: "the last page has no continue", Run: same(scenario{
			name: "4 pods in pages of 2", pageSize: 2,
			pods: []string{"shop/a", "shop/b", "shop/c", "shop/d"},
		})},
		{ID: "E4", Behaviour: "an expired continue token: one full list", Run: same(scenario{
			name: "5 pods in pages of 2, etcd compacted after the first page", pageSize: 2,
			pods:  []string{"shop/a", "shop/b", "shop/c", "shop/d", "shop/e"},
			after: map[int]func(context.Context, *world) error{1: writeAndCompact},
		})},
		{ID: "E4", Behaviour: "any other failed LIST ends the list", Run: same(scenario{
			name: "5 pods in pages of 2, the second LIST failing with a 500", pageSize: 2,
			pods: []string{"shop/a", "shop/b", "shop/c", "shop/d", "shop/e"},
			fail: map[int]error{2: apierrors.NewInternalError(errors.New("etcdserver: request timed out"))},
		})},
	}
}

// writeBetweenPages creates a pod that the second page would hold and
// deletes one it does hold: neither change is in the list.
func writeBetweenPages(ctx context.Context, w *world) error {
	if err := w.create(ctx, "shop/bb"); err != nil {
		return err
	}
	return w.delete(ctx, "shop/d")
}

// writeAndCompact changes the pods, then compacts etcd at its current
// revision: the revision the pages are read at is gone, and the next page
// gets 410 Expired.
func writeAndCompact(ctx context.Context, w *world) error {
	if err := w.create(ctx, "shop/f"); err != nil {
		return err
	}
	if err := w.delete(ctx, "shop/a"); err != nil {
		return err
	}
	rev, err := w.etcd.Revision(ctx)
	if err != nil {
		return err
	}
	return w.etcd.Compact(ctx, rev)
}

// clientGo is the reference: client-go's own pager, its result reduced to
// keys and a resourceVersion.
func clientGo(ctx context.Context, list ListFunc, pageSize int64) ([]string, string, error) {
	p := pager.New(pager.ListPageFunc(list))
	p.PageSize = pageSize
	obj, _, err := p.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, "", err
	}
	ks, err := listKeys(obj)
	if err != nil {
		return nil, "", err
	}
	m, err := meta.ListAccessor(obj)
	if err != nil {
		return nil, "", err
	}
	return ks, m.GetResourceVersion(), nil
}

// compare plays s under client-go's pager and under listAll, and says
// where they first differ.
func compare(listAll ListAllFunc, s scenario) error {
	want, err := play(s, clientGo)
	if err != nil {
		return fmt.Errorf("the lab could not run client-go's pager: %v", err)
	}
	got, err := play(s, listAll)
	if err != nil {
		return fmt.Errorf("the lab could not run your pager to compare it with client-go's: %v", err)
	}
	for _, diff := range []func(outcome, outcome) string{diffLists, diffErrors, diffKeys, diffResourceVersions} {
		if d := diff(want, got); d != "" {
			return fmt.Errorf("%s:\n%s", s.name, d)
		}
	}
	return nil
}

// diffLists compares the LISTs sent, one by one.
func diffLists(want, got outcome) string {
	for i := range max(len(want.lists), len(got.lists)) {
		n := i + 1
		switch {
		case i >= len(got.lists):
			return fmt.Sprintf("client-go's pager sent LIST #%d, %s%s;\nyours sent no LIST #%d: it returned %s.",
				n, want.lists[i].request, want.after(i), n, got.result())
		case i >= len(want.lists):
			return fmt.Sprintf("client-go's pager stopped after %s and returned %s;\nyours sent LIST #%d, %s%s.",
				lists(len(want.lists)), want.result(), n, got.lists[i].request, got.runaway())
		case want.lists[i].request != got.lists[i].request:
			return fmt.Sprintf("client-go's pager sent LIST #%d, %s%s;\nyours sent %s, which was answered with %s.",
				n, want.lists[i].request, want.after(i), got.lists[i].request, got.lists[i].answer)
		}
	}
	return ""
}

func diffErrors(want, got outcome) string {
	switch {
	case want.err == nil && got.err != nil:
		return fmt.Sprintf("client-go's pager returned %s;\nyours returned %s.", want.result(), got.result())
	case want.err != nil && got.err == nil:
		return fmt.Sprintf("client-go's pager returned %s;\nyours returned %s and no error.", want.result(), got.result())
	case want.err != nil && apiStatus(want.err) != apiStatus(got.err):
		return fmt.Sprintf("client-go's pager returned %s;\nyours returned %s.", want.result(), got.result())
	}
	return ""
}

func diffKeys(want, got outcome) string {
	if want.err == nil && !slices.Equal(want.keys, got.keys) {
		return fmt.Sprintf("client-go's pager returned %s;\nyours returned %s.", keys(want.keys), keys(got.keys))
	}
	return ""
}

func diffResourceVersions(want, got outcome) string {
	if want.err == nil && want.rv != got.rv {
		return fmt.Sprintf("client-go's pager returned resourceVersion %q%s;\nyours returned %q%s.",
			want.rv, want.rvFrom(), got.rv, got.rvFrom())
	}
	return ""
}

// apiStatus is an error's HTTP code and reason, or "not an API error".
func apiStatus(err error) string {
	var s apierrors.APIStatus
	if !errors.As(err, &s) {
		return "not an API error"
	}
	return fmt.Sprintf("%d %s", s.Status().Code, s.Status().Reason)
}

// keys renders keys as "3 keys [a b c]".
func keys(ks []string) string {
	if len(ks) == 1 {
		return fmt.Sprintf("1 key %v", ks)
	}
	return fmt.Sprintf("%d keys %v", len(ks), ks)
}

// lists renders a count of LISTs: "1 LIST", "3 LISTs".
func lists(n int) string {
	if n == 1 {
		return "1 LIST"
	}
	return fmt.Sprintf("%d LISTs", n)
}
