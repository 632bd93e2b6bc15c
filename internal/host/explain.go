package host

import (
	"fmt"
	"strings"

	"github.com/hosteval/hosteval/internal/record"

	"github.com/hosteval/hosteval/internal/text"
)

// Explain says in one sentence, for the person, what became of a call. The
// model reads the host's texts ("error: ..." with what to do next); a
// person at a terminal or a page reads this: who did what, and whether
// anything reached a server.
func Explain(ev record.Call) string {
	what := ev.Tool + " on " + ev.Server
	switch ev.Outcome {
	case record.OutcomeOK:
		s := fmt.Sprintf("%s answered: %s went back to the model", what, text.Count(ev.ResultBytes, "byte"))
		if ev.Clipped {
			s += fmt.Sprintf(", cut from %d to the result budget", ev.RawBytes)
		}
		return s + "."
	case record.OutcomeToolError:
		return fmt.Sprintf("%s reported a failure: %s", what, sentence(ev.Error))
	case record.OutcomeUnknownTool:
		return fmt.Sprintf("No tool is named %q, so nothing was sent.", ev.Name)
	case record.OutcomeBadArguments:
		return "Nothing was sent: " + sentence(firstSentence(ev.Error))
	case record.OutcomeDenied:
		return fmt.Sprintf("Not approved, so nothing was sent to %s.", ev.Server)
	case record.OutcomeTimeout:
		return fmt.Sprintf("%s did not answer in time; it may still finish the work.", what)
	}
	return "The call failed: " + sentence(ev.Error)
}

// firstSentence drops what follows the first sentence: the advice to the
// model ("Send one JSON object, ...").
func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i]
	}
	return s
}

// sentence ends s with a full stop, unless it ends a sentence already.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "no reason given."
	}
	if strings.ContainsAny(s[len(s)-1:], ".!?)") {
		return s
	}
	return s + "."
}
