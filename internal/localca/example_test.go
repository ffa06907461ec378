package localca_test

import (
	"crypto/tls"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/cachelab/cachelab/internal/localca"
)

// A server on loopback that lets in only the clients its run's CA signed
// a certificate for.
func Example() {
	ca, err := localca.New("example CA", time.Now())
	if err != nil {
		panic(err)
	}
	serving, _ := ca.Issue(pkix.Name{CommonName: "server"}, localca.Server)
	servingCert, _ := serving.TLS()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello, %s", r.TLS.PeerCertificates[0].Subject.CommonName)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{servingCert}, ClientCAs: ca.Pool(), ClientAuth: tls.RequireAndVerifyClientCert}
	srv.StartTLS()
	defer srv.Close()

	get := func(certs ...tls.Certificate) {
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool(), Certificates: certs}}}
		resp, err := c.Get(srv.URL)
		if err != nil {
			fmt.Println("refused")
			return
		}
		defer resp.Body.Close()
		var b [64]byte
		n, _ := resp.Body.Read(b[:])
		fmt.Println(string(b[:n]))
	}
	client, _ := ca.Issue(pkix.Name{CommonName: "alice"}, localca.Client)
	clientCert, _ := client.TLS()
	get(clientCert)
	get()

	other, _ := localca.New("another run's CA", time.Now())
	stranger, _ := other.Issue(pkix.Name{CommonName: "mallory"}, localca.Client)
	strangerCert, _ := stranger.TLS()
	get(strangerCert)
	// Output:
	// hello, alice
	// refused
	// refused
}
