// Command sdkcall is the floor of hosteval's whole-process benchmarks: a
// program of its own that does with the bare go-sdk client what a run of
// hosteval does for one scenario, and nothing else. It starts one stdio
// server, connects, lists its tools, calls one tool n times in a row with
// the same arguments, and exits; any error exits 1.
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
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "sdkcall:", err)
		os.Exit(1)
	}
}

func run() error {
	n := flag.Int("n", 100, "calls to make")
	tool := flag.String("tool", "echo", "the tool to call")
	args := flag.String("args", `{"message":"hello"}`, "its arguments, a JSON object")
	flag.Parse()
	if flag.NArg() == 0 {
		return fmt.Errorf("want the server's command after the flags")
	}
	var arguments map[string]any
	if err := json.Unmarshal([]byte(*args), &arguments); err != nil {
		return fmt.Errorf("-args: %w", err)
	}
	ctx := context.Background()
	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Env = os.Environ()
	client := mcp.NewClient(&mcp.Implementation{Name: "sdkcall", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 100 * time.Millisecond}, nil)
	if err != nil {
		return err
	}
	// A server that does not exit on its own within the grace is stopped:
	// that is no error of the calls.
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		return err
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
