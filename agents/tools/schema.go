// Package tools defines the model-facing tools with qwen-code's names and
// parameters, parses their arguments strictly, and executes them inside the
// calling agent's sandbox, ledgering every call.
package tools

import (
	openai "github.com/sashabaranov/go-openai"
)

// Tool names, as in qwen-code.
const (
	Shell     = "run_shell_command"
	ReadFile  = "read_file"
	WriteFile = "write_file"
	Edit      = "edit"
	ListDir   = "list_directory"
	Glob      = "glob"
	Grep      = "grep_search"
	Agent     = "agent"
)

// Param types in JSON Schema terms.
const (
	TString  = "string"
	TInteger = "integer"
	TNumber  = "number"
	TBoolean = "boolean"
)

// Param is one parameter of a tool.
type Param struct {
	Name     string
	Type     string
	Required bool
	Desc     string
	Enum     []string
	// Aliases are accepted in place of Name (older qwen-code releases
	// called the path parameter absolute_path or path); never advertised.
	Aliases []string
}

// Spec is one tool: its name, description and parameters.
type Spec struct {
	Name   string
	Desc   string
	Params []Param
}

var pathAliases = []string{"absolute_path", "path"}

var specs = []Spec{
	{Name: Shell, Desc: "Runs a shell command with `sh -c` inside your sandbox. The workspace is mounted at /workspace; there is no network. Returns stdout, stderr and the exit code.", Params: []Param{
		{Name: "command", Type: TString, Required: true, Desc: "Exact command to run with sh -c."},
		{Name: "description", Type: TString, Desc: "Brief description of what the command does."},
		{Name: "directory", Type: TString, Desc: "Directory to run in, absolute or relative to /workspace. Default /workspace."},
		{Name: "timeout", Type: TInteger, Desc: "Timeout in milliseconds (default and maximum: the sandbox policy's limit)."},
	}},
	{Name: ReadFile, Desc: "Reads a text file. Use offset and limit (in lines) to page through large files.", Params: []Param{
		{Name: "file_path", Type: TString, Required: true, Desc: "Absolute path of the file, e.g. /workspace/src/main.py.", Aliases: pathAliases},
		{Name: "offset", Type: TInteger, Desc: "0-based line number to start reading from."},
		{Name: "limit", Type: TInteger, Desc: "Maximum number of lines to read."},
	}},
	{Name: WriteFile, Desc: "Writes content to a file, creating parent directories and replacing any existing content.", Params: []Param{
		{Name: "file_path", Type: TString, Required: true, Desc: "Absolute path of the file to write.", Aliases: pathAliases},
		{Name: "content", Type: TString, Required: true, Desc: "The full content to write."},
	}},
	{Name: Edit, Desc: "Replaces text in a file. old_string must match exactly (including whitespace) and, unless replace_all is true, exactly once. An empty old_string creates a new file.", Params: []Param{
		{Name: "file_path", Type: TString, Required: true, Desc: "Absolute path of the file to modify.", Aliases: pathAliases},
		{Name: "old_string", Type: TString, Required: true, Desc: "The exact text to replace."},
		{Name: "new_string", Type: TString, Required: true, Desc: "The text to replace it with."},
		{Name: "replace_all", Type: TBoolean, Desc: "Replace every occurrence instead of exactly one."},
	}},
	{Name: ListDir, Desc: "Lists the entries of a directory.", Params: []Param{
		{Name: "path", Type: TString, Required: true, Desc: "Absolute path of the directory."},
	}},
	{Name: Glob, Desc: "Finds files whose paths match a glob pattern such as **/*.py.", Params: []Param{
		{Name: "pattern", Type: TString, Required: true, Desc: "Glob pattern."},
		{Name: "path", Type: TString, Desc: "Directory to search in. Default /workspace."},
	}},
	{Name: Grep, Desc: "Searches file contents with a regular expression and returns matching lines with file paths and line numbers.", Params: []Param{
		{Name: "pattern", Type: TString, Required: true, Desc: "Regular expression to search for."},
		{Name: "path", Type: TString, Desc: "Directory or file to search. Default /workspace."},
		{Name: "glob", Type: TString, Desc: "Only search files matching this glob, e.g. *.py."},
	}},
	{Name: Agent, Desc: "Starts a sub-agent in its own sandbox on the same /workspace, runs it to completion on the given prompt and returns its final report. The prompt must be self-contained: the sub-agent sees nothing of your conversation.", Params: []Param{
		{Name: "description", Type: TString, Required: true, Desc: "A short (3-5 word) description of the task."},
		{Name: "prompt", Type: TString, Required: true, Desc: "The complete task for the sub-agent, with absolute paths and how to verify the result."},
		{Name: "subagent_type", Type: TString, Required: true, Desc: "The kind of sub-agent.", Enum: []string{"general-purpose"}},
	}},
}

// Lookup returns the spec of a tool by name.
func Lookup(name string) (Spec, bool) {
	for _, s := range specs {
		if s.Name == name {
			return s, true
		}
	}
	return Spec{}, false
}

// Worker is the tool set of a sub-agent; Orchestrator adds the agent tool.
func Worker() []Spec { return specs[:len(specs)-1] }

// Orchestrator is the tool set of the orchestrator.
func Orchestrator() []Spec { return specs }

// OpenAI converts specs to OpenAI function tools (JSON Schema parameters).
func OpenAI(ss []Spec) []openai.Tool {
	out := make([]openai.Tool, 0, len(ss))
	for _, s := range ss {
		props := map[string]any{}
		var req []string
		for _, p := range s.Params {
			prop := map[string]any{"type": p.Type, "description": p.Desc}
			if len(p.Enum) > 0 {
				prop["enum"] = p.Enum
			}
			props[p.Name] = prop
			if p.Required {
				req = append(req, p.Name)
			}
		}
		params := map[string]any{"type": "object", "properties": props, "required": req}
		out = append(out, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: s.Name, Description: s.Desc, Parameters: params,
		}})
	}
	return out
}
