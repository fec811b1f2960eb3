package client_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/client"
)

// TestFollowEndsEarly serves an event stream that stops while the job is
// still running, as when massd dies: Follow must report it, not succeed.
func TestFollowEndsEarly(t *testing.T) {
	tests := []struct {
		state   string
		wantErr bool
	}{
		{api.StateRunning, true},
		{api.StateSucceeded, false},
		{api.StateInterrupted, false},
	}
	for _, tt := range tests {
		t.Run(tt.state, func(t *testing.T) {
			sock := filepath.Join(t.TempDir(), "s.sock")
			ln, err := net.Listen("unix", sock)
			if err != nil {
				t.Fatal(err)
			}
			srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/x-ndjson")
				fmt.Fprintf(w, `{"event":{"seq":1,"type":"start","message":"go"}}`+"\n")
				fmt.Fprintf(w, `{"job":{"id":"j1","kind":"wait","state":%q,"attempt":1}}`+"\n", tt.state)
			})}
			go srv.Serve(ln)
			t.Cleanup(func() { srv.Close() })

			items := 0
			err = client.New(sock).Follow(context.Background(), "j1", 0, func(api.StreamItem) error { items++; return nil })
			if got, want := items, 2; got != want {
				t.Errorf("items = %d, want %d", got, want)
			}
			if tt.wantErr {
				if !errors.Is(err, api.ErrUnavailable) {
					t.Errorf("Follow after a stream cut while %s = %v, want ErrUnavailable", tt.state, err)
				}
			} else if err != nil {
				t.Errorf("Follow to %s = %v, want nil", tt.state, err)
			}
		})
	}
}
