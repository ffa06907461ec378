// Package cluster is the world of a real cluster: the user's own (kind,
// minikube, a test cluster), reached through a kubeconfig as kubectl
// reaches it. A scenario runs there (cachelab run --kubeconfig PATH)
// with both informers talking to the cluster's kube-apiserver over
// HTTPS, as in the in-process apiserver world, and the scenario's writes
// going through the API instead of into etcd.
//
//	informer ──▶ Conn ──▶ HTTP client ══HTTPS══▶ Proxy ──▶ the cluster's kube-apiserver
//	                      (cachelab: package wire;
//	                       client-go: its dynamic client)
//	run's writes ──▶ client-go's dynamic client ══HTTPS══▶ the same server
//
// The Proxy (proxy.go) is the run's, on loopback, in two parts: a TCP
// proxy, where a disconnect cuts the informers' connections as a network
// would, and an HTTPS front (front.go) that passes each request on to the
// cluster with the kubeconfig's credentials, as kubectl proxy does, where
// a close-watch ends a side's watch responses as the server would.
//
// The cluster is the user's. A run touches one thing: a namespace of its
// own, made for it (Cluster.Begin) and deleted at its end (Namespace.End),
// with everything in it. It never writes, and its informers never read,
// outside that namespace.
//
// The pods a run writes are real pods, so nothing in the cluster must act
// on them: each carries a scheduling gate (PodSpec.schedulingGates,
// Kubernetes 1.27 and later), so the scheduler leaves it unscheduled, no
// kubelet runs it, and deleting it takes effect at once (an unscheduled
// pod has no grace period). kube-apiserver's pod strategy records the
// gate in the pod's status when it is created, in the same write.
// An admission webhook of the cluster's own can still change them.
// Beside pods a run writes configmaps and secrets (Kept), which nothing
// in a cluster acts on; not deployments or other kinds the cluster's
// controllers would act on outside the run. An object of the run's that
// a scenario left held by finalizers has them taken off at the end
// (Namespace.End), or it would hold the namespace Terminating.
//
// What a cluster does not show a run: its etcd and its watch cache. The
// levers that act on them (compact, hold-cache, restart-apiserver, the
// etcd levers, a progress request, the server's WatchList feature) are
// refused before the first step, each with its reason (sim.Check). And a
// trace on a cluster is not byte for byte the same from run to run: the
// resourceVersions are the cluster's etcd's, and the namespace's name is
// the run's. The comparison with client-go, step by step, is the same.
package cluster
