package kubeapiserver_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/cachelab/cachelab/internal/apiworld"
)

func TestSmoke(t *testing.T) {
	wd := apiworld.Start(t, true)
	wd.Create(t, apiworld.Pod("ns0", "a", nil), apiworld.Pod("ns1", "b", nil))
	cc, err := wd.Server.Client("tester")
	if err != nil {
		t.Fatal(err)
	}
	tlsc, err := cc.TLS()
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsc}}
	defer c.CloseIdleConnections()
	for _, p := range []string{"/api", "/api/v1", "/api/v1/pods", "/api/v1/namespaces/ns0/pods?limit=1", "/api/v1/namespaces/ns0/pods/a", "/api/v1/pods?resourceVersion=0&fieldSelector=spec.nodeName%3Dx"} {
		resp, err := c.Get(cc.Host + p)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Logf("%s: %d %s", p, resp.StatusCode, b)
	}
	t.Log(wd.Server.Requests(""))
}
