package lint

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// The rules on instructions aimed at the model: text that addresses the
// model or the conversation rather than describing the tool. They match
// prose (descriptions, titles, instructions) lowercased, with the
// invisible characters taken out, so that "ig<U+200B>nore" is read as the
// model reads it; each reports the first match in a text.

// phrase is one pattern of a rule: the words a match starts with, and
// the pattern, matched at each place one of them stands. A text is read
// once per start word (strings.Index) and the pattern tried only there,
// anchored and on at most maxMatch bytes, so that a megabyte of hostile
// text costs about what a megabyte of prose does.
type phrase struct {
	starts []string
	re     *regexp.Regexp
	// before reports whether the byte before a match may stand there
	// (default: not a letter, digit or _, so that a match starts a word).
	before func(byte) bool
}

// The tables of phrases are made on their first use (sync.OnceValue):
// compiled at init, their patterns cost every start of hosteval, whatever
// the command, 1.7 ms and 0.9 MB.

// maxMatch bounds a match: a phrase never runs past a clause.
const maxMatch = 400

// phrases makes one phrase per pattern, each starting with one of the
// words of starts and at a word's start.
func phrases(starts string, patterns ...string) []phrase {
	var out []phrase
	for _, pat := range patterns {
		out = append(out, phrase{starts: strings.Fields(starts), re: regexp.MustCompile(`^(?:` + pat + `)`), before: notWord})
	}
	return out
}

// literal is a phrase for a fixed text, matched anywhere before which
// before allows, ending where end matches (a regexp tail, "" for none).
func literal(text, end string, before func(byte) bool) phrase {
	return phrase{starts: []string{text}, re: regexp.MustCompile(`^` + regexp.QuoteMeta(text) + end), before: before}
}

func notWord(b byte) bool { return !isWordByte(b) }

func anyByte(byte) bool { return true }

func isWordByte(b byte) bool {
	return b == '_' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || b >= 0x80
}

// find returns the first match of the phrase in s, or false.
func (ph phrase) find(s string) (int, int, bool) {
	best, bestEnd := -1, 0
	for _, st := range ph.starts {
		for off := 0; off < len(s); {
			k := strings.Index(s[off:], st)
			if k < 0 {
				break
			}
			pos := off + k
			off = pos + 1
			if best >= 0 && pos >= best {
				break
			}
			if pos > 0 && !ph.before(s[pos-1]) {
				continue
			}
			if loc := ph.re.FindStringIndex(s[pos:min(len(s), pos+maxMatch)]); loc != nil {
				best, bestEnd = pos, pos+loc[1]
				break
			}
		}
	}
	return best, bestEnd, best >= 0
}

// matchText returns where the first of the phrases matches the folded
// text, as byte offsets of the text, or false.
func matchText(txt *textAt, ps []phrase) (int, int, bool) {
	lower, _ := txt.folded()
	best, bestEnd := -1, 0
	for _, ph := range ps {
		if from, to, ok := ph.find(lower); ok && (best < 0 || from < best) {
			best, bestEnd = from, to
		}
	}
	if best < 0 {
		return 0, 0, false
	}
	return txt.original(best), txt.original(bestEnd), true
}

// proseRule reports the first match of the phrases in every prose text
// (and, with values, in every other string too).
func proseRule(p *run, ps []phrase, values bool, message func(match string) string) {
	p.eachText(func(s *server, t *tool, txt *textAt) {
		if !txt.kind.prose() && !(values && txt.kind == kindValue) {
			return
		}
		if from, to, ok := matchText(txt, ps); ok {
			p.report(s, t, txt, from, quote(txt.text, from, to), message(Visible(txt.text[from:to])))
		}
	})
}

