package kubeapiserver

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	restclient "k8s.io/client-go/rest"
)

// ClientConfig is what a client needs to talk to the server as one user:
// its address, the CA that signed its certificate, and a client
// certificate and key, all PEM. It is what a kubeconfig holds.
type ClientConfig struct {
	Host     string
	CAData   []byte
	CertData []byte
	KeyData  []byte
}

// Client is the configuration for user, a member of system:masters: one
// client certificate per name, made at the first call, so that each side
// of a comparison is a user of its own in the server's request log.
func (s *Server) Client(user string) (ClientConfig, error) {
	cert, key, err := s.pki.client(user)
	if err != nil {
		return ClientConfig{}, err
	}
	return ClientConfig{Host: s.url, CAData: s.pki.caPEM, CertData: cert, KeyData: key}, nil
}

// TLS is the client's TLS configuration.
func (c ClientConfig) TLS() (*tls.Config, error) {
	pair, err := tls.X509KeyPair(c.CertData, c.KeyData)
	if err != nil {
		return nil, fmt.Errorf("kubeapiserver: the client certificate: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(c.CAData) {
		return nil, fmt.Errorf("kubeapiserver: no CA certificate in the client configuration")
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, RootCAs: roots, MinVersion: tls.VersionTLS12}, nil
}

// REST is the configuration for client-go's clients: the address, the
// CA and the certificate, and a dialer of its own, which keeps client-go
// from sharing a transport it cached for another run (close its idle
// connections when done: utilnet.CloseIdleConnectionsFor).
func (c ClientConfig) REST() *restclient.Config {
	return &restclient.Config{
		Host:            c.Host,
		TLSClientConfig: restclient.TLSClientConfig{CAData: c.CAData, CertData: c.CertData, KeyData: c.KeyData},
		Dial:            (&net.Dialer{}).DialContext,
	}
}

// httpClient is a plain HTTPS client for user, for the server's own
// checks (readiness).
func (s *Server) httpClient(user string) (*http.Client, error) {
	c, err := s.Client(user)
	if err != nil {
		return nil, err
	}
	tlsc, err := c.TLS()
	if err != nil {
		return nil, err
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: tlsc, DialContext: s.dial}, Timeout: 10 * time.Second}, nil
}

// WriteKubeconfig writes a kubeconfig for user to path, readable by its
// owner only, with one cluster, user and context named "cachelab" and
// namespace as the context's namespace ("" for none). It refuses to
// write over a file that is there.
func (c ClientConfig) WriteKubeconfig(path, user, namespace string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("kubeapiserver: writing a kubeconfig: %w", err)
	}
	_, err = fmt.Fprintf(f, kubeconfig, c.Host, b64(c.CAData), user, namespace, user, b64(c.CertData), b64(c.KeyData))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

const kubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: cachelab
  cluster:
    server: %s
    certificate-authority-data: %s
contexts:
- name: cachelab
  context:
    cluster: cachelab
    user: %s
    namespace: %q
current-context: cachelab
users:
- name: %s
  user:
    client-certificate-data: %s
    client-key-data: %s
`
