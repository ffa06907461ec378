// Package listwatch is the "world" cachelab's informers live in: a real
// etcd, read and written the way kube-apiserver's storage layer does it,
// with no apiserver and no cluster to install.
//
// Embedded starts an etcd server inside the test or program: loopback only,
// on ports the kernel picks (so many can run side by side), silent, without
// fsync unless asked, and with the controls a simulator needs: compact to a
// revision, read the current revision, restart on the same data directory.
//
// It mirrors what k8s.io/apiserver's etcd3 test server does
// (pkg/storage/etcd3/testserver), without its pick-a-free-port race: etcd
// binds port 0 itself and cachelab reads back the port it got.
package listwatch
