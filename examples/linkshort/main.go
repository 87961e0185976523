// Command linkshort serves the linkshort URL shortener over HTTP.
//
// It listens on :8080 by default; set LINKSHORT_ADDR to listen elsewhere.
// SIGINT or SIGTERM shuts the server down gracefully, letting in-flight
// requests finish.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"example.com/linkshort/internal/httpapi"
	"example.com/linkshort/internal/links"
)

const (
	// defaultAddr is the listen address used when LINKSHORT_ADDR is unset.
	defaultAddr = ":8080"
	// shutdownTimeout bounds how long in-flight requests may take to
	// finish once a shutdown signal arrives.
	shutdownTimeout = 10 * time.Second
)

func main() {
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(logger); err != nil {
		logger.Error("linkshort stopped", "err", err)
		os.Exit(1)
	}
}

// run starts the server and blocks until it fails or a shutdown signal has
// been handled.
func run(logger *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	srv := &http.Server{
		Addr:              listenAddr(os.Getenv),
		Handler:           httpapi.NewHandler(links.NewStore()),
		ReadHeaderTimeout: 5 * time.Second,
	}

	serveErr := make(chan error, 1)
	go func() {
		logger.Info("listening", "addr", srv.Addr)
		serveErr <- srv.ListenAndServe()
	}()

	select {
	case err := <-serveErr:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	stop() // a second signal now terminates the process immediately

	logger.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// listenAddr returns the address to listen on: LINKSHORT_ADDR if it is set
// and non-empty, defaultAddr otherwise.
func listenAddr(getenv func(string) string) string {
	if addr := getenv("LINKSHORT_ADDR"); addr != "" {
		return addr
	}
	return defaultAddr
}
