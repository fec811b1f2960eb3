package egress

import (
	"fmt"
	"io"
	"testing"
)

// BenchmarkProxy measures one request through the proxy on loopback: a
// small plain-HTTP GET, and a 1 MiB download over CONNECT and TLS (a new
// tunnel each time, as an agent's download tool makes it).
func BenchmarkProxy(b *testing.B) {
	for _, c := range []struct {
		name, scheme string
		size         int
	}{{"http_small", "http", 0}, {"connect_1MiB", "https", 1 << 20}} {
		b.Run(c.name, func(b *testing.B) {
			w := newWorld(b, []string{"data.test.example"}, 1<<40, true)
			path := "/a"
			if c.size > 0 {
				path = fmt.Sprintf("/bytes/%d", c.size)
				b.SetBytes(int64(c.size))
			}
			p := w.httpPort
			if c.scheme == "https" {
				p = w.httpsPort
			}
			url := fmt.Sprintf("%s://data.test.example:%d%s", c.scheme, p, path)
			b.ResetTimer()
			for range b.N {
				resp, err := w.client.Get(url)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}
