package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/oauth"
	"github.com/hosteval/hosteval/internal/scenario"
)

// OAuth for the commands that start servers (run, chat, tools, catalog,
// the lab): one handler per server with an oauth: block, built when the
// servers are loaded and shared by every host of the command, and a login
// of each before any host starts. The login is the person's time (a
// browser, a consent page), bounded by -person-timeout, not by a server's
// connect budget.

// oauthSeams replace, in a test, what a command authorises with.
type oauthSeams struct {
	// open plays the person (oauth.FollowRedirects); it also makes the
	// command attended, wherever it runs.
	open func(ctx context.Context, url string) error
	// cache replaces the token cache under the user's config folder.
	cache *oauth.Cache
}

// registerOpen registers -open on a command that starts servers.
func registerOpen(fs *flag.FlagSet, open *bool) {
	fs.BoolVar(open, "open", false, "open a browser ($HOSTEVAL_BROWSER, or the system's) when a server's OAuth needs you to authorise it, and on lab's page (the URL is printed either way)")
}

// logins builds the OAuth handlers of a command and logs them in.
type logins struct {
	e *env
	// open is given the authorization URL after it is printed (nil: it is
	// only printed).
	open func(ctx context.Context, url string) error
	// unattended says why no person can authorise ("" when one can).
	unattended string
	// person bounds each wait for the person (0: internal/oauth's default).
	person time.Duration
	// cache keeps the tokens (the user's, found on the first build, unless
	// noCache).
	cache   *oauth.Cache
	noCache bool
	// handlers are those built, in the order the servers were loaded.
	handlers []*oauth.Handler
	names    []string
}

// newLogins returns the logins of a command: -open (open) launches
// the person's browser; in CI, or with no terminal to print the URL on and
// no browser to open, an authorization that needs a person fails at once.
func newLogins(e *env, open bool, person time.Duration) *logins {
	l := &logins{e: e, person: person, cache: e.oauth.cache}
	switch {
	case e.oauth.open != nil:
		l.open = e.oauth.open
	case ciSet(e):
		l.unattended = "CI is set"
	case open:
		l.open = func(_ context.Context, url string) error { return openBrowser(e, url) }
	case !stderrTerminal(e):
		l.unattended = "stderr is not a terminal, and -open is not given"
	}
	return l
}

// build is the scenario.NewOAuth of the command.
func (l *logins) build(s scenario.OAuthServer) (host.OAuthHandler, error) {
	if l.cache == nil && !l.noCache {
		cache, err := oauth.DefaultCache()
		if err != nil {
			// Tokens then last as long as the command.
			fmt.Fprintf(l.e.stderr, "hosteval: %v: OAuth tokens are not kept between runs\n", err)
		}
		l.cache, l.noCache = cache, cache == nil
	}
	h, err := oauth.New(s.Config, oauth.Options{
		Server: s.Name, URL: s.URL, Cache: l.cache, Out: l.e.stderr,
		Open: l.open, PersonTimeout: l.person, Unattended: l.unattended,
	})
	if err != nil {
		return nil, err
	}
	l.handlers, l.names = append(l.handlers, h), append(l.names, s.Name)
	return h, nil
}

// login makes sure every server with an oauth: block accepts the host,
// one after the other (one browser tab at a time), before any host starts:
// a cached or refreshed token asks no one; else the flow runs, and the
// person has -person-timeout (default 5 minutes) to finish it. The first
// interrupt ends the wait. The lab calls it too, before its hosts start.
func (l *logins) login(ctx context.Context) error {
	if len(l.handlers) == 0 {
		return nil
	}
	// run drains on the first interrupt instead of cancelling its
	// context; a wait for a person ends on it either way.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if first := l.e.interrupt.first; first != nil {
		done := make(chan struct{})
		var wg sync.WaitGroup
		defer wg.Wait()
		defer close(done)
		wg.Go(func() {
			select {
			case <-first:
				cancel(errInterrupted)
			case <-done:
			}
		})
	}
	for i, h := range l.handlers {
		err := h.Login(ctx)
		switch {
		case err == nil:
			continue
		case errors.Is(context.Cause(ctx), errInterrupted):
			return interruptedf("interrupted while authorising %s", l.names[i])
		case errors.Is(err, oauth.ErrNoPerson):
			// The configuration must change, not the server: a usage error.
			return usageError{err}
		}
		return fmt.Errorf("server %s could not be authorised: %w", l.names[i], err)
	}
	return nil
}

// ciSet reports whether the command runs in CI ($CI set, and not false).
func ciSet(e *env) bool {
	switch e.getenv("CI") {
	case "", "0", "false", "False", "FALSE":
		return false
	}
	return true
}

// stderrTerminal reports whether stderr, where the authorization URL is
// printed, is a terminal.
func stderrTerminal(e *env) bool {
	f, ok := e.stderr.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
