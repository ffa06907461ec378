package sim

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/internal/testdeadline"
	"github.com/cachelab/cachelab/listwatch"
)

// A run's embedded etcd lets in its own connections only (issue 47, case
// 9): the world's, each informer's and kube-apiserver's reach it over TLS
// with the run's client certificate, and the run agrees with client-go
// as before; a connection in plain text, as any user of the machine
// could open one to its loopback port, is refused. On a cluster of
// members too, whose connections each go to every member.
func TestEtcdLetsInOnlyTheRun(t *testing.T) {
	t.Parallel()
	for _, members := range []int{1, 3} {
		t.Run(map[int]string{1: "one member", 3: "three members"}[members], func(t *testing.T) {
			sc, err := Load("add-update-delete")
			if err != nil {
				t.Fatal(err)
			}
			parallelIn(t, stackOf(sc))
			ctx := testdeadline.Context(t)
			ses, err := Open(ctx, sc.WithoutExpectations(), Options{Seed: 1, EtcdMembers: members})
			if err != nil {
				t.Fatal(err)
			}
			defer ses.Close()
			for _, st := range sc.Steps {
				sr, err := ses.Step(st)
				if err != nil || sr.Divergence != nil {
					t.Fatalf("%s: %v %v", st.Text, err, sr.Divergence)
				}
			}
			for i, c := range ses.r.storage().clients {
				for _, ep := range c.Endpoints() {
					if !strings.HasPrefix(ep, "https://127.0.0.1:") {
						t.Errorf("connection %d reaches etcd at %s: want https on loopback", i, ep)
					}
				}
			}
			for _, ep := range ses.r.storage().etcd.Endpoints() {
				u, _ := url.Parse(ep)
				plain := listwatch.ClientOptions{Endpoints: []string{"http://" + u.Host}, DialTimeout: 10 * time.Second}
				if c, err := listwatch.Connect(ctx, plain); err == nil {
					c.Close()
					t.Errorf("a plain-text client of %s was let in", u.Host)
				}
			}
		})
	}
}
