package conversation

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/internal/pricing"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/session"
)

// titleQuestion is the side question that asks the model for a title.
const titleQuestion = "Write a title of at most six words for this conversation so far. Reply with the title only, nothing else."

// Title asks the model for a title of session id, if it still has the
// provisional one its first prompt gave it (ProvisionalTitle) or none, and
// stores it; it returns the session's title, new or as it was. A session
// the model has not answered yet keeps its title.
//
// The question goes to a (its model answers) with the conversation exactly as the session's
// next turn would send it (agent.Ask), so that a server that caches the
// previous prompt evaluates only the question, and the conversation stays
// in its cache for the next turn. A title the user gave while the model
// was asked is kept. The question's model call is recorded in the session,
// with its cost at prices (an error recording it comes with the title).
func Title(ctx context.Context, st session.Store, a *agent.Agent, id string, prices map[string]pricing.Rates) (string, error) {
	sess, err := st.Get(ctx, id)
	if err != nil {
		return "", err
	}
	live, err := st.LiveMessages(ctx, id)
	if err != nil {
		return sess.Title, err
	}
	answered := false
	for _, m := range live {
		if m.Role == llm.RoleAssistant && !m.Failure && strings.TrimSpace(m.Content) != "" {
			answered = true
			break
		}
	}
	if !answered {
		return sess.Title, nil
	}
	provisional, err := provisionalOf(ctx, st, id, live)
	if err != nil {
		return sess.Title, err
	}
	if sess.Title != "" && sess.Title != provisional {
		return sess.Title, nil // the model's already, or the user's
	}
	m := &meter{st: st, id: id, prices: prices}
	var recErr error
	text, err := a.Ask(ctx, session.History(live), titleQuestion, agent.AskOptions{MaxTokens: 32, NoThink: true,
		OnUsage: func(u llm.Usage) {
			if _, err := m.record(ctx, a.Model, u); err != nil {
				recErr = errors.Join(recErr, fmt.Errorf("recording the title's usage: %w", err))
			}
		}})
	if err != nil {
		return sess.Title, errors.Join(fmt.Errorf("asking the model for a title: %w", err), recErr)
	}
	title, err := storeTitle(ctx, st, id, sess.Title, text)
	return title, errors.Join(err, recErr)
}

// storeTitle keeps the model's answer text as the title of session id,
// which had title old when the model was asked, unless the user renamed it
// meanwhile; it returns the session's title.
func storeTitle(ctx context.Context, st session.Store, id, old, text string) (string, error) {
	title := cleanTitle(text)
	if title == "" {
		return old, fmt.Errorf("asking the model for a title: %w", agent.ErrNoAnswer)
	}
	// The user may have renamed the session meanwhile: theirs stands.
	now, err := st.Get(context.WithoutCancel(ctx), id)
	if err != nil {
		return old, err
	}
	if now.Title != old {
		return now.Title, nil
	}
	if err := st.Rename(context.WithoutCancel(ctx), id, title); err != nil {
		return old, err
	}
	return title, nil
}

// provisionalOf is the provisional title of the session: that of its first
// prompt. live are its live messages; the first prompt may have been
// compacted away from them, and is then read from the whole record.
func provisionalOf(ctx context.Context, st session.Store, id string, live []session.Message) (string, error) {
	first := func(msgs []session.Message) (string, bool) {
		for _, m := range msgs {
			if m.Role == llm.RoleUser && !m.Failure {
				return m.Content, true
			}
		}
		return "", false
	}
	if len(live) > 0 && !strings.HasPrefix(live[0].Content, agent.SummaryPrefix) {
		if p, ok := first(live); ok {
			return ProvisionalTitle(p), nil
		}
	}
	all, err := st.Messages(ctx, id)
	if err != nil {
		return "", err
	}
	if p, ok := first(all); ok {
		return ProvisionalTitle(p), nil
	}
	return "", errors.New("the session has no prompt")
}
