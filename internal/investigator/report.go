// Package investigator holds the report of codebase_investigator, the
// built-in sub-agent that explores a code base read-only: its Go types and
// the JSON Schema the report is checked against. It is product code, not
// API: the report reaches programs as JSON (the tool's output).
package investigator

import "encoding/json"

// Report is the investigator's result (its JSON is the tool's
// output).
type Report struct {
	// Summary answers the question in a few sentences.
	Summary string `json:"summary"`
	// RelevantFiles are the files that matter, with why and where.
	RelevantFiles []RelevantFile `json:"relevant_files"`
	// OpenQuestions are what it could not settle.
	OpenQuestions []string `json:"open_questions"`
}

// RelevantFile is one file of a report.
type RelevantFile struct {
	// Path is relative to the workspace root.
	Path   string      `json:"path"`
	Reason string      `json:"reason"`
	Lines  []LineRange `json:"lines,omitempty"`
}

// LineRange is a span of lines, from 1, both ends included.
type LineRange struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// Schema is the JSON Schema of Report, which the
// investigator's report is checked against.
var Schema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "summary": {"type": "string", "minLength": 1, "description": "the answer to the question, in a few sentences"},
    "relevant_files": {
      "type": "array",
      "description": "the files that matter, most important first",
      "items": {
        "type": "object",
        "properties": {
          "path": {"type": "string", "minLength": 1, "description": "path relative to the project root"},
          "reason": {"type": "string", "minLength": 1, "description": "why this file matters"},
          "lines": {
            "type": "array",
            "description": "the line ranges that matter, as read_file numbers them",
            "items": {
              "type": "object",
              "properties": {"start": {"type": "integer", "minimum": 1}, "end": {"type": "integer", "minimum": 1}},
              "required": ["start", "end"]
            }
          }
        },
        "required": ["path", "reason"]
      }
    },
    "open_questions": {"type": "array", "items": {"type": "string"}, "description": "what you could not settle; empty if nothing"}
  },
  "required": ["summary", "relevant_files", "open_questions"]
}`)