const (
	negation      = `(?:do\s+not|don'?t|never|must\s+not|mustn'?t|should\s+not|shouldn'?t|may\s+not|cannot|without)`
	negationWords = "do don never must mustn should shouldn may cannot without"
	person        = `(?:the\s+|your\s+)?(?:user|human|person|people|customer|operator|requester)s?\b`
	personWords   = "the your user human person people customer operator requester"
	// clause is the rest of a sentence, kept short so that a match stays
	// within one thought.
	clause = `[^.!?\n]{0,60}?`
)

var concealPhrases = sync.OnceValue(func() []phrase {
	return slices.Concat(
		phrases(negationWords,
			negation+`\s+(?:ever\s+)?(?:tell|telling|inform|informing|notify|notifying|alert|alerting|warn|warning|let|letting|ask|asking)\b`+clause+`\b`+person,
			negation+`\s+(?:ever\s+)?(?:mention|mentioning|reveal|revealing|show|showing|disclose|disclosing|say|saying|display|displaying|report|reporting)\b`+clause+`\b(?:to|with)\s+`+person),
		phrases("hid conceal keep withhold", `(?:hide|hiding|conceal|concealing|keep|keeping|withhold|withholding)\b`+clause+`\bfrom\s+`+person),
		phrases(personWords, person+`\s*(?:must|should|need|needs|is\s+not\s+to|are\s+not\s+to)\s+(?:not|never)\s+(?:know|see|notice|find\s+out|be\s+told|learn|be\s+aware)\b`),
		phrases("silently quietly secretly covertly invisibly",
			`(?:silently|quietly|secretly|covertly|invisibly)\s+(?:call|send|include|add|forward|read|upload|copy|pass|attach|share|post|use|invoke|run)\b`),
	)
})

func checkConceal(p *run) {
	proseRule(p, concealPhrases(), false, func(m string) string {
		return fmt.Sprintf("tells the model to keep something from the person: %q", cut(m, 100))
	})
}

var overridePhrases = sync.OnceValue(func() []phrase {
	return slices.Concat(
		phrases("ignore disregard forget override overrule bypass",
			`(?:ignore|disregard|forget|override|overrule|bypass)\s+(?:all\s+|any\s+|every\s+)?(?:of\s+)?(?:the\s+|your\s+|these\s+|those\s+|my\s+)?(?:previous|prior|earlier|above|preceding|former|original|initial|system|other|existing|safety|developer|default)\s+(?:instructions?|rules?|prompts?|guidelines?|directives?|polic(?:y|ies)|constraints?|messages?|context|guidance)\b`,
			`(?:ignore|disregard|forget)\s+(?:all|everything|anything)\s+(?:you|that|else|before|above|previously|prior)\b`),
		phrases("new", `new\s+(?:system\s+)?instructions?\s*:`),
		phrases("you", `you\s+are\s+now\s+(?:a|an|in|the|no\s+longer|free)\b`),
		phrases("these this the", `(?:these|this|the\s+following)\s+instructions?\s+(?:take|takes|have|has)\s+(?:precedence|priority)\b`),
		phrases("supersede override take", `(?:supersedes?|overrides?|takes?\s+precedence\s+over)\s+(?:all\s+|any\s+)?(?:other|previous|prior|system|earlier|user)\b`),
	)
})

func checkOverride(p *run) {
	proseRule(p, overridePhrases(), false, func(m string) string {
		return fmt.Sprintf("tells the model to set aside the instructions it has: %q", cut(m, 100))
	})
}

const (
	callVerb  = `(?:call|use|invoke|run|execute)`
	callWords = "call use invoke run execute"
	thisTool  = `this\s+(?:tool|function)`
	anyTools  = `(?:any|every|all|other|another)\s+(?:other\s+)?(?:tools?|functions?)\b`
)

