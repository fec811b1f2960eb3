package check

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// EgressConfig tells the egress checks about the stand-in internet. The
// box under test has an egress policy allowing Allowed but not Denied;
// the stand-in serves both names at Address.
type EgressConfig struct {
	Allowed  string `json:"allowed"`   // allowed name the stand-in serves
	Denied   string `json:"denied"`    // a name it serves that the allowlist lacks
	Address  string `json:"address"`   // the stand-in's own address
	Secret   string `json:"secret"`    // a name whose lookup must never leave the proxy
	CapBytes int64  `json:"cap_bytes"` // the episode's byte cap
	Banner   string `json:"banner"`    // what every stand-in page starts with
	// HostAddrs and HostPort: the runner's listener on every address of
	// the host; the box's default gateway is tried too.
	HostAddrs []string `json:"host_addrs"`
	HostPort  int      `json:"host_port"`
}

// Egress runs the in-box egress checks; proxy_byte_cap spends the cap, so
// it runs last.
func Egress(c EgressConfig) []Result {
	cl := &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		// The stand-in's certificate is self-signed; reaching it is the point.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
	}}
	get := func(url string) (int, string, error) {
		resp, err := cl.Get(url)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return resp.StatusCode, string(b), err
	}
	reached := func(urls ...string) (bool, string) {
		var obs []string
		any := false
		for _, u := range urls {
			code, body, err := get(u)
			hit := err == nil && strings.HasPrefix(body, c.Banner)
			any = any || hit
			obs = append(obs, fmt.Sprintf("%s: status %d err %v reached %t", u, code, err, hit))
		}
		return any, strings.Join(obs, "; ")
	}
	var out []Result
	add := func(name string, r Result) { r.Name = name; out = append(out, r) }
	ok, obs := reached("http://" + c.Allowed + "/probe")
	add("proxy_allowed_http", verdict(ok, "GET through the proxy reaches the allowed name", obs))
	ok, obs = reached("https://" + c.Allowed + "/probe")
	add("proxy_allowed_https", verdict(ok && strings.Contains(obs, "reached true"), "CONNECT through the proxy reaches the allowed name over TLS", obs))
	ok, obs = reached("http://"+c.Denied+"/probe", "https://"+c.Denied+"/probe")
	add("proxy_denied_name", verdict(!ok, "the proxy refuses a name not on the allowlist", obs))
	ok, obs = reached("http://"+c.Address+"/probe", "https://"+c.Address+"/probe")
	add("proxy_ip_literal", verdict(!ok, "the proxy refuses IP literals", obs))
	add("proxy_direct_socket", directSocket(c.Address))
	add("proxy_host_unreachable", hostUnreachable(c))
	add("proxy_dns_exfil", dnsExfil(c.Secret, c.Denied))
	add("proxy_byte_cap", byteCap(cl, c))
	return out
}

// directSocket tries the stand-in without the proxy: TCP 80 and 443 and a
// DNS question over UDP.
func directSocket(addr string) Result {
	var obs []string
	reached := false
	for _, port := range []string{"80", "443"} {
		conn, err := net.DialTimeout("tcp", net.JoinHostPort(addr, port), dialTimeout)
		if err == nil {
			conn.Close()
			reached = true
		}
		obs = append(obs, fmt.Sprintf("tcp %s: %v", port, errOrOK(err)))
	}
	got := udpQuery(net.JoinHostPort(addr, "53"))
	reached = reached || got == nil
	obs = append(obs, fmt.Sprintf("udp 53: %v", errOrOK(got)))
	// An IPv6 link-local address would reach the host's bridge, which has one.
	if v6 := ipv6Addrs(); len(v6) > 0 {
		reached = true
		obs = append(obs, "IPv6 addresses: "+strings.Join(v6, ", "))
	}
	return verdict(!reached, "no socket to the stand-in's address without the proxy, no IPv6 address", strings.Join(obs, "; "))
}

