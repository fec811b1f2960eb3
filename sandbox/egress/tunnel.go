package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
)

var errCap = errors.New("episode byte cap reached")

// copyCounted copies src to dst and returns the bytes written. The cap is
// enforced by the agent's side of the copy, a meterConn, which fails with
// errCap once it is reached.
func copyCounted(dst io.Writer, src io.Reader) (int64, error) {
	return io.CopyBuffer(dst, src, make([]byte, 32<<10))
}

// splice runs a tunnel until the upstream side ends (the agent may
// half-close its side first), the cap is reached or either side fails;
// the reason is set when the cap cut it. The bytes are the agent
// connection's, claimed by the handler.
func (p *Proxy) splice(down, up net.Conn, client io.Reader) (reason string) {
	var wg sync.WaitGroup
	var outErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, outErr = copyCounted(up, client)
		if outErr != nil {
			up.Close()
			down.Close()
			return
		}
		closeWrite(up)
	}()
	_, inErr := copyCounted(down, up)
	up.Close()
	down.Close()
	wg.Wait()
	if errors.Is(outErr, errCap) || errors.Is(inErr, errCap) || p.meter.Spent() {
		return errCap.Error()
	}
	return ""
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}

// forward proxies one absolute-form http:// request; true means the cap
// cut the response, which must then be aborted.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, rec *Record) bool {
	u := r.URL
	if !u.IsAbs() || u.Host == "" {
		rec.Domain = r.Host
		deny(w, rec, http.StatusBadRequest, "not a proxy request; set HTTP_PROXY/HTTPS_PROXY to this proxy")
		return false
	}
	host, port, err := splitHostPort(u.Host, p.cfg.HTTPPort)
	rec.Domain, rec.Port = host, port
	switch {
	case err != nil:
		deny(w, rec, http.StatusBadRequest, "request host "+strconv.Quote(u.Host)+": "+err.Error())
		return false
	case u.Scheme != "http":
		deny(w, rec, http.StatusBadRequest, "scheme "+u.Scheme+" refused; https goes through CONNECT")
		return false
	}
	if why := p.admit(host, port, p.cfg.HTTPPort); why != "" {
		deny(w, rec, http.StatusForbidden, why)
		return false
	}
	out := r.Clone(r.Context())
	out.RequestURI, out.Host = "", u.Host
	for _, h := range []string{"Proxy-Authorization", "Proxy-Connection", "Connection", "Keep-Alive", "Te", "Trailer", "Upgrade"} {
		out.Header.Del(h)
	}
	if r.Body == nil || r.Body == http.NoBody {
		out.Body = nil
	}
	forwarding(r, true)
	defer forwarding(r, false)
	resp, err := p.upstream.RoundTrip(out)
	if err != nil {
		forwarding(r, false) // the proxy's own answer
		deny(w, rec, http.StatusBadGateway, "upstream: "+err.Error())
		return false
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	rec.Allowed, rec.Status = true, resp.StatusCode
	_, err = copyCounted(w, resp.Body)
	if errors.Is(err, errCap) || err != nil && p.meter.Spent() {
		rec.Reason = errCap.Error()
		return true
	}
	return false
}

// dial resolves an allowed name and connects to the first address that is
// public (or any, with AllowPrivate). It never dials an address the agent
// named: the name was checked and the address comes from the resolver.
func (p *Proxy) dial(ctx context.Context, host string, port int) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.DialTimeout)
	defer cancel()
	addrs, err := p.cfg.Resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %v", host, err)
	}
	var d net.Dialer
	var last error
	for _, a := range addrs {
		a = a.Unmap()
		if !p.cfg.AllowPrivate && !Public(a) {
			last = fmt.Errorf("%s resolves to non-public address %s; refused", host, a)
			continue
		}
		c, err := d.DialContext(ctx, "tcp", netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return c, nil
		}
		last = fmt.Errorf("connect %s (%s): %v", host, a, err)
	}
	if last == nil {
		last = fmt.Errorf("resolve %s: no address", host)
	}
	return nil, last
}

// notPublic are the special-purpose ranges (IANA's IPv4 and IPv6
// special-purpose registries) that netip's IsGlobalUnicast and IsPrivate
// let through: shared, reserved, benchmarking and documentation space,
// and the IPv6 prefixes that embed or translate an IPv4 address (NAT64,
// 6to4, Teredo), which could lead back to a private one.
var notPublic = []netip.Prefix{
	netip.MustParsePrefix("100.64.0.0/10"),   // shared address space (RFC 6598): some clouds' metadata
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // TEST-NET-1
	netip.MustParsePrefix("192.88.99.0/24"),  // 6to4 relay anycast
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // TEST-NET-2
	netip.MustParsePrefix("203.0.113.0/24"),  // TEST-NET-3
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and the broadcast address
	netip.MustParsePrefix("64:ff9b::/96"),    // NAT64
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("100::/64"),        // discard-only
	netip.MustParsePrefix("2001::/23"),       // IETF protocol assignments (Teredo, ORCHID, benchmarking)
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("2002::/16"),       // 6to4
	netip.MustParsePrefix("3fff::/20"),       // documentation
	netip.MustParsePrefix("5f00::/16"),       // segment routing SIDs
	netip.MustParsePrefix("fec0::/10"),       // site-local (deprecated)
}

// Public reports whether a is a globally routed unicast address: not
// loopback, private, link-local, multicast, unspecified or any range of
// notPublic.
func Public(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsGlobalUnicast() || a.IsPrivate() {
		return false
	}
	for _, p := range notPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

func isIPLiteral(host string) bool {
	h := strings.Trim(host, "[]")
	if _, err := netip.ParseAddr(h); err == nil {
		return true
	}
	// Forms the C resolver reads as addresses: 2130706433, 0x7f.1, 127.1.
	last := h[strings.LastIndexByte(h, '.')+1:]
	_, err := strconv.ParseUint(last, 0, 64)
	return h != "" && err == nil
}

// splitHostPort splits "host:port"; a missing port is def (0: required).
func splitHostPort(hostport string, def int) (string, int, error) {
	host, portStr, err := net.SplitHostPort(hostport)
	if err != nil {
		if def == 0 || strings.Count(hostport, ":") > 0 && !strings.HasSuffix(hostport, "]") {
			return "", 0, fmt.Errorf("want host:port")
		}
		return strings.Trim(hostport, "[]"), def, nil
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port <= 0 || port > 65535 {
		return host, 0, fmt.Errorf("bad port %q", portStr)
	}
	return host, port, nil
}

func clientIP(remote string) string {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		return remote
	}
	return host
}
