package controller

import "fmt"

// InvalidResourceVersionError is returned by CompareResourceVersions when
// one of its arguments is not a comparable resourceVersion; RV is the first
// such argument.
type InvalidResourceVersionError struct{ RV string }

func (e InvalidResourceVersionError) Error() string {
	return fmt.Sprintf("controller: resource version is not well formed: %s", e.RV)
}

// CompareResourceVersions orders two resourceVersions of one resource:
// -1 if a is older than b, 0 if they are the same, +1 if a is newer.
//
// resourceVersions are opaque to clients in general; since Kubernetes 1.35
// (KEP-5504) the API server promises that those it hands out are decimal
// integers without leading zeros, so they can be compared. A shorter one is
// smaller, and two of the same length compare as strings, so no length
// limit applies (no parsing into an int64). "", "0" (a special value in
// list and watch requests, never a live version), a leading zero, a sign or
// any other non-digit makes the pair incomparable: an
// InvalidResourceVersionError naming a if a is malformed, else b (K6).
//
// It mirrors k8s.io/apimachinery/pkg/util/resourceversion
// CompareResourceVersion (v0.37.2).
func CompareResourceVersions(a, b string) (int, error) {
	for _, rv := range []string{a, b} {
		if !comparableRV(rv) {
			return 0, InvalidResourceVersionError{RV: rv}
		}
	}
	switch {
	case len(a) != len(b):
		return sign(len(a) - len(b)), nil
	case a < b:
		return -1, nil
	case a > b:
		return 1, nil
	}
	return 0, nil
}

// comparableRV reports whether rv is a positive decimal integer written
// without leading zeros.
func comparableRV(rv string) bool {
	if rv == "" || rv[0] == '0' {
		return false
	}
	for i := 0; i < len(rv); i++ {
		if rv[i] < '0' || rv[i] > '9' {
			return false
		}
	}
	return true
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}