// hostUnreachable tries the runner's host listener on every host address
// and on the box's default gateway, in parallel.
func hostUnreachable(c EgressConfig) Result {
	want := "no connection to a host listener on any host address or the gateway"
	if c.HostPort == 0 || len(c.HostAddrs) == 0 {
		return fail(want, "runner gave no host listener")
	}
	addrs := append([]string(nil), c.HostAddrs...)
	if gw := defaultGateway(); gw != "" {
		addrs = append(addrs, gw)
	}
	errs := make([]error, len(addrs))
	done := make(chan struct{})
	for i, a := range addrs {
		go func() {
			defer func() { done <- struct{}{} }()
			conn, err := net.DialTimeout("tcp", net.JoinHostPort(a, fmt.Sprint(c.HostPort)), dialTimeout)
			if err == nil {
				conn.Close()
			}
			errs[i] = err
		}()
	}
	for range addrs {
		<-done
	}
	var obs []string
	reached := false
	for i, a := range addrs {
		reached = reached || errs[i] == nil
		obs = append(obs, a+": "+errOrOK(errs[i]))
	}
	return verdict(!reached, want, strings.Join(obs, "; "))
}

// ipv6Addrs lists the box's IPv6 addresses other than loopback.
func ipv6Addrs() []string {
	addrs, _ := net.InterfaceAddrs()
	var out []string
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() == nil && !n.IP.IsLoopback() {
			out = append(out, n.IP.String())
		}
	}
	return out
}

func errOrOK(err error) string {
	if err == nil {
		return "connected"
	}
	return err.Error()
}

// udpQuery sends one A question for example.org and waits for any reply.
func udpQuery(addr string) error {
	conn, err := net.DialTimeout("udp", addr, dialTimeout)
	if err != nil {
		return err
	}
	defer conn.Close()
	q := []byte{0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'o', 'r', 'g', 0, 0, 1, 0, 1}
	if _, err := conn.Write(q); err != nil {
		return err
	}
	_ = conn.SetReadDeadline(time.Now().Add(dialTimeout))
	buf := make([]byte, 512)
	_, err = conn.Read(buf)
	return err
}

// dnsExfil looks up the secret name and the denied one: neither may resolve.
func dnsExfil(secret, denied string) Result {
	var obs []string
	resolved := false
	for _, n := range []string{secret, denied} {
		addrs, err := net.LookupHost(n)
		resolved = resolved || err == nil
		obs = append(obs, fmt.Sprintf("%s: %v %v", n, addrs, err))
	}
	return verdict(!resolved, "names off the allowlist do not resolve", strings.Join(obs, "; "))
}

// byteCap downloads twice the cap and expects to be cut off before it.
func byteCap(cl *http.Client, c EgressConfig) Result {
	want := fmt.Sprintf("a download of %d bytes is cut before the cap of %d", 2*c.CapBytes, c.CapBytes)
	if c.CapBytes <= 0 {
		return fail(want, "runner gave no cap")
	}
	resp, err := cl.Get(fmt.Sprintf("http://%s/bytes/%d", c.Allowed, 2*c.CapBytes))
	if err != nil {
		return fail(want, "request failed before any byte: "+err.Error())
	}
	defer resp.Body.Close()
	n, rerr := io.Copy(io.Discard, resp.Body)
	obs := fmt.Sprintf("status %d, %d bytes, end %v", resp.StatusCode, n, rerr)
	return verdict(resp.StatusCode == http.StatusOK && n <= c.CapBytes, want, obs)
}

// defaultGateway reads the IPv4 default route's gateway from
// /proc/net/route (little-endian hex), or "".
func defaultGateway() string {
	b, err := readSmall("/proc/net/route", 1<<20)
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(b, "\n") {
		f := strings.Fields(l)
		if len(f) < 3 || f[1] != "00000000" {
			continue
		}
		v, err := strconv.ParseUint(f[2], 16, 32)
		if err != nil || v == 0 {
			continue
		}
		return net.IPv4(byte(v), byte(v>>8), byte(v>>16), byte(v>>24)).String()
	}
	return ""
}
