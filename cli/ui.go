package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/signal"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/cli/console"
	"github.com/mass-dev/mass/cycle/report"
)

// DefaultUIListen is where `massctl ui` serves unless --listen says.
const DefaultUIListen = "127.0.0.1:8377"

func uiCommand() *cli.Command {
	return &cli.Command{
		Name:  "ui",
		Usage: "serve a read-only web console: jobs, episodes (transcript, audit, workspace), searches, generations, reports",
		Description: "Plain HTML pages, no scripts; it reads massd's API through the socket and changes nothing.\n" +
			"It listens on loopback unless --listen names another address. It prints its URL once, with a fresh\n" +
			"token (?token=…); the first visit turns the token into a cookie. A request without it gets 401, one\n" +
			"whose Host or Origin is not the console's own address 421 or 403.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "listen", Value: DefaultUIListen, Usage: "`HOST:PORT` to serve on (port 0 picks a free one)"},
		},
		Action: uiServe,
	}
}

func uiServe(c *cli.Context) error {
	con, err := console.New(clientFrom(c), nil)
	if err != nil {
		return err
	}
	con.SetReport(func(ctx context.Context, w io.Writer, eval string, gens []string, link func(string) string) error {
		r, err := clientFrom(c).Report(ctx, eval, gens)
		if err != nil {
			return err
		}
		return report.Render(w, r, report.RenderOptions{EpisodeURL: link})
	})
	ln, err := net.Listen("tcp", c.String("listen"))
	if err != nil {
		return fmt.Errorf("listen %s: %w", c.String("listen"), err)
	}
	token, err := console.NewToken()
	if err != nil {
		ln.Close()
		return err
	}
	name, _, _ := net.SplitHostPort(c.String("listen"))
	gate, err := console.NewGate(con, token, ln.Addr().String(), name)
	if err != nil {
		ln.Close()
		return err
	}
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	srv := &http.Server{Handler: gate, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: time.Minute, IdleTimeout: time.Minute}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	fmt.Fprintf(c.App.Writer, "console at http://%s/?%s=%s (Ctrl-C stops it)\n", ln.Addr(), console.TokenParam, token)
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
