package hearth

import "github.com/hearth-agent/hearth/agent"

// EventThinkingReclassified says that the answer text the current model
// reply streamed so far was reasoning after all (docs/events.md): a front end
// moves it from the answer it shows to the reasoning.
const EventThinkingReclassified = agent.EventThinkingReclassified