var priorityPhrases = sync.OnceValue(func() []phrase {
	return slices.Concat(
		phrases("always must should first", `(?:always|must|should|first)\s+`+callVerb+`\s+`+thisTool+`\b`),
		phrases(callWords, callVerb+`\s+`+thisTool+`\s+(?:first|before|instead|prior)\b`),
		phrases("this", thisTool+`\s+(?:must|should)\s+(?:always\s+)?be\s+(?:called|used|invoked|run)\s+(?:first|before|instead)\b`),
		phrases("before", `before\s+(?:calling|using|invoking|running)\s+`+anyTools),
		phrases("never do don", `(?:never|do\s+not|don'?t)\s+`+callVerb+`\s+(?:any\s+)?(?:other|another)\s+(?:tools?|functions?|servers?)\b`),
		phrases("instead", `instead\s+of\s+`+anyTools),
		phrases("prefer always", `(?:prefer|always\s+choose|always\s+pick)\s+`+thisTool+`\s+over\b`),
	)
})

func checkPriority(p *run) {
	proseRule(p, priorityPhrases(), false, func(m string) string {
		return fmt.Sprintf("tells the model to call this tool first or in place of others: %q", cut(m, 100))
	})
}

var markerPhrases = sync.OnceValue(func() []phrase {
	return []phrase{
		{starts: []string{"<"}, before: anyByte, re: regexp.MustCompile(`^<\s*/?\s*(?:important|system|instructions?|admin|critical|secret|hidden|assistant|system[-_ ]?prompt|sys|priority|override)\s*>`)},
		{starts: []string{"["}, before: anyByte, re: regexp.MustCompile(`^\[\s*/?\s*(?:inst|system|sys|important)\s*\]`)},
		{starts: []string{"<|"}, before: anyByte, re: regexp.MustCompile(`^<\|(?:im_start|im_end|system|assistant|user|endoftext)\|>`)},
	}
})

func checkMarkers(p *run) {
	proseRule(p, markerPhrases(), false, func(m string) string {
		return fmt.Sprintf("a marker that dresses text up as instructions to the model: %q", cut(m, 100))
	})
}

// wordEnd ends a literal at the end of a word.
const wordEnd = `\b`

// notPathWord allows what may stand before a dot file's name: not a
// letter, digit, _, ., $ or - (process.env is no file).
func notPathWord(b byte) bool { return notWord(b) && b != '.' && b != '$' && b != '-' }

var secretPhrases = sync.OnceValue(func() []phrase {
	return []phrase{
		literal("~/.ssh", wordEnd, anyByte), literal(".ssh/", "", anyByte),
		{starts: []string{"id_"}, before: notWord, re: regexp.MustCompile(`^id_(?:rsa|dsa|ecdsa|ed25519)\b`)},
		literal("authorized_keys", wordEnd, notWord),
		{starts: []string{".env"}, before: notPathWord, re: regexp.MustCompile(`^\.env(?:\.[a-z]+)?\b`)},
		{starts: []string{".aws/"}, before: anyByte, re: regexp.MustCompile(`^\.aws/(?:credentials|config)\b`)},
		literal("aws_secret_access_key", wordEnd, notWord),
		literal(".config/gcloud", wordEnd, anyByte), literal("application_default_credentials.json", wordEnd, notWord),
		literal(".azure/", "", anyByte), literal(".kube/config", wordEnd, anyByte), literal(".docker/config.json", wordEnd, anyByte),
		literal(".npmrc", wordEnd, anyByte), literal(".pypirc", wordEnd, anyByte), literal(".netrc", wordEnd, anyByte),
		literal(".git-credentials", wordEnd, anyByte), literal(".pgpass", wordEnd, anyByte), literal("/etc/shadow", wordEnd, anyByte),
		literal("/etc/passwd", wordEnd, anyByte), literal(".gnupg", wordEnd, anyByte), literal("wallet.dat", wordEnd, notWord),
		literal("mcp.json", wordEnd, notWord), literal("claude_desktop_config.json", wordEnd, notWord), literal("mcp_config.json", wordEnd, notWord),
		literal("mcp_settings.json", wordEnd, notWord), literal("cline_mcp_settings.json", wordEnd, notWord), literal(".cursor/", "", anyByte),
		literal(".claude.json", wordEnd, anyByte), literal(".claude/", "", anyByte), literal(".codeium/", "", anyByte), literal(".vscode/mcp", wordEnd, anyByte),
	}
})

