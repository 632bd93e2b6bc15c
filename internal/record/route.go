package record

// Route is the routing verdict of a case made from a dataset row: which tool
// the row expected, which the model proposed, and whether that was right by
// the row's match rule. The routing figures (per-tool precision and recall,
// the confusion matrix, paired A/B by row) are computed by internal/report
// from these alone, so they are rebuilt from records.jsonl like every other
// figure. Absent on cases that do not come from a dataset row.
type Route struct {
	// Row is the row's id (its line in the dataset file when it has none);
	// Source is where it was read, as "file:line".
	Row    string `json:"row"`
	Source string `json:"source,omitempty"`
	// Mode is RouteOnly when the case ended at the model's first answer with
	// nothing sent, RouteFull when the whole loop ran.
	Mode string `json:"mode"`
	// Match is the row's rule: MatchFirst, MatchAny, MatchAll or MatchExact.
	Match string `json:"match"`
	// Expected are the namespaced tools the row expects; empty means the right
	// answer is to call no tool (the NoTool class).
	Expected []string `json:"expected"`
	Forbid   []string `json:"forbid,omitempty"`
	// Proposed are the names the model proposed, in order, as written (an
	// unknown name included): the first answer's calls in route mode, every
	// call of the case in full mode.
	Proposed []string `json:"proposed"`
	// Chosen is the class the confusion matrix counts for this case: the first
	// proposed tool, NoTool when the model called none, UnknownTool when the
	// first name is not in the host's table.
	Chosen string `json:"chosen"`
	// Correct is the row's verdict: the match rule held and no forbidden tool
	// was proposed.
	Correct bool `json:"correct"`
	// ArgsOK is whether the arguments of the right call met the row's args;
	// nil when the row gives none or no right call was proposed. ArgsDetail
	// says what differed.
	ArgsOK     *bool    `json:"args_ok,omitempty"`
	ArgsDetail string   `json:"args_detail,omitempty"`
	Tags       []string `json:"tags,omitempty"`
	// Distractors is how many other tools the catalog axis added to the
	// table (0 without `distractors:`); Tools and DefTokens are what the
	// model was offered: tool count and tool-definition tokens per request.
	Distractors int `json:"distractors"`
	Tools       int `json:"tools"`
	DefTokens   int `json:"def_tokens"`
	// Target is the accuracy the scenario asks of its configurations (the
	// `target:` of its `distractors:` block), 0 when it names none: the
	// reports name the configuration with the fewest tool-definition
	// tokens whose accuracy reaches it.
	Target float64 `json:"target,omitempty"`
	// Lexical is true when the proposal came from the lexical router (a
	// proxy reading descriptions, never a model); Ranks are its top ranks.
	Lexical bool   `json:"lexical,omitempty"`
	Ranks   []Rank `json:"ranks,omitempty"`
}

// Rank is one tool in the lexical router's ranking of a question.
type Rank struct {
	Tool  string  `json:"tool"`
	Score float64 `json:"score"`
}

// Route modes.
const (
	RouteOnly = "route"
	RouteFull = "full"
)

// Match rules of a dataset row.
const (
	MatchFirst = "first" // the first proposed call is one of the expected tools
	MatchAny   = "any"   // some proposed call is one of them
	MatchAll   = "all"   // every expected tool was proposed
	MatchExact = "exact" // the set of tools proposed equals the expected set
)

// Classes of the confusion matrix beside the tools themselves.
const (
	NoTool      = "(no tool)"
	UnknownTool = "(unknown tool)"
)
