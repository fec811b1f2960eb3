// Package tools defines the model-facing tools with qwen-code's names and
// parameters, parses their arguments strictly, and executes them inside the
// calling agent's sandbox, ledgering every call.
package tools

import (
	openai "github.com/sashabaranov/go-openai"
)

// Tool names, as in qwen-code 0.20.0.
const (
	Shell     = "run_shell_command"
	ReadFile  = "read_file"
	WriteFile = "write_file"
	Edit      = "edit"
	ListDir   = "list_directory"
	Glob      = "glob"
	Grep      = "grep_search"
	TodoWrite = "todo_write"
	Agent     = "agent"
)

// legacyNames are older qwen-code tool names still accepted for calls
// (qwen-code's ToolNamesMigration); they are never advertised.
var legacyNames = map[string]string{
	"replace":             Edit,
	"search_file_content": Grep,
	"task":                Agent,
}

// Canonical returns the current name of a tool called by a legacy name,
// and any other name unchanged.
func Canonical(name string) string {
	if n, ok := legacyNames[name]; ok {
		return n
	}
	return name
}

// Param types in JSON Schema terms.
const (
	TString  = "string"
	TInteger = "integer"
	TNumber  = "number"
	TBoolean = "boolean"
	TArray   = "array"
	TObject  = "object"
)

