// Command sdkcall is the floor of hosteval's whole-process benchmarks: the
// least a program does to make n calls of one tool on a stdio server with
// the bare go-sdk client. It starts the server, connects (the SDK's own
// handshake: server/discover, then initialize when the server refuses it,
// as hosteval's), calls the tool n times in a row, and ends the server the way
// hosteval ends it (its input closed, SIGTERM after the same grace), and
// nothing else: it lists no tools, as a call needs none (hosteval must list
// them to offer them to a model, and that is part of its ratio). The server
// is reaped on every path: an error, a failed handshake the SDK does not
// clean up after, Ctrl-C or SIGTERM. Any error exits 1.
//
// With -as-host it also does what any host must before its first call,
// and no more: it declares the elicitation capability (a host answers a
// server's questions; this one declines them) and lists the tools once.
// Some servers do work of their own for both (server-everything registers
// tools for a client that can answer questions, and builds each tool's
// schema for its first listing), so that this row tells what the protocol
// costs from what hosteval's own code costs.
//
//	sdkcall -n 100 -tool echo -args '{"message":"hello"}' -- node server-everything/dist/index.js stdio
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// grace is how long the server gets to exit after its input is closed
// before SIGTERM: hosteval's default (host.Options.TerminateGrace), so that
// a server that ignores the end of its input costs both sides alike.
const grace = 100 * time.Millisecond

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "sdkcall:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) (err error) {
	fs := flag.NewFlagSet("sdkcall", flag.ContinueOnError)
	n := fs.Int("n", 100, "calls to make")
	tool := fs.String("tool", "echo", "the tool to call")
	argsJSON := fs.String("args", `{"message":"hello"}`, "its arguments, a JSON object")
	asHost := fs.Bool("as-host", false, "declare the elicitation capability and list the tools once before the calls, as a host must")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("want the server's command after the flags")
	}
	var arguments map[string]any
	if err := json.Unmarshal([]byte(*argsJSON), &arguments); err != nil {
		return fmt.Errorf("-args: %w", err)
	}
	cmd := exec.Command(fs.Arg(0), fs.Args()[1:]...)
	endWithParent(cmd)
	defer reap(cmd)
	var opts *mcp.ClientOptions
	if *asHost {
		opts = &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "sdkcall", Version: "1"}, opts)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: grace}, nil)
	if err != nil {
		return err
	}
	// Closing ends the server: its input closed, then SIGTERM after the
	// grace (an exit by SIGTERM is no error of the calls).
	defer cs.Close()
	if *asHost {
		if _, err := cs.ListTools(ctx, nil); err != nil {
			return fmt.Errorf("list tools: %w", err)
		}
	}
	params := &mcp.CallToolParams{Name: *tool, Arguments: arguments}
	for range *n {
		res, err := cs.CallTool(ctx, params)
		if err != nil {
			return err
		}
		if res.IsError {
			return fmt.Errorf("%s: the server answered with an error", *tool)
		}
	}
	return nil
}

// reap kills the server if it still runs and waits for it: the backstop
// for a path on which no session closed it (the SDK's Connect does not
// close what it started on every failure). The session's Close, and
// reap, need sdkcall to run its deferred calls, which a signal's default
// action does not let it: main turns Ctrl-C and SIGTERM into a cancelled
// context, and on Linux the server is killed if sdkcall dies anyway
// (endWithParent).
func reap(cmd *exec.Cmd) {
	if cmd.Process == nil || cmd.ProcessState != nil {
		return
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
}
