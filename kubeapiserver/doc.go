// Package kubeapiserver runs kube-apiserver over HTTPS, in-process, on
// 127.0.0.1 and a port the kernel hands out: k8s.io/apiserver v0.37.2's
// generic API server serving one resource (pods, unstructured, as
// cachelab's etcd holds them) from an apistorage.Server, its watch cache
// or etcd3 store. It is the third world cachelab's informers can live
// in, and the first they reach over the wire:
//
//	informer ──HTTPS──▶ handler chain ──▶ REST handler ──▶ registry ──▶ apistorage ──▶ etcd
//	                    (request info,     (ListResource:   (key range,   (watch cache,
//	                     authentication,    options decoded, predicate)    etcd3 store)
//	                     authorization,     validated; watch
//	                     max-in-flight,     serialization,
//	                     timeouts)          timeouts)
//
// Nothing on that path is re-implemented: the handler chain is
// k8s.io/apiserver's DefaultBuildHandlerChain, LIST and WATCH go to its
// handlers.ListResource over its generic registry.Store, and discovery
// (/api, /api/v1) to its discovery handlers. What this package adds is
// what any server built on k8s.io/apiserver adds for its resources:
//
//   - the resource's endpoints, mounted as apiextensions-apiserver mounts
//     a custom resource's (the objects have no Go type: they are served
//     as JSON maps, with a serializer for exactly that, serializer.go);
//   - TLS and authentication as a local test cluster has them: a CA made
//     for the run, a serving certificate for 127.0.0.1 and localhost, and
//     a client certificate per user name in system:masters (certs.go).
//     Client gives what a client needs; ClientConfig.WriteKubeconfig
//     writes it as a kubeconfig, so kubectl can talk to the server too;
//   - a watch's deadline on the server's clock (a scenario's), instead of
//     the wall clock (clockWatcher in resource.go);
//   - for a simulator and its tests: FailNext answers a user's next
//     request with a status (429 as the max-in-flight filter sends it,
//     with Retry-After), and Requests is the server's access log: who
//     sent what, and the status it got.
//
// The from-scratch packages never import this one: it is a world for them
// to live in, and what package wire is compared against client-go on.
package kubeapiserver
