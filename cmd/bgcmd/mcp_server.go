//go:build !bgcmd_lean

package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bgcmd/bgcmd/agenttools"
)

// mcpInstructions tell the client's model how the tools fit together.
const mcpInstructions = `bgcmd runs commands in the background under a strict policy and keeps their complete output. ` +
	`Start one with run_command_bg (argv array, never a shell line; wait_ms to wait a little), keep working, ` +
	`and read it back with command_status, command_wait and command_output. Every result carries counters ` +
	`{running, finished, queued}: finished > 0 means a command of yours ended and you have not read it yet (command_list {"unread": true}); ` +
	`queued counts commands waiting for a slot (group) or their dependencies (after), which start by themselves. ` +
	`Instead of polling, subscribe to the resource bgcmd://jobs/{task_id} (or bgcmd://sessions/{session}) to be told when it ends.`

// newMCPServer registers every tool of ts on a new MCP server. Each tool is
// added with the raw handler, so the schema clients see is the tool
// layer's own, and the layer does all argument checking. A call to a tool
// that does not exist is answered as a tool error too, so a model can
// correct itself. Jobs and the session are resources too (see
// jobResources), when res is not nil.
func newMCPServer(ts *agenttools.Toolset, log *slog.Logger, res *jobResources) *mcp.Server {
	opts := &mcp.ServerOptions{Logger: log, Instructions: mcpInstructions}
	handle := mcpHandler(ts, log)
	if res != nil {
		res.configure(opts)
		handle = withWaitProgress(handle, res.r, res.session)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "bgcmd", Title: "bgcmd background commands", Version: readVersion().Version}, opts)
	if res != nil {
		res.register(s)
	}
	known := map[string]bool{}
	for _, tl := range ts.Tools() {
		known[tl.Name] = true
		s.AddTool(mcpTool(tl), handle)
	}
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if r, ok := req.(*mcp.CallToolRequest); ok && method == "tools/call" && r.Params != nil && !known[r.Params.Name] {
				res, err := handle(ctx, r)
				if err != nil {
					return nil, err
				}
				return res, nil
			}
			return next(ctx, method, req)
		}
	})
	return s
}

// mcpTool converts a tool description.
func mcpTool(tl agenttools.Tool) *mcp.Tool {
	a := tl.Annotations
	destructive, openWorld := a.Destructive, a.OpenWorld
	return &mcp.Tool{
		Name: tl.Name, Title: tl.Title, Description: tl.Description,
		InputSchema: json.RawMessage(tl.InputSchema),
		Annotations: &mcp.ToolAnnotations{Title: tl.Title, ReadOnlyHint: a.ReadOnly,
			DestructiveHint: &destructive, IdempotentHint: a.Idempotent, OpenWorldHint: &openWorld},
	}
}

// mcpHandler calls the tool layer. A tool error is a result with isError
// set; only a cancelled request is a protocol error.
func mcpHandler(ts *agenttools.Toolset, log *slog.Logger) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		start := time.Now()
		res, err := ts.Call(ctx, req.Params.Name, req.Params.Arguments)
		if err != nil {
			log.Info("tool call cancelled", "tool", req.Params.Name, "error", err)
			return nil, err
		}
		log.Info("tool call", "tool", req.Params.Name, "is_error", res.IsError,
			"duration", time.Since(start).Round(time.Millisecond))
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: res.Text}},
			StructuredContent: res.Structured,
			IsError:           res.IsError,
		}, nil
	}
}
