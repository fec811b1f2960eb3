package console

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// CookieName is the cookie that carries the console's token after the
// first visit.
const CookieName = "mass_console"

// TokenParam is the query parameter of the first visit's URL.
const TokenParam = "token"

// NewToken returns a fresh random console token (256 bits, URL-safe).
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("console token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// Gate is the console's door. The console shows everything massd's
// root-only socket does, so it answers only a request that names the
// console's own address as Host (no DNS rebinding: 421 otherwise), that
// comes from no foreign Origin (403), and that carries the token (401):
// in the query of the first visit, which sets an HttpOnly SameSite=Strict
// cookie and redirects to the same page without it, or in that cookie,
// or as "Authorization: Bearer TOKEN".
type Gate struct {
	next  http.Handler
	token string
	host  string // the listen host, lower case; "" for a wildcard
	port  string
	names []string // host names the console was asked to listen on
}

// NewGate guards next with token; addr is the address the console
// listens on (the listener's, so that port 0 is resolved), names the host
// names it may also be reached by (the name --listen gave).
func NewGate(next http.Handler, token, addr string, names ...string) (*Gate, error) {
	if len(token) < 16 {
		return nil, fmt.Errorf("console token: want at least 16 characters")
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("console address %q: %w", addr, err)
	}
	host = strings.ToLower(host)
	if a, err := netip.ParseAddr(host); err == nil && a.IsUnspecified() {
		host = ""
	}
	g := &Gate{next: next, token: token, host: host, port: port}
	for _, n := range names {
		if n != "" {
			g.names = append(g.names, strings.ToLower(n))
		}
	}
	return g, nil
}

// ServeHTTP checks Host, Origin and the token, in that order.
func (g *Gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Security-Policy", csp)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("Cache-Control", "no-store")
	if !g.ownHost(r.Host) {
		http.Error(w, "this console answers only at its own address, not "+r.Host, http.StatusMisdirectedRequest)
		return
	}
	if o := r.Header.Get("Origin"); o != "" && o != "http://"+r.Host {
		http.Error(w, "cross-origin request refused", http.StatusForbidden)
		return
	}
	if q := r.URL.Query(); q.Has(TokenParam) {
		if !g.valid(q.Get(TokenParam)) {
			http.Error(w, "wrong console token", http.StatusUnauthorized)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: CookieName, Value: g.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		q.Del(TokenParam)
		u := url.URL{Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: q.Encode()}
		http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
		return
	}
	if !g.authorized(r) {
		http.Error(w, "the console needs its token: open the URL `massctl ui` printed (…/?token=…)", http.StatusUnauthorized)
		return
	}
	g.next.ServeHTTP(w, r)
}

func (g *Gate) authorized(r *http.Request) bool {
	if c, err := r.Cookie(CookieName); err == nil && g.valid(c.Value) {
		return true
	}
	t, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && g.valid(t)
}

func (g *Gate) valid(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(g.token)) == 1
}

// ownHost accepts the listen address itself, any IP literal on the
// console's port (no name to rebind) and, on a loopback or wildcard
// listen address, localhost.
func (g *Gate) ownHost(hostport string) bool {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil || port != g.port {
		return false
	}
	host = strings.ToLower(host)
	if _, err := netip.ParseAddr(host); err == nil {
		return true
	}
	if host == "localhost" {
		a, err := netip.ParseAddr(g.host)
		return g.host == "" || g.host == "localhost" || err == nil && a.IsLoopback()
	}
	for _, n := range g.names {
		if host == n {
			return true
		}
	}
	return g.host != "" && host == g.host
}
