//go:build full

package main

// With -tags full, the binary carries every world from the start (as
// releases do): kube-apiserver's watch cache and client-go's typed
// informer factory, which the plain build leaves out and builds on
// first use (relink.go).
import _ "github.com/cachelab/cachelab/sim/full"
