package sim

import (
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/cachelab/cachelab/internal/testcerts"
	"github.com/cachelab/cachelab/internal/testdeadline"
	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/sim/scenario"
)

// A run against an etcd reached only by its endpoints (here one started
// for the test, over TLS with client certificates, as a real cluster's):
// both implementations agree, and the run leaves nothing behind in etcd.
func TestExternalEtcd(t *testing.T) {
	quietKlog() // before this test's etcd clients log through klog
	ctx := testdeadline.Context(t)
	tls := testcerts.Write(t, t.TempDir())
	server, err := listwatch.StartEmbedded(ctx, listwatch.EmbeddedOptions{Dir: t.TempDir(), TLS: tls})
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	etcd := listwatch.ClientOptions{Endpoints: server.Endpoints(), TLS: tls}
	// A custom resource's keys carry its group (/registry/<group>/...):
	// the run keeps them under its own prefix too, and removes them.
	for _, name := range []string{"selector-delete", "custom-resource-owns-configmap", "custom-resource-cluster-scoped"} {
		sc, err := Load(name)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(ctx, sc, Options{Seed: 1, Etcd: etcd})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.Divergence != nil {
			t.Fatalf("%s: %v", name, res.Divergence)
		}
		if got := res.Header.Etcd; got != server.Endpoints()[0] {
			t.Errorf("header names etcd %q, want %q", got, server.Endpoints()[0])
		}
	}
	c, err := listwatch.Connect(ctx, etcd)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	left, err := c.Get(ctx, "/registry/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	if left.Count != 0 {
		t.Errorf("the run left %d keys under /registry/", left.Count)
	}
	if _, err := Run(ctx, mustParse(t, "# restart\n\nrestart-etcd\n----\n"), Options{Etcd: etcd}); err == nil ||
		!strings.Contains(err.Error(), "inline.txt:3: restart-etcd needs the embedded etcd") {
		t.Errorf("restart-etcd on an external etcd: got %v", err)
	}
}

func mustParse(t *testing.T, src string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Parse("inline.txt", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}
