package lint

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Cross-server shadowing: a server's text that names another server's
// tools, or tells the model how to use other tools, steers calls the
// person approved for another server. A server names its own tools freely;
// the same catalog under two names (one server twice in a servers file) is
// one server.

// distinctive reports whether a tool name is unlikely to be an ordinary
// word of a description: it has a separator, a digit or an inner capital
// (send_email, get-env, readFile), and four characters or more.
func distinctive(name string) bool {
	if utf8.RuneCountInString(name) < 4 {
		return false
	}
	prev := rune(0)
	for _, r := range name {
		switch {
		case r == '_' || r == '-' || r == '.' || unicode.IsDigit(r):
			return true
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			return true
		}
		prev = r
	}
	return false
}

// identifiers splits a text into the runs that could be a tool name:
// letters, digits, _, - and . (a trailing . or - is punctuation), with
// their byte offsets.
func identifiers(s string, fn func(word string, at int)) {
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		w := strings.TrimRight(s[start:end], ".-")
		if w != "" {
			fn(w, start)
		}
		start = -1
	}
	for i, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-' || r == '.' {
			if start < 0 {
				start = i
			}
			continue
		}
		flush(i)
	}
	flush(len(s))
}

var otherToolsPhrases = sync.OnceValue(func() []phrase {
	return slices.Concat(
		phrases("when whenever each every if after before",
			`(?:when|whenever|each\s+time|every\s+time|if|after|before)\b[^.!?\n]{0,30}?\b(?:other|another|any|every|all)\s+(?:other\s+)?(?:tools?|functions?|servers?)\b[^.!?\n]{0,40}?\b(?:always|must|should|also|first|add|include|set|send|pass|use|call|copy|forward)\b`),
		phrases("for with", `(?:for|with)\s+(?:all|every|any)\s+(?:other\s+)?(?:tools?|functions?|servers?)\b[^.!?\n]{0,20}?,\s*(?:always|also|first|add|include|set|send|pass|use|call)\b`),
	)
})

func checkShadowing(p *run) {
	// owners are the servers whose tools carry each name; namespaced the
	// host's names.
	owners := map[string][]*server{}
	namespaced := map[string]*server{}
	type mention struct {
		word   string
		server *server
		re     *regexp.Regexp
	}
	var mentions []mention
	for _, s := range p.linted() {
		for _, t := range s.tools {
			if t.name != "" {
				owners[t.name] = append(owners[t.name], s)
				namespaced[p.opts.Namespace(s.Name, t.name)] = s
			}
		}
		if len(s.Name) >= 3 {
			w := strings.ToLower(s.Name)
			mentions = append(mentions, mention{w, s, serverMention(w)})
		}
	}
	p.eachText(func(s *server, t *tool, txt *textAt) {
		if !txt.kind.prose() {
			return
		}
		done := false
		identifiers(txt.text, func(w string, at int) {
			if done {
				return
			}
			if other, ok := namespaced[w]; ok && other != s {
				p.report(s, t, txt, at, quote(txt.text, at, at+len(w)),
					fmt.Sprintf("names %s, a tool of the server %s: a server's text that steers another's tools", w, other.Name))
				done = true
				return
			}
			if s.names[w] || !distinctive(w) {
				return
			}
			for _, other := range owners[w] {
				if other != s {
					p.report(s, t, txt, at, quote(txt.text, at, at+len(w)),
						fmt.Sprintf("names %s, a tool of the server %s (not of %s): a server's text that steers another's tools", w, other.Name, s.Name))
					done = true
					return
				}
			}
		})
		if done {
			return
		}
		if from, to, ok := matchText(txt, otherToolsPhrases()); ok {
			p.report(s, t, txt, from, quote(txt.text, from, to),
				fmt.Sprintf("tells the model how to use other tools: %q", cut(Visible(txt.text[from:to]), 100)))
			return
		}
		// "the <server> server" or "<server> tools", for another server.
		lower, _ := txt.folded()
		for _, m := range mentions {
			other := m.server
			if other == s || !strings.Contains(lower, m.word) {
				continue
			}
			if loc := m.re.FindStringIndex(lower); loc != nil {
				from, to := txt.original(loc[0]), txt.original(loc[1])
				p.report(s, t, txt, from, quote(txt.text, from, to),
					fmt.Sprintf("speaks of the server %s: %q", other.Name, cut(Visible(txt.text[from:to]), 80)))
				return
			}
		}
	})
}

// serverMention matches a server's name used as one: "the mail server",
// "mail's tools", "the mail mcp".
func serverMention(name string) *regexp.Regexp {
	return regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `(?:'s)?\s+(?:server|tools?|mcp|functions?)\b`)
}
