package host

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hosteval/hosteval/internal/budget"
	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/tokens"
)

// Mode is how the host agrees on a protocol revision with each server.
type Mode string

const (
	// ModeAuto sends server/discover for 2026-07-28 and falls back to the
	// 2025-11-25 initialize handshake. A server that never answers discover is
	// restarted and connected as legacy (see connect.go).
	ModeAuto Mode = "auto"
	// ModeLegacy forces the 2025-11-25 initialize handshake.
	ModeLegacy Mode = "legacy"
	// ModePinned accepts only 2026-07-28: an older server is a version
	// failure naming what it offered, never a quiet downgrade.
	ModePinned Mode = "2026-07-28"
)

// Protocol revisions the host speaks.
const (
	Revision20260728 = "2026-07-28"
	Revision20251125 = "2025-11-25"
)

// ParseMode parses a protocol mode as written in flags and scenario files.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case ModeAuto, ModeLegacy, ModePinned:
		return Mode(s), nil
	case "":
		return ModeAuto, nil
	case "2025-11-25":
		return ModeLegacy, nil
	}
	return "", fmt.Errorf("unknown protocol mode %q (want auto, legacy or 2026-07-28)", s)
}

// ServerSpec says how to start or reach one server.
type ServerSpec struct {
	// Name is the server's name in the host: the prefix of its tools.
	Name string
	// Command, Args, Env and Dir start a stdio server. Env entries
	// ("KEY=value") are added to a minimal environment (see InheritEnv).
	Command string
	Args    []string
	Env     []string
	Dir     string
	// InheritEnv passes the host's whole environment to the server. By
	// default a server gets only what a program needs to run (PATH, HOME,
	// locale, temp folder, ...) and its Env: a server can hand anything it
	// sees to the model (server-everything's get-env tool does), and the
	// host's environment holds API keys.
	InheritEnv bool
	// URL reaches a Streamable HTTP server instead; Headers are sent with
	// every request.
	URL     string
	Headers map[string]string
	// OAuth, if set, authorises the host with the HTTP server: the
	// transport asks it for a token on every request, and after a 401 or
	// 403 lets it run its flow and tries once more (internal/oauth builds
	// one from a servers file's oauth: block). One handler may serve many
	// hosts, which then share its tokens.
	OAuth OAuthHandler
	// AutoRun lists the server's tools (by their own names) that run without
	// asking the person. Nil means the tools whose annotations say read-only;
	// an empty, non-nil list means none; "*" means all.
	AutoRun []string
	// Shareable marks a server that may be kept running and used by many
	// hosts through a Pool: a stateless server, or a slow-starting one whose
	// state the scenarios do not depend on. Without a Pool it is ignored.
	Shareable bool
	// Connect are this server's own connection budgets (connect, discover,
	// initialize), over the host's (zero: the host's). A server known to
	// start slowly (npx, a JVM) sets them in servers.yaml.
	budget.Connect
	// Catalog, if set, stands in for the server: its tools are offered
	// as the catalog holds them, nothing is started, and a call of one is
	// answered with an error saying the server is not connected.
	Catalog *Catalog
	// Transport, if set, connects to an in-process server instead of
	// starting Command or reaching URL: each call returns a new transport
	// (a restart asks for another). It is the seam for tests that need a
	// server's behaviour, not its process (mcp.NewInMemoryTransports).
	Transport func(ctx context.Context) (mcp.Transport, error)
}

