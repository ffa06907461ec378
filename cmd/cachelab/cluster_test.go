package main

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/cachelab/cachelab/internal/apiworld"
)

// cmdCluster starts, for the rest of the script, what a run on a cluster
// reaches: kube-apiserver in process, taking writes and serving
// namespaces, with the watch cache, on the wall clock
// (apiworld.StartCluster), and writes a kubeconfig for it to
// $WORK/kubeconfig, whose context is "cachelab". The script's cachelab
// reaches it through that file, as it reaches a kind cluster.
//
//	cluster
func cmdCluster(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) > 0 {
		ts.Fatalf("usage: cluster")
	}
	wd := apiworld.StartCluster(scriptTB{ts})
	slotOf(ts).cluster = wd
	cc, err := wd.Server.Client("admin")
	ts.Check(err)
	ts.Check(cc.WriteKubeconfig(filepath.Join(ts.Getenv("WORK"), "kubeconfig"), "admin", ""))
}

// cmdNamespaces prints what the cluster cmdCluster started holds: each
// namespace, and each pod's key in its etcd, one per line.
//
//	namespaces
func cmdNamespaces(ts *testscript.TestScript, neg bool, args []string) {
	wd := slotOf(ts).cluster
	if wd == nil || len(args) > 0 {
		ts.Fatalf("usage: namespaces (after cluster)")
	}
	var out []string
	for _, prefix := range []string{"/registry/namespaces/", "/registry/pods/"} {
		resp, err := wd.Etcd.Client().Get(context.Background(), prefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
		ts.Check(err)
		for _, kv := range resp.Kvs {
			out = append(out, string(kv.Key))
		}
	}
	ts.Stdout().Write([]byte(strings.Join(out, "\n") + "\n"))
	if neg && len(out) > 0 {
		ts.Fatalf("the cluster holds: %s", strings.Join(out, " "))
	}
}
