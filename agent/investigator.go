package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hearth-agent/hearth/internal/investigator"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/tool"
)

// InvestigatorName is the built-in codebase investigator's tool name.
const InvestigatorName = "codebase_investigator"

// InvestigatorTools are the read-only tools the investigator works with.
var InvestigatorTools = []string{"list_directory", "glob", "grep_search", "read_file"}

const investigatorPrompt = `You are codebase_investigator: you explore a code base, read-only, to answer
one question from another agent, and report what you found.

Tools: list_directory, glob, grep_search and read_file look at the code;
scratchpad keeps your notes; submit_report sends your answer.

How to work:
1. Call scratchpad first: what you will look for.
2. Search before you read: grep_search and glob find candidates, read_file
   confirms them. Do not guess file contents.
3. Update scratchpad at least every %d other tool calls: what you have
   explored, what you still need to find.
4. When you know enough, or cannot learn more, call submit_report with:
   - summary: the answer, in a few sentences;
   - relevant_files: each file that matters, with path (relative to the
     project root), reason, and lines (start and end, as read_file
     numbers them);
   - open_questions: what you could not settle ([] if nothing).
Report only files you have seen.`

// InvestigatorOptions configure codebase_investigator.
type InvestigatorOptions struct {
	// Tools holds the read-only tools (InvestigatorTools); others in it
	// are not given to the investigator.
	Tools *tool.Registry
	// Root is the workspace root: the files a report names must exist
	// under it, and its line ranges must start inside them.
	Root string
	// Provider and Model, when set, answer instead of the caller's.
	Provider llm.Provider
	Model    string
	// MaxTurns bounds its model calls (0: 25).
	MaxTurns int
	// Scratchpad is the most tool calls between scratchpad updates (0: 4).
	Scratchpad int
	// Runner runs its turns (conversation.SubAgentRunner stores them).
	Runner Runner
}

// CodebaseInvestigator returns the built-in codebase_investigator: a
// read-only sub-agent that searches and reads the workspace, keeps a
// scratchpad, and answers with an InvestigatorReport.
func CodebaseInvestigator(o InvestigatorOptions) (*SubAgent, error) {
	if o.Tools == nil {
		return nil, errors.New("codebase_investigator: no tools")
	}
	for _, n := range InvestigatorTools {
		t, ok := o.Tools.Get(n)
		if !ok {
			return nil, fmt.Errorf("codebase_investigator needs the %s tool", n)
		}
		if t.Kind() != tool.ReadOnly {
			return nil, fmt.Errorf("codebase_investigator: %s is not read-only", n)
		}
	}
	if o.MaxTurns <= 0 {
		o.MaxTurns = 25
	}
	if o.Scratchpad <= 0 {
		o.Scratchpad = 4
	}
	s := &SubAgent{
		Name: InvestigatorName,
		Description: "Delegate a question about this code base to a read-only investigator: it searches and reads the code " +
			"on its own and returns a JSON report (summary, relevant files with reasons and line ranges, open questions). " +
			"Use it for questions that need several searches (where is X handled, how does Y flow); give it the whole question.",
		System:       fmt.Sprintf(investigatorPrompt, o.Scratchpad),
		Tools:        o.Tools,
		Select:       InvestigatorTools,
		Provider:     o.Provider,
		Model:        o.Model,
		MaxTurns:     o.MaxTurns,
		OutputSchema: investigator.Schema,
		Scratchpad:   o.Scratchpad,
		Runner:       o.Runner,
	}
	if o.Root != "" {
		s.Check = func(report json.RawMessage) error { return checkReportFiles(o.Root, report) }
	}
	return s, nil
}

// checkReportFiles checks that a report's files exist under root and that
// its line ranges are ranges that start inside them.
func checkReportFiles(root string, report json.RawMessage) error {
	var r investigator.Report
	if err := json.Unmarshal(report, &r); err != nil {
		return err
	}
	var problems []string
	for _, f := range r.RelevantFiles {
		p := filepath.Clean(filepath.FromSlash(f.Path))
		if filepath.IsAbs(p) {
			if rel, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(rel, "..") {
				p = rel
			}
		}
		if filepath.IsAbs(p) || p == ".." || strings.HasPrefix(p, ".."+string(filepath.Separator)) {
			problems = append(problems, fmt.Sprintf("%s is not inside the project: give paths relative to its root", f.Path))
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: no such file in the project (report only files you have seen, with their paths from the root)", f.Path))
			continue
		}
		n := countLines(data)
		for _, l := range f.Lines {
			switch {
			case l.End < l.Start:
				problems = append(problems, fmt.Sprintf("%s: lines %d–%d end before they start", f.Path, l.Start, l.End))
			case l.Start > n:
				problems = append(problems, fmt.Sprintf("%s has %d lines: lines %d–%d are past its end", f.Path, n, l.Start, l.End))
			}
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

func countLines(data []byte) int {
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		n++
	}
	return n
}
