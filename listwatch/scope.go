package listwatch

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// scope is the range of keys a LIST reads or a WATCH watches (E16),
// narrowed as kube-apiserver's generic registry narrows both before
// storage sees them (registry/generic/registry/store.go ListPredicate and
// WatchPredicate, storage.SelectionPredicate.MatchesSingle*); the
// request's selectors (filter) then decide what in the range it gets:
//
//   - a request for all namespaces whose field selector requires one
//     (metadata.namespace=ns) reads and watches that namespace's prefix,
//     if ns is a valid namespace name; a LIST's continue tokens are then
//     relative to it;
//   - one whose field selector requires a name (metadata.name=x) reads
//     and watches that one key, if there is a key for it (objectKey): a
//     LIST then reads no continue token (one given is ignored) and makes
//     none, and a legacy resourceVersion with a limit is not an exact
//     read;
//   - a LIST that continues another is never narrowed, so a token made
//     under a narrowed prefix is read against the wide one, as in
//     kube-apiserver.
//
// What lies outside the range is never read: a value there that cannot
// be decoded (E12) fails no request that was narrowed away from it.
func (lw *ListerWatcher) scope(f filter, continued bool) (prefix, start string, single bool) {
	ns := lw.opts.Namespace
	if ns == "" && !continued {
		if sel, ok := f.fields.RequiresExactMatch("metadata.namespace"); ok && len(apivalidation.ValidateNamespaceName(sel, false)) == 0 {
			ns = sel
		}
	}
	prefix = lw.res.namespacePrefix(ns)
	if name, ok := f.fields.RequiresExactMatch("metadata.name"); ok && !continued {
		if key, ok := lw.res.objectKey(ns, name); ok {
			return prefix, key, true
		}
	}
	return prefix, prefix, false
}

// objectKey is the key of one object, if the registry can make one
// (NamespaceKeyFunc, NoNamespaceKeyFunc): a namespaced resource needs a
// namespace, and the name must be a path segment (not empty, "." or
// "..", and without "/" or "%").
func (r Resource) objectKey(namespace, name string) (string, bool) {
	if (r.Namespaced && namespace == "") || name == "" || len(content.IsPathSegmentName(name)) > 0 {
		return "", false
	}
	return r.key(namespace, name), true
}

// Reads reports whether a LIST or WATCH with opts reads the key of
// namespace/name: whether the key is in the range the request is
// narrowed to (E16), whatever its selectors then make of the object
// there. A simulator asks it to know whether a watch meets a value that
// cannot be decoded (E12), which no selector can filter out. Options
// that a request would be refused for are the request's error.
func (lw *ListerWatcher) Reads(opts metav1.ListOptions, namespace, name string) (bool, error) {
	_, f, err := parseOptions(opts, true, lw.WatchListFeature())
	if err != nil {
		return false, err
	}
	prefix, start, single := lw.scope(f, false)
	key := lw.res.key(namespace, name)
	if single {
		return key == start, nil
	}
	return strings.HasPrefix(key, prefix), nil
}
