// Package kubeapiserver runs kube-apiserver over HTTPS, in-process, on
// 127.0.0.1 and a port the kernel hands out: k8s.io/apiserver v0.37.2's
// generic API server serving one resource (pods, unstructured, as
// cachelab's etcd holds them) from an apistorage.Server, its watch cache
// or etcd3 store, and, if asked, namespaces from another. It is the third
// world cachelab's informers can live in, and the first they reach over
// the wire:
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
// handlers.ListResource over its generic registry.Store, GET to
// handlers.GetResource, and discovery (/api, /api/v1) to its discovery
// handlers. By default the server only reads; with Options.Writes, POST,
// PUT and DELETE go to handlers.CreateResource, UpdateResource and
// DeleteResource over the same registry.Store. What this package adds is
// what any server built on k8s.io/apiserver adds for its resources:
//
//   - the resources' endpoints, mounted as apiextensions-apiserver mounts
//     a custom resource's (the objects have no Go type: they are served
//     as JSON maps, with a serializer for exactly that, serializer.go),
//     and a strategy for writing them that adds nothing to what the
//     registry does for every resource (registry.go);
//   - with Options.Namespaces, namespaces at /api/v1/namespaces, and one
//     check of the NamespaceLifecycle admission plugin: no create in a
//     namespace that does not exist (admission.go);
//   - TLS and authentication as a local test cluster has them: a CA made
//     for the run, a serving certificate for 127.0.0.1 and localhost, and
//     a client certificate per user name in system:masters (certs.go,
//     internal/localca, as the embedded etcd's own behind it).
//     Client gives what a client needs; ClientConfig.WriteKubeconfig
//     writes it as a kubeconfig, so kubectl can talk to the server too;
//   - a watch's deadline on the server's clock (a scenario's), instead of
//     the wall clock (clockWatcher in resource.go), and no other timer of
//     the wall clock that could change an answer (walltime.go);
//   - protobuf request bodies for built-in kinds (pods, configmaps,
//     secrets, deployments, namespaces), as a typed clientset made from
//     a kubeconfig sends them: a filter decodes each into its Go type
//     (k8s.io/api) and hands the handlers its JSON (protobuf.go);
//   - for a world that runs a user's controller (package
//     controllertest): a listener and dialer of the caller's in place
//     of a port (Options.Listener, Options.Dial), a Gate that holds a
//     user's watch events until its owner lets them go, one at a time
//     (gate.go), a custom resource's writes admitted as
//     apiextensions-apiserver admits them (Options.Admit), and names
//     generated from a seeded source (Options.GenerateName);
//   - for a simulator and its tests: FailNext answers a user's next
//     request with a status (429 as the max-in-flight filter sends it,
//     with Retry-After), and Requests is the server's access log: who
//     sent what, and the status it got.
//
// Writes are answered as kube-apiserver answers them (201 with the
// object, 409 Conflict for a stale resourceVersion, a DELETE answered
// with the object at the deletion's resourceVersion, 404 for a create in
// a namespace that does not exist), but the objects are not a real
// cluster's: a pod is whatever JSON it is sent as (no defaults, no
// validation beyond object metadata, no status, no generation; its name
// need only be a path segment), and it is deleted at once, as a real pod
// is when no node runs it. A namespace has no status.phase or
// finalizers, and its DELETE removes it at once, leaving its pods where
// they are (there is no namespace controller). metadata.managedFields is
// kept, as kube-apiserver keeps it; its times and creationTimestamp are
// the wall clock's, not the server's clock, and uid is random. PATCH and
// DELETE of a collection are not served, nor any subresource but a
// custom resource's status (Options.Status: GET and PUT of /status).
//
// The body of a create or an update of a built-in resource may be
// protobuf, as kube-apiserver takes it (a DELETE's DeleteOptions may be,
// for any resource); a custom resource's object may not (415), which
// kube-apiserver refuses too. The objects in responses are always JSON,
// whatever the client accepts, and client-go decodes them by their
// Content-Type; only a Status written outside the REST handlers (405 for
// a verb not served, a fault) is encoded as the client prefers.
//
// The from-scratch packages never import this one: it is a world for them
// to live in, and what package wire is compared against client-go on.
package kubeapiserver
