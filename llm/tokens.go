package llm

// EstimateTokens guesses the size of a text in tokens where no server count
// is known: about four bytes per token for English and code.
func EstimateTokens(s string) int {
	if s == "" {
		return 0
	}
	return len(s)/4 + 1
}

// MessageTokens estimates one message, with a little for the chat template.
func MessageTokens(m Message) int {
	n := EstimateTokens(m.Content) + EstimateTokens(m.Thinking) + 4
	for _, tc := range m.ToolCalls {
		n += EstimateTokens(tc.Name) + EstimateTokens(string(tc.Args)) + 4
	}
	return n
}

// PromptTokens estimates a prompt: messages and tool definitions.
func PromptTokens(msgs []Message, tools []ToolSpec) int {
	n := 0
	for _, m := range msgs {
		n += MessageTokens(m)
	}
	for _, t := range tools {
		n += EstimateTokens(t.Name) + EstimateTokens(t.Description) + EstimateTokens(string(t.Parameters))
	}
	return n
}