// Options configure a Host. The zero value of every field is a usable default.
type Options struct {
	Servers  []ServerSpec
	Protocol Mode
	// Budgets are the host's budgets: the waits of the timing model (the
	// package documentation has it) and the limits of a turn and a call
	// (internal/budget declares each, with its default; zero: the default).
	budget.Budgets
	// Eras, if set, remembers across hosts which servers never answer
	// server/discover, so that only the first connection waits for it.
	Eras *Eras
	// Preflight marks the hosts of a run's preflight: a server whose
	// connection there runs out of its connect budget (one that never
	// answers) is remembered in Eras, and every later connection to it
	// in the run fails at once with that verdict, instead of paying the
	// budget again.
	Preflight bool
	// Allow, if not empty, lists the namespaced tools the model is offered;
	// Deny removes tools from what is offered. A tool not offered is unknown
	// to the model: calling it sends nothing.
	Allow []string
	Deny  []string
	// Descriptions replace the server's description of a tool (by namespaced
	// name), for A/B tests of descriptions.
	Descriptions map[string]string
	// NoElicitation makes the host declare no elicitation capability at all.
	NoElicitation bool
	// Elicitor answers servers' questions (default: decline all).
	Elicitor Elicitor
	// Approver decides on tools that are not on their server's auto-run
	// list (default: deny all).
	Approver Approver
	// SessionID identifies the host session in events and _meta (default random).
	SessionID string
	// Log receives the host's events as JSON lines (host.connect,
	// host.tool_call, host.model_request).
	Log io.Writer
	// ServerLog receives every server's stderr, one JSON line per line: lines
	// that are JSON objects pass through, others are wrapped.
	ServerLog io.Writer
	// Wire, if set, receives every JSON-RPC message exchanged with every
	// server, and the servers' stderr lines, as JSON lines.
	Wire io.Writer
	// Steps, if set, is told of each step of a turn as it happens (the
	// chat's "[model] wants ..." lines). It is called from one goroutine at a time.
	Steps func(Step)
	// Calls, if set, is told of each call's event as the call ends, with
	// the arguments and the result (its first 4 KiB) that the Log's line
	// leaves out: what a live view of the calls shows (the lab's side
	// panel). Calls running at once call it at once.
	Calls func(record.Call)
	// TerminateGrace is how long a stdio server gets to exit after its input
	// is closed before it is signalled (default 100ms).
	TerminateGrace time.Duration
	// ClientName is the clientInfo name sent to servers (default "hosteval").
	ClientName string
	// Pool, if set, supplies the Shareable servers, already running; the
	// host uses them and leaves them running when it closes.
	Pool *Pool
	// Tokens, if set, remembers token counts across hosts (a batch run
	// renders the same definitions in every case).
	Tokens *tokens.Cache
	// Tables, if set, keeps the tool tables of hosts whose servers are all
	// shared or catalogs, across hosts: a run's cases of one configuration
	// then build and measure one table (the Pool's own when nil).
	Tables *Tables
	// Groups, if set, holds the process group of every stdio server the
	// host starts while it runs, so that its owner can kill them all at
	// once (a second Ctrl-C) without waiting for the host to stop them.
	Groups *ProcessGroups
	// Started, if set, is called as each stdio server's process has been
	// started (exec'd), before its handshake. The runner holds work it
	// can do at any time until then: on two CPUs it took one from a
	// server's exec, which every run waits for.
	Started func()
	// Paths chooses between the host's hand-written fast paths and the
	// libraries' code they stand in for (docs/perf.md, "Hand-written fast
	// paths"): PathsFast, or PathsSDK, the go-sdk's own stdio transport
	// and encoding/json wherever a raw reader or writer of the host's
	// would run. Left empty, it is read from HOSTEVAL_TRANSPORT when the
	// host starts (default fast).
	Paths Paths
}

// Paths are the two ways the host reads and writes JSON-RPC: its own fast
// paths, or the libraries' code (Options.Paths).
type Paths string

const (
	// PathsFast is the host's own stdio connection (stdio.go) and raw
	// JSON readers and writers (rawjson.go, compact.go, watch.go).
	PathsFast Paths = "fast"
	// PathsSDK is the go-sdk's mcp.IOTransport over the server's pipes,
	// and encoding/json where the raw readers and writers stand in for
	// it: what the fast paths are held equal to, kept runnable so that
	// the whole suite can say so (make test runs it both ways).
	PathsSDK Paths = "sdk"
)

// PathsEnv is the environment variable Options.Paths is read from when
// left empty: "fast" or "sdk".
const PathsEnv = "HOSTEVAL_TRANSPORT"

// check reports a Paths that is neither fast nor sdk.
func (p Paths) check() error {
	switch p {
	case PathsFast, PathsSDK:
		return nil
	}
	return fmt.Errorf("%s=%q (or Options.Paths): want %q or %q", PathsEnv, string(p), PathsFast, PathsSDK)
}

// sdk reports whether the libraries' code runs instead of the fast paths.
func (p Paths) sdk() bool { return p == PathsSDK }

// Step is one line of a turn as a person follows it: who acted, what
// happened, and details.
type Step struct {
	Who  string // host, model, server
	Text string
	Data map[string]any
}

// Effective returns o with the host's defaults in place of what o leaves
// unset: the settings a Host started with o runs under.
func (o Options) Effective() Options { return o.withDefaults() }

func (o Options) withDefaults() Options {
	if o.Protocol == "" {
		o.Protocol = ModeAuto
	}
	if o.Paths == "" {
		o.Paths = Paths(os.Getenv(PathsEnv))
	}
	if o.Paths == "" {
		o.Paths = PathsFast
	}
	o.Budgets = budget.Over(budget.Defaults[budget.Budgets](), o.Budgets)
	if o.Elicitor == nil {
		o.Elicitor = DeclineAll{}
	}
	if o.Approver == nil {
		o.Approver = DenyAll{}
	}
	if o.TerminateGrace <= 0 {
		o.TerminateGrace = 100 * time.Millisecond
	}
	if o.ClientName == "" {
		o.ClientName = "hosteval"
	}
	return o
}

// budgets are the connection budgets for one server: the host's, with the
// server's own where its spec sets them.
type budgets struct {
	connect, discover, initialize time.Duration
}

func (o Options) budgets(spec ServerSpec) budgets {
	c := budget.Over(o.Connect, spec.Connect)
	return budgets{connect: c.ConnectTimeout, discover: c.DiscoverTimeout, initialize: c.InitializeTimeout}
}
