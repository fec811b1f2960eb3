package console

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestGateHosts: the Host a request names decides before the token does.
func TestGateHosts(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	token := "0123456789abcdef0123"
	for _, c := range []struct {
		listen, name, host string
		want               int
	}{
		{"127.0.0.1:8377", "", "127.0.0.1:8377", http.StatusOK},
		{"127.0.0.1:8377", "", "localhost:8377", http.StatusOK},
		{"127.0.0.1:8377", "", "[::1]:8377", http.StatusOK},
		{"127.0.0.1:8377", "", "evil.example:8377", http.StatusMisdirectedRequest},
		{"127.0.0.1:8377", "", "127.0.0.1:80", http.StatusMisdirectedRequest},
		{"127.0.0.1:8377", "", "127.0.0.1", http.StatusMisdirectedRequest},
		{"10.0.0.5:8377", "", "localhost:8377", http.StatusMisdirectedRequest},
		{"0.0.0.0:8377", "", "localhost:8377", http.StatusOK},
		{"10.0.0.5:8377", "gpu7.lab", "GPU7.lab:8377", http.StatusOK},
		{"10.0.0.5:8377", "gpu7.lab", "gpu8.lab:8377", http.StatusMisdirectedRequest},
	} {
		g, err := NewGate(ok, token, c.listen, c.name)
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Host = c.host
		r.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		g.ServeHTTP(w, r)
		if w.Code != c.want {
			t.Errorf("listen %s (%q), Host %s: %d, want %d", c.listen, c.name, c.host, w.Code, c.want)
		}
	}
	if _, err := NewGate(ok, "short", "127.0.0.1:1"); err == nil {
		t.Error("a short token was accepted")
	}
}