func checkSecrets(p *run) {
	proseRule(p, secretPhrases(), true, func(m string) string {
		return fmt.Sprintf("names a secret or credential file, or another client's MCP configuration: %q", cut(strings.TrimSpace(m), 100))
	})
}

// conversationNames are parameter names that ask, by themselves, for the
// conversation (compared lowercased, without _ and -).
var conversationNames = map[string]bool{"conversation": true, "conversationhistory": true, "chathistory": true,
	"messagehistory": true, "transcript": true, "systemprompt": true, "previousmessages": true, "allmessages": true,
	"fullcontext": true, "chatlog": true, "conversationcontext": true}

var wantsConversation = sync.OnceValue(func() []phrase {
	return slices.Concat(
		phrases("entire full whole complete all previous prior past earlier recent",
			`(?:entire|full|whole|complete|all(?:\s+of)?(?:\s+the)?|previous|prior|past|earlier|recent)\s+(?:conversation|chat|messages?|discussion|transcript|context|history|dialog(?:ue)?|interactions?)\b`),
		phrases("conversation chat message dialog", `(?:conversation|chat|message|dialog(?:ue)?)\s+(?:history|log|transcript|so\s+far)\b`),
		phrases("system", `system\s+prompt\b`),
		phrases("your the", `(?:your|the\s+model's|the\s+assistant's)\s+(?:instructions|context\s+window)\b`),
		phrases("content text", `(?:content|contents|text)\s+of\s+(?:any|all|every|the\s+user's|other|each)\s+(?:files?|documents?)\b`),
		phrases("read include paste attach put pass provide send",
			`(?:read|include|paste|attach|put|pass|provide|send)\b[^.\n]{0,40}\b(?:files?|documents?)'?\s+(?:content|contents|text)\b`),
	)
})

// nameFold takes _ and - out of a name.
var nameFold = strings.NewReplacer("_", "", "-", "")

// toParameter is what a tool description says when it asks for something
// to be put into an argument.
var toParameter = sync.OnceValue(func() []phrase {
	return phrases("parameter argument field param", `(?:parameter|argument|field|param)\b`)
})

func checkExfiltration(p *run) {
	for _, t := range p.tools() {
		for _, prop := range t.properties() {
			name := nameFold.Replace(strings.ToLower(prop.name))
			txt := t.paramText(prop.name)
			if conversationNames[name] {
				key := t.textOf("/inputSchema/properties/"+escapePointer(prop.name), kindParam)
				p.report(t.server, t, key, 0, quoteAll(prop.name),
					fmt.Sprintf("the parameter %s asks, by its name, for the conversation: a tool's job seldom needs it, and it leaves the host in the arguments", prop.name))
				continue
			}
			if txt == nil {
				continue
			}
			if from, to, ok := matchText(txt, wantsConversation()); ok {
				p.report(t.server, t, txt, from, quote(txt.text, from, to),
					fmt.Sprintf("the parameter %s asks for the conversation, the model's instructions or files' contents: %q", prop.name, cut(Visible(txt.text[from:to]), 80)))
			}
		}
		// A description that tells the model what to put in an argument.
		if txt := t.textOf("/description", kindDescription); txt != nil {
			if _, _, ok := matchText(txt, toParameter()); ok {
				if from, to, ok := matchText(txt, wantsConversation()); ok {
					p.report(t.server, t, txt, from, quote(txt.text, from, to),
						fmt.Sprintf("the description asks for the conversation, the model's instructions or files' contents in an argument: %q", cut(Visible(txt.text[from:to]), 80)))
				}
			}
		}
	}
}
