// Package model holds the types of chapter 7's lab, shared by your code,
// the reference solution and the checks.
package model

// Step is one thing that happens to kube-apiserver and its etcd, in
// order:
//
//   - "create" and "delete" write the pod Key ("namespace/name") to
//     etcd: each write is one revision, and a fresh etcd's first write
//     is revision 2;
//   - "hold-cache" makes the watch cache stop taking in etcd's events
//     (it falls behind, as a busy kube-apiserver's does for a moment),
//     and "release-cache" lets it catch up;
//   - "restart-apiserver" restarts kube-apiserver: a new watch cache
//     lists etcd (after "hold-cache", not until "release-cache");
//   - "list" is a LIST of every pod with ResourceVersion,
//     ResourceVersionMatch and Limit set as given.
type Step struct {
	Do  string
	Key string // create, delete

	// list
	ResourceVersion      string // "", "0", or a number
	ResourceVersionMatch string // "", "NotOlderThan" or "Exact"
	Limit                int64
}

// Answer is what a LIST got.
type Answer struct {
	// Source is who answered: "cache" (the watch cache, which may also
	// refuse) or "etcd" (the request was passed on to the etcd3 store).
	Source string
	// ResourceVersion and Items are the list's resourceVersion and how
	// many pods it holds; "" and 0 when the LIST failed.
	ResourceVersion string
	Items           int
	// Code is the HTTP status of the error the LIST failed with (429,
	// 504, ...), 0 when it did not.
	Code int
}
