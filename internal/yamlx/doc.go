// Package yamlx is hosteval's one strict YAML reader: scenario files,
// servers files, gates files and chat scripts are all read by it, so they
// all report every problem at once, each with file:line (and column), the
// field's path ("expect[2].tool") and, for an unknown field, the closest
// known name ("did you mean ...").
//
// A file is declared as Go structs with yaml tags; the reader walks the
// parsed nodes (gopkg.in/yaml.v3) and the struct types together:
//
//	type hostDoc struct {
//		ToolTimeout *duration `yaml:"tool_timeout" doc:"How long one round of a call may take." example:"2s"`
//		MaxSteps    *int      `yaml:"max_steps" min:"1" doc:"Model requests per turn at most."`
//		Protocol    *protocol `yaml:"protocol" doc:"..."`
//	}
//
// Wrong kinds ("want a list, got a mapping"), unknown fields, fields that
// are `required:"true"` but not written, numbers under `min`, and values of
// an [Enum] type outside its list are problems. An empty value (key: with
// nothing, ~) counts as not written. Merge keys (<<: *anchor) apply; a
// key written in the mapping wins over a merged one. What a value means
// (a duration that must be positive, a regular expression, a name that
// must refer to a server, a number or a {min, max} range, ${VAR}) is the
// business of small hand-written hooks: a type that implements
// [Unmarshaler] reads itself from its [Node] and reports its own problems.
// A [Problem] is typed, so a check outside this package (a model's
// configuration) returns one naming a path, and [Node.Locate] places it
// on the line that path was read from; nothing is parsed back out of
// error text.
//
// The same struct types give the published schema: [Schema] reflects them
// into a JSON Schema (draft 2020-12), with each field's `doc` tag as its
// description and `example` tag as its example, required fields, enums,
// minimums and additionalProperties: false, so that an editor completes
// and checks a file from the very rules that load it.
//
// # Aliases
//
// An alias is resolved to the node it names, never copied, and a document
// may reach at most [AliasBudget] nodes through its aliases: reaching an
// alias costs the size of its value with the aliases inside expanded.
// Sizes are computed once per node before anything is decoded, so a
// document over the budget, such as a "billion laughs" file of nested
// aliases in any field (free-form values included), is refused with one
// problem ("too many alias expansions", naming the file and the line of
// the alias that passes the budget) in time and memory linear in its
// text, without expanding anything. An alias inside its own value counts
// as endless.
package yamlx