// Param is one parameter of a tool (or a field of an object parameter).
type Param struct {
	Name     string
	Type     string
	Required bool
	Desc     string
	Enum     []string
	// Wire is the JSON Schema type advertised to the model when it differs
	// from Type (qwen-code declares integral millisecond and line counts as
	// "number" and rejects fractions when it validates them).
	Wire string
	// NonEmpty rejects an empty string (JSON Schema minLength 1).
	NonEmpty bool
	// Items is the element schema of an array; Props the fields of an object.
	Items *Param
	Props []Param
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
	{Name: Shell, Desc: "Runs a shell command as `bash -c <command>` inside your sandbox. The workspace is mounted at /workspace; there is no network. Returns stdout, stderr and the exit code. Commands time out after the sandbox policy's limit unless a shorter timeout is given.", Params: []Param{
		{Name: "command", Type: TString, Required: true, Desc: "Exact bash command to execute as `bash -c <command>`."},
		{Name: "is_background", Type: TBoolean, Desc: "Whether to start the command in the background (long-running servers, watchers). Default false."},
		{Name: "timeout", Type: TInteger, Wire: TNumber, Desc: "Optional timeout in milliseconds (max 600000, and at most the sandbox policy's limit)."},
		{Name: "description", Type: TString, Desc: "Brief description of the command."},
		{Name: "directory", Type: TString, Desc: "Directory to run in, absolute or relative to /workspace. Default /workspace."},
	}},
	{Name: ReadFile, Desc: "Reads a text file. Use offset and limit (in lines) to page through large files.", Params: []Param{
		{Name: "file_path", Type: TString, Required: true, Desc: "Absolute path of the file, e.g. /workspace/src/main.py.", Aliases: pathAliases},
		{Name: "offset", Type: TInteger, Wire: TNumber, Desc: "0-based line number to start reading from."},
		{Name: "limit", Type: TInteger, Wire: TNumber, Desc: "Maximum number of lines to read."},
		{Name: "pages", Type: TString, Desc: "For PDF files, the 1-indexed page range to extract, e.g. \"1-5\" or \"3\"."},
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
	{Name: ListDir, Desc: "Lists the names of files and subdirectories directly within a directory. Can ignore entries matching glob patterns.", Params: []Param{
		{Name: "path", Type: TString, Required: true, Desc: "Absolute path of the directory."},
		{Name: "ignore", Type: TArray, Items: &Param{Type: TString}, Desc: "List of glob patterns of entry names to leave out."},
		{Name: "file_filtering_options", Type: TObject, Desc: "Whether to respect .gitignore and .qwenignore patterns (default true).", Props: []Param{
			{Name: "respect_git_ignore", Type: TBoolean, Desc: "Respect .gitignore patterns. Default true."},
			{Name: "respect_qwen_ignore", Type: TBoolean, Desc: "Respect .qwenignore patterns. Default true."},
		}},
	}},
	{Name: Glob, Desc: "Finds files whose paths match a glob pattern such as **/*.py.", Params: []Param{
		{Name: "pattern", Type: TString, Required: true, Desc: "Glob pattern."},
		{Name: "path", Type: TString, Desc: "Directory to search in. Default /workspace."},
	}},
	{Name: Grep, Desc: "Searches file contents with a regular expression and returns matching lines with file paths and line numbers.", Params: []Param{
		{Name: "pattern", Type: TString, Required: true, Desc: "Regular expression to search for."},
		{Name: "path", Type: TString, Desc: "Directory or file to search. Default /workspace."},
		{Name: "glob", Type: TString, Desc: "Only search files matching this glob, e.g. *.py."},
		{Name: "limit", Type: TInteger, Wire: TNumber, Desc: "Maximum number of matching lines to return."},
	}},
	{Name: TodoWrite, Desc: "Creates and updates your task list for multi-step work. Send the whole list each time; the latest list is kept in the episode record.", Params: []Param{
		{Name: "todos", Type: TArray, Required: true, Desc: "The updated todo list.", Items: &Param{Type: TObject, Props: []Param{
			{Name: "content", Type: TString, Required: true, NonEmpty: true, Desc: "What to do."},
			{Name: "status", Type: TString, Required: true, Enum: []string{"pending", "in_progress", "completed"}, Desc: "Its status."},
			{Name: "id", Type: TString, Required: true, NonEmpty: true, Desc: "A unique id."},
		}}},
	}},
	{Name: Agent, Desc: "Starts a sub-agent in its own sandbox on the same /workspace, runs it to completion on the given prompt and returns its final report. The prompt must be self-contained: the sub-agent sees nothing of your conversation.", Params: []Param{
		{Name: "description", Type: TString, Required: true, Desc: "A short (3-5 word) description of the task."},
		{Name: "prompt", Type: TString, Required: true, Desc: "The complete task for the sub-agent, with absolute paths and how to verify the result."},
		{Name: "subagent_type", Type: TString, Desc: "The kind of sub-agent. Default general-purpose.", Enum: []string{DefaultSubagent}},
		{Name: "run_in_background", Type: TBoolean, Desc: "Whether to run the sub-agent in the background. Default false. This runtime always runs sub-agents to completion before returning."},
	}},
}

// DefaultSubagent is the subagent_type of an agent call that names none.
const DefaultSubagent = "general-purpose"

// Lookup returns the spec of a tool by name.
func Lookup(name string) (Spec, bool) {
	name = Canonical(name)
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
		out = append(out, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: s.Name, Description: s.Desc, Parameters: objectSchema(s.Params),
		}})
	}
	return out
}

func objectSchema(ps []Param) map[string]any {
	props := map[string]any{}
	req := []string{}
	for _, p := range ps {
		props[p.Name] = paramSchema(p)
		if p.Required {
			req = append(req, p.Name)
		}
	}
	return map[string]any{"type": "object", "properties": props, "required": req}
}

func paramSchema(p Param) map[string]any {
	m := map[string]any{"type": p.Type}
	if p.Wire != "" {
		m["type"] = p.Wire
	}
	if p.Desc != "" {
		m["description"] = p.Desc
	}
	if len(p.Enum) > 0 {
		m["enum"] = p.Enum
	}
	if p.NonEmpty {
		m["minLength"] = 1
	}
	switch p.Type {
	case TArray:
		m["items"] = paramSchema(*p.Items)
	case TObject:
		o := objectSchema(p.Props)
		o["description"], o["additionalProperties"] = p.Desc, false
		if p.Desc == "" {
			delete(o, "description")
		}
		return o
	}
	return m
}
