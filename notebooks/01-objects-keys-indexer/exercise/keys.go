// Package exercise is chapter 1's lab: write an informer's key function
// and an index function, then check them against client-go:
//
//	go test -tags lab ./notebooks/01-objects-keys-indexer/exercise
//
// Each behaviour prints "pass", or the first place where your code and
// client-go part ways. The reference solution is in solution/; try without
// it first.
package exercise

import "errors"

// KeyFunc returns the key an informer's cache files obj under (S1):
//
//   - "namespace/name" for an object with a namespace;
//   - "name" for a cluster-scoped object (no namespace);
//   - the string itself for a cache.ExplicitKey;
//   - an error for anything without object metadata.
//
// Hint: k8s.io/apimachinery/pkg/api/meta.Accessor gives the metadata.
func KeyFunc(obj any) (string, error) {
	// TODO: write the key function.
	return "", errors.New("KeyFunc is not written yet")
}

// AppIndex is an index function (S3): it returns the value of obj's "app"
// label, so that the indexer can find every object of one app. An object
// without that label is in no bucket: return no values (and no error).
func AppIndex(obj any) ([]string, error) {
	// TODO: write the index function.
	return nil, errors.New("AppIndex is not written yet")
}
